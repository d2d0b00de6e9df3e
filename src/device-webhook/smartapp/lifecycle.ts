// The SmartApp webhook lifecycles (SmartThings developer docs, "Lifecycles") and the two spellings of the field
// that names them: `lifecycle` in lifecycle calls, `messageType` in CONFIRMATION and newer event deliveries.

export const LIFECYCLES = [
  'PING',
  'CONFIRMATION',
  'CONFIGURATION',
  'INSTALL',
  'UPDATE',
  'EVENT',
  'OAUTH_CALLBACK',
  'UNINSTALL',
] as const;
export type Lifecycle = (typeof LIFECYCLES)[number];

export function isLifecycle(value: string): value is Lifecycle {
  return (LIFECYCLES as readonly string[]).includes(value);
}

function valueOf(body: Record<string, unknown>, folded: string): unknown {
  const key = Object.keys(body).find((name) => name.toLowerCase() === folded);
  return key === undefined ? undefined : body[key];
}

/**
 * The lifecycle a parsed body names, upper-cased (`lifecycle` first, else `messageType`, keys in any case), or
 * undefined when it names none. Used before validation, e.g. to let PING through without a signature.
 */
export function lifecycleOf(body: unknown): string | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const record = body as Record<string, unknown>;
  for (const field of ['lifecycle', 'messagetype']) {
    const value = valueOf(record, field);
    if (typeof value === 'string' && value.trim() !== '') return value.trim().toUpperCase();
  }
  return undefined;
}

/**
 * Whether the service may GET a CONFIRMATION's confirmationUrl itself: https on smartthings.com or a subdomain
 * (SmartThings' hosts), or the origin the service already trusts as its SmartThings API. Anything else is only logged for
 * an operator, so a signed-but-odd request cannot make the service fetch arbitrary URLs.
 */
export function isTrustedConfirmationUrl(url: string, apiUrl: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.username !== '' || parsed.password !== '') return false;
  const host = parsed.hostname.toLowerCase();
  if (parsed.protocol === 'https:' && (host === 'smartthings.com' || host.endsWith('.smartthings.com'))) {
    return true;
  }
  try {
    return parsed.origin === new URL(apiUrl).origin;
  } catch {
    return false;
  }
}
