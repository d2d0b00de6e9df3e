// Normalises a POST or PUT /Users body (RFC 7644 §3.3, §3.5.1) into canonical SCIM core-schema form with the same
// rules as PATCH: case-insensitive attribute names, string booleans, dotted and URN-qualified names, roles in RFC
// form (`value`/`display`) or the interface document's (`Id`/`DisplayName`). Read-only input (`id`, `meta`,
// `schemas`, any readOnly attribute) is ignored, as §3.5.1 allows for PUT; `userName` is required (RFC 7643 §4.1.1).
import { findAttribute, coreAttributes, sameName } from '../schema/schema-lookup.js';
import { type ScimUser, USER_RESOURCE_SCHEMA } from '../schema/user-schema.js';
import { ScimPatchError } from './scim-patch.errors.js';
import { applyPathlessReplace, type ScimPatchOptions } from './scim-patch.js';
import { isPlainObject } from './scim-patch-request.js';

export type NormalizeUserOptions = Omit<ScimPatchOptions, 'schema'>;

/**
 * Returns the body as a `ScimUser` without read-only attributes (the service sets `id`, `meta`, `schemas`).
 * Throws `ScimPatchError` with `invalidSyntax` (not an object) or `invalidValue` (unknown attribute, wrong type,
 * missing `userName`, two primaries).
 */
export function normalizeUserInput(body: unknown, options: NormalizeUserOptions = {}): ScimUser {
  if (!isPlainObject(body)) throw new ScimPatchError('invalidSyntax', 'A User body must be a JSON object');
  const attributes = coreAttributes(USER_RESOURCE_SCHEMA);
  const writable = Object.fromEntries(
    Object.entries(body).filter(([key]) => {
      if (sameName(key, 'schemas')) return false;
      return findAttribute(attributes, key)?.mutability !== 'readOnly';
    }),
  );
  let user: Record<string, unknown>;
  try {
    user = applyPathlessReplace(writable, { ...options, schema: USER_RESOURCE_SCHEMA });
  } catch (error) {
    // A body has no paths: an unknown attribute name is a bad value here, not a bad path.
    if (error instanceof ScimPatchError && error.scimType === 'invalidPath') {
      throw new ScimPatchError('invalidValue', error.message);
    }
    throw error;
  }
  const userName = user['userName'];
  if (typeof userName !== 'string' || userName.trim() === '') {
    throw new ScimPatchError('invalidValue', 'userName is required');
  }
  // Sound: every member was written by the PATCH engine from the User table, and userName was checked above.
  return user as unknown as ScimUser;
}
