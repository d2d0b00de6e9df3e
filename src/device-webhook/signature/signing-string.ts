// Builds the signing string of draft-cavage-http-signatures-12 §2.3 ("Signature String Construction").

/** Node/Fastify style header bag: any key case, repeated headers as arrays. */
export type HeaderBag = Readonly<Record<string, string | readonly string[] | undefined>>;

export interface SigningStringInput {
  method: string;
  /** Path plus query exactly as it appeared on the request line (no decoding, no normalisation). */
  path: string;
  headers: HeaderBag;
  /** Names as listed in the `headers` signature parameter, in order. */
  signedHeaderNames: readonly string[];
  /** The `created` / `expires` signature parameters, needed only when `(created)` / `(expires)` are signed. */
  created?: number;
  expires?: number;
}

export type SigningStringErrorCode = 'missing-header' | 'missing-parameter';

export type SigningStringResult =
  | { ok: true; value: string }
  | { ok: false; error: { code: SigningStringErrorCode; name: string; message: string } };

/**
 * All values of one header, case-insensitively, each with optional whitespace trimmed (§2.3 step 3).
 * Returns undefined when the request does not carry the header at all.
 */
export function headerValues(headers: HeaderBag, name: string): string[] | undefined {
  const wanted = name.toLowerCase();
  const values: string[] = [];
  let found = false;
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== wanted || value === undefined) continue;
    found = true;
    if (typeof value === 'string') values.push(value.trim());
    else for (const item of value) values.push(item.trim());
  }
  return found ? values : undefined;
}

export function buildSigningString(input: SigningStringInput): SigningStringResult {
  const lines: string[] = [];
  for (const rawName of input.signedHeaderNames) {
    const name = rawName.toLowerCase();
    if (name === '(request-target)') {
      lines.push(`${name}: ${input.method.toLowerCase()} ${input.path}`);
      continue;
    }
    if (name === '(created)' || name === '(expires)') {
      const value = name === '(created)' ? input.created : input.expires;
      if (value === undefined) {
        return {
          ok: false,
          error: {
            code: 'missing-parameter',
            name,
            message: `${name} is signed but the parameter is absent`,
          },
        };
      }
      lines.push(`${name}: ${String(value)}`);
      continue;
    }
    const values = headerValues(input.headers, name);
    // §2.3: a listed header that the message lacks MUST be an error, never an empty line.
    if (values === undefined || values.length === 0) {
      return {
        ok: false,
        error: { code: 'missing-header', name, message: `signed header ${name} is not on the request` },
      };
    }
    lines.push(`${name}: ${values.join(', ')}`);
  }
  return { ok: true, value: lines.join('\n') };
}
