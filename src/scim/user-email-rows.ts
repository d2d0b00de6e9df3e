// The rows of scim_user_emails for one user (entities/scim-user-email.entity.ts): one per element of the stored
// `emails` that is a JSON object, as the filter evaluator sees them (src/scim/filter/scim-filter-evaluator.ts:
// non-object elements never match). Strings are lower-cased with String.prototype.toLowerCase, the folding the
// evaluator uses for caseExact=false, so the SQL filter compares exactly what the evaluator compares.
// Framework-free; migration 1763780000800 backfills with a copy of this mapping.

/** Length of `value_key`, the indexed prefix of `value` (PostgreSQL caps a b-tree entry at ~2.7 kB). */
export const EMAIL_VALUE_KEY_LENGTH = 200;

export interface UserEmailRow {
  position: number;
  value: string | null;
  valueKey: string | null;
  type: string | null;
  primary: boolean | null;
}

/** `value` cut to EMAIL_VALUE_KEY_LENGTH code units, never between the two halves of a surrogate pair. */
export function emailValueKey(value: string): string {
  if (value.length <= EMAIL_VALUE_KEY_LENGTH) return value;
  const cut = value.slice(0, EMAIL_VALUE_KEY_LENGTH);
  const last = cut.charCodeAt(cut.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The scim_user_emails rows of a user whose stored attributes (ScimUserEntity.attributes) are `attributes`. */
export function userEmailRows(attributes: Readonly<Record<string, unknown>>): UserEmailRow[] {
  const emails = attributes['emails'];
  if (!Array.isArray(emails)) return [];
  const rows: UserEmailRow[] = [];
  emails.forEach((element: unknown, position) => {
    if (!isObject(element)) return;
    const value = typeof element['value'] === 'string' ? element['value'].toLowerCase() : null;
    const type = typeof element['type'] === 'string' ? element['type'].toLowerCase() : null;
    const primary = typeof element['primary'] === 'boolean' ? element['primary'] : null;
    rows.push({ position, value, valueKey: value === null ? null : emailValueKey(value), type, primary });
  });
  return rows;
}
