// The `sortBy` values the OpenAPI document lists for Users and Groups (RFC 7644 §3.4.2.3).
/**
 * The Users' `sortBy` values the document lists (any letter case, also URN-qualified, is accepted): the indexed
 * columns and the common attributes; the service also sorts by any other singular attribute (scim-user-sort.ts).
 */
export const USER_SORT_BY = [
  'id',
  'userName',
  'externalId',
  'displayName',
  'name.familyName',
  'name.givenName',
  'emails',
  'active',
  'meta.created',
  'meta.lastModified',
] as const;

/** The Groups' `sortBy` values (scim-groups.controller.ts). */
export const GROUP_SORT_BY = [
  'id',
  'displayName',
  'externalId',
  'meta.created',
  'meta.lastModified',
] as const;
