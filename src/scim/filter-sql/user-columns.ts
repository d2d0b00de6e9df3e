// Where each attribute a user filter reads is stored: the scim_users columns, the scim_user_emails columns, the
// attributes with one value for every user, and the choice of element source for `emails[…]`.
import { ScimFilterError } from '../filter/scim-filter.errors.js';
import { printAttributePath } from '../filter/scim-filter-printer.js';
import type { ScimAttributePath, ScimFilter } from '../filter/scim-filter.types.js';

/** The columns behind the common attributes and the lookup columns (see entities/scim-user.entity.ts). */
export const COLUMNS: Readonly<Record<string, { column: string; lowered?: boolean; uuid?: boolean }>> = {
  id: { column: 'id', uuid: true },
  userName: { column: 'user_name_lower', lowered: true },
  externalId: { column: 'external_id' },
  'meta.created': { column: 'created_at' },
  'meta.lastModified': { column: 'last_modified' },
};

/**
 * The sub-attributes of `emails` that scim_user_emails holds, and their columns (entities/scim-user-email.entity.ts).
 * A filter on emails that reads only these uses the table; one that reads display or nullable reads the JSON.
 */
export const EMAIL_TABLE = 'scim_user_emails';
export const EMAIL_COLUMNS: Readonly<Record<string, string>> = {
  value: 'value',
  type: 'type',
  primary: 'is_primary',
};

/** Attributes whose value is the same for every user: evaluated here, not in SQL. */
export const CONSTANT_RESOURCE = { meta: { resourceType: 'User' } } as const;
export const CONSTANT_PATHS = new Set(['meta.resourceType']);

export function unsupported(path: ScimAttributePath): never {
  throw new ScimFilterError(
    `"${printAttributePath(path)}" cannot be used in a filter (it is computed per request)`,
    -1,
    'invalidFilter',
  );
}

/**
 * Where the elements of a multi-valued attribute are read: JSON objects in the document, or scim_user_emails rows,
 * selected as `id IN (SELECT user_id …)` or (`emailTableByUser`) by a correlated EXISTS per user.
 */
export type ElementSource = 'json' | 'emailTable' | 'emailTableByUser';

/** Sub-attribute names a filter inside `emails[…]` reads. */
export function referencedNames(filter: ScimFilter): string[] {
  switch (filter.kind) {
    case 'and':
    case 'or':
      return [...referencedNames(filter.left), ...referencedNames(filter.right)];
    case 'not':
    case 'valuePath':
      return referencedNames(filter.filter);
    case 'compare':
    case 'present':
      return [filter.path.attribute];
  }
}
