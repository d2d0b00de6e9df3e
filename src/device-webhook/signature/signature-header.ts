// Parses the `Authorization: Signature …` header of draft-cavage-http-signatures-12 §2.1 / §4.1 (the scheme
// SmartThings signs webhook calls with). Framework-free on purpose (eslint.config.js, PURE_FOLDERS).

export interface ParsedSignature {
  keyId: string;
  /** Lower-cased; undefined when the sender omitted it (cavage-12 §2.1.3 makes it optional). */
  algorithm: string | undefined;
  /** Lower-cased header names in signing order; cavage-12 §2.1.6 default `(created)` when absent. */
  headers: string[];
  signature: Buffer;
  /** Unix seconds, cavage-12 §2.1.4/§2.1.5; only present when the sender sent them. */
  created?: number;
  expires?: number;
}

export type SignatureParseErrorCode =
  | 'not-signature-scheme'
  | 'syntax'
  | 'duplicate-parameter'
  | 'missing-key-id'
  | 'missing-signature'
  | 'invalid-signature-encoding'
  | 'invalid-headers'
  | 'invalid-timestamp';

export interface SignatureParseError {
  code: SignatureParseErrorCode;
  message: string;
}

export type SignatureParseResult =
  { ok: true; value: ParsedSignature } | { ok: false; error: SignatureParseError };

const SCHEME = /^\s*signature(?:\s+|$)/i;
const PARAM_NAME = /^[A-Za-z][A-Za-z0-9_-]*/;
// Strict base64 so a truncated or url-safe value fails here instead of being silently mis-decoded by Buffer.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const UNIX_SECONDS = /^\d{1,15}(?:\.\d+)?$/;

function fail(code: SignatureParseErrorCode, message: string): SignatureParseResult {
  return { ok: false, error: { code, message } };
}

/** Splits `k="v", k2=v2` into raw pairs; quoted values may contain commas and `\"` escapes (RFC 7230 quoted-string). */
function tokenizeParams(input: string): Map<string, string> | SignatureParseError {
  const params = new Map<string, string>();
  let i = 0;
  const skipWhitespace = (): void => {
    while (i < input.length && /\s/.test(input[i] ?? '')) i++;
  };
  while (i < input.length) {
    skipWhitespace();
    // Empty list elements (`a="1",,b="2"`, a trailing comma) are allowed by the RFC 7230 #rule.
    if (input[i] === ',') {
      i++;
      continue;
    }
    if (i >= input.length) break;
    const nameMatch = PARAM_NAME.exec(input.slice(i));
    if (nameMatch === null) return { code: 'syntax', message: `unexpected character at offset ${String(i)}` };
    const name = nameMatch[0].toLowerCase();
    i += nameMatch[0].length;
    skipWhitespace();
    if (input[i] !== '=') return { code: 'syntax', message: `parameter ${nameMatch[0]} has no value` };
    i++;
    skipWhitespace();
    let value = '';
    if (input[i] === '"') {
      i++;
      let closed = false;
      while (i < input.length) {
        const ch = input[i] ?? '';
        if (ch === '\\' && i + 1 < input.length) {
          value += input[i + 1] ?? '';
          i += 2;
          continue;
        }
        if (ch === '"') {
          closed = true;
          i++;
          break;
        }
        value += ch;
        i++;
      }
      if (!closed) return { code: 'syntax', message: `unterminated quoted value for ${nameMatch[0]}` };
    } else {
      const start = i;
      while (i < input.length && input[i] !== ',' && !/\s/.test(input[i] ?? '')) i++;
      value = input.slice(start, i);
      if (value.length === 0)
        return { code: 'syntax', message: `parameter ${nameMatch[0]} has an empty value` };
    }
    // An attacker-chosen duplicate would make "which one wins" an interpretation gap between parsers.
    if (params.has(name))
      return { code: 'duplicate-parameter', message: `parameter ${nameMatch[0]} repeated` };
    params.set(name, value);
    skipWhitespace();
    if (i < input.length && input[i] !== ',') {
      return { code: 'syntax', message: `expected "," after parameter ${nameMatch[0]}` };
    }
  }
  return params;
}

function parseTimestamp(raw: string | undefined, name: string): number | undefined | SignatureParseError {
  if (raw === undefined) return undefined;
  if (!UNIX_SECONDS.test(raw)) return { code: 'invalid-timestamp', message: `${name} is not a Unix time` };
  return Number(raw);
}

function isError(value: unknown): value is SignatureParseError {
  return typeof value === 'object' && value !== null && 'code' in value && 'message' in value;
}

/**
 * Parses an Authorization header value such as
 * `Signature keyId="/pl/useast2/…",signature="…",headers="(request-target) digest date",algorithm="rsa-sha256"`.
 * Parameter names are matched case-insensitively and unknown parameters are ignored (cavage-12 §2.2).
 */
export function parseSignatureHeader(authorization: string): SignatureParseResult {
  const scheme = SCHEME.exec(authorization);
  if (scheme === null) return fail('not-signature-scheme', 'Authorization scheme is not "Signature"');
  const params = tokenizeParams(authorization.slice(scheme[0].length));
  if (isError(params)) return { ok: false, error: params };

  const keyId = params.get('keyid');
  if (keyId === undefined || keyId.length === 0) return fail('missing-key-id', 'keyId parameter is missing');
  const rawSignature = params.get('signature');
  if (rawSignature === undefined || rawSignature.length === 0) {
    return fail('missing-signature', 'signature parameter is missing');
  }
  if (!BASE64.test(rawSignature)) return fail('invalid-signature-encoding', 'signature is not base64');

  const rawHeaders = params.get('headers');
  let headers: string[];
  if (rawHeaders === undefined) {
    headers = ['(created)'];
  } else {
    headers = rawHeaders
      .split(/\s+/)
      .filter((name) => name.length > 0)
      .map((name) => name.toLowerCase());
    if (headers.length === 0) return fail('invalid-headers', 'headers parameter is empty');
  }

  const created = parseTimestamp(params.get('created'), 'created');
  if (isError(created)) return { ok: false, error: created };
  const expires = parseTimestamp(params.get('expires'), 'expires');
  if (isError(expires)) return { ok: false, error: expires };

  const algorithm = params.get('algorithm')?.toLowerCase();
  const value: ParsedSignature = {
    keyId,
    algorithm: algorithm === undefined || algorithm.length === 0 ? undefined : algorithm,
    headers,
    signature: Buffer.from(rawSignature, 'base64'),
  };
  if (created !== undefined) value.created = created;
  if (expires !== undefined) value.expires = expires;
  return { ok: true, value };
}
