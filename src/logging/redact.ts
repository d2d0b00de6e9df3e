// Secrets never reach a log line: these keys are redacted at any depth, whatever their casing,
// and bearer/basic credentials are masked inside free text.
const SECRET_KEYS = new Set([
  'password',
  'internalpassword',
  'authtoken',
  'refreshtoken',
  'authorization',
  'clientsecret',
]);
const CREDENTIAL_IN_TEXT = /\b(Bearer|Basic|Signature)\s+[^\s,"]+/gi;

export const REDACTED = '[REDACTED]';

export function isSecretKey(key: string): boolean {
  return SECRET_KEYS.has(key.toLowerCase());
}

export function redactText(text: string): string {
  return text.replace(CREDENTIAL_IN_TEXT, `$1 ${REDACTED}`);
}

export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactText(value);
  if (value === null || typeof value !== 'object' || depth > 8) return value;
  if (value instanceof Error) {
    return {
      type: value.name,
      message: redactText(value.message),
      stack: value.stack && redactText(value.stack),
    };
  }
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    out[key] =
      isSecretKey(key) && inner !== null && inner !== undefined ? REDACTED : redact(inner, depth + 1);
  }
  return out;
}
