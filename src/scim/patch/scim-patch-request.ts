// Reads a PATCH body (RFC 7644 §3.5.2) in both shapes clients send: the standard
// `{schemas:[PatchOp], Operations:[{op, path, value}]}` and the interface document's
// `{Schemas, Operations:[{Path, Value}]}`, where a missing `op` means replace. Member names and `op` values are
// case-insensitive (Entra sends `"op":"Replace"`).
import { ScimPatchError } from './scim-patch.errors.js';

/**
 * Operations per PATCH: 9,000 filter-path operations once held the process for 15 s. Entra sends a few
 * per request, Okta one; a thousand leaves room for any client and bounds the work.
 */
export const MAX_PATCH_OPERATIONS = 1_000;

export type ScimPatchOperationType = 'add' | 'remove' | 'replace';

export interface ScimPatchOperation {
  readonly op: ScimPatchOperationType;
  /** Absent for a path-less operation (the target is the whole resource). */
  readonly path?: string;
  /** Absent when the request had no value member. */
  readonly value?: unknown;
}

type PlainObject = Readonly<Record<string, unknown>>;

export function isPlainObject(value: unknown): value is PlainObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value of the member named `name` in any letter case; two spellings of one name are ambiguous. */
function member(object: PlainObject, name: string, where: string): unknown {
  const keys = Object.keys(object).filter((key) => key.toLowerCase() === name.toLowerCase());
  if (keys.length > 1) {
    throw new ScimPatchError(
      'invalidSyntax',
      `${where} has the member "${name}" more than once (${keys.join(', ')})`,
    );
  }
  const key = keys.at(0);
  return key === undefined ? undefined : object[key];
}

function readOperation(raw: unknown, index: number): ScimPatchOperation {
  const where = `Operations[${String(index)}]`;
  if (!isPlainObject(raw)) throw new ScimPatchError('invalidSyntax', `${where} must be an object`, index);
  const op = member(raw, 'op', where);
  const path = member(raw, 'path', where);
  const value = member(raw, 'value', where);

  let type: ScimPatchOperationType = 'replace';
  if (op !== undefined && op !== null) {
    const name = typeof op === 'string' ? op.trim().toLowerCase() : undefined;
    if (name !== 'add' && name !== 'remove' && name !== 'replace') {
      throw new ScimPatchError(
        'invalidSyntax',
        `${where}.op must be "add", "remove" or "replace", got ${JSON.stringify(op)}`,
        index,
      );
    }
    type = name;
  }
  if (path !== undefined && path !== null && typeof path !== 'string') {
    throw new ScimPatchError('invalidPath', `${where}.path must be a string`, index);
  }
  const trimmedPath = typeof path === 'string' && path.trim() !== '' ? path.trim() : undefined;
  return {
    op: type,
    ...(trimmedPath !== undefined ? { path: trimmedPath } : {}),
    ...(value !== undefined ? { value } : {}),
  };
}

/** Validates the body's shape and returns its operations. Throws `ScimPatchError` (`invalidSyntax`). */
export function parsePatchRequest(body: unknown): ScimPatchOperation[] {
  if (!isPlainObject(body)) throw new ScimPatchError('invalidSyntax', 'A PATCH body must be a JSON object');
  const schemas = member(body, 'schemas', 'The PATCH body');
  if (
    schemas !== undefined &&
    !(Array.isArray(schemas) && schemas.every((item) => typeof item === 'string'))
  ) {
    throw new ScimPatchError('invalidSyntax', 'schemas must be an array of strings');
  }
  const operations = member(body, 'Operations', 'The PATCH body');
  if (!Array.isArray(operations) || operations.length === 0) {
    throw new ScimPatchError('invalidSyntax', 'Operations must be a non-empty array');
  }
  if (operations.length > MAX_PATCH_OPERATIONS) {
    throw new ScimPatchError(
      'invalidValue',
      `Operations has ${String(operations.length)} operations; at most ${String(MAX_PATCH_OPERATIONS)} per PATCH`,
    );
  }
  return operations.map(readOperation);
}
