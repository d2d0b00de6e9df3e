// How a secret field of ensureSmtpConfiguration is read. Absent, null or a placeholder keeps the stored
// secret (clients echo back what they were shown instead of resending it); an empty string removes it.
export const PASSWORD_PLACEHOLDER = '<PASSWORD>';
export const INTERNAL_PASSWORD_PLACEHOLDER = '<INTERNAL_PASSWORD>';

const PLACEHOLDERS: ReadonlySet<string> = new Set([PASSWORD_PLACEHOLDER, INTERNAL_PASSWORD_PLACEHOLDER]);

export type SecretInput = { kind: 'keep' } | { kind: 'clear' } | { kind: 'set'; value: string };

export function readSecretInput(value: string | null | undefined): SecretInput {
  if (value === undefined || value === null) return { kind: 'keep' };
  // Either placeholder keeps either secret: a client that mixes them up must not store "<PASSWORD>" as a password.
  if (PLACEHOLDERS.has(value.trim())) return { kind: 'keep' };
  if (value === '') return { kind: 'clear' };
  return { kind: 'set', value };
}
