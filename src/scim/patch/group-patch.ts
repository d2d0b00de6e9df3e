// RFC 7644 §3.5.2 PATCH for the Group resource (RFC 7643 §4.2), in the shapes Microsoft Entra ID and Okta send:
// `add` members (one or many), `remove` through `members[value eq "<id>"]`, `remove` of `members` with a value
// list (Okta) or without one (all members), `replace` of members/displayName/externalId, path-less `replace`/`add`
// with an object value. The operations are folded into one plan (new displayName/externalId, whether the member
// list starts empty, ids to add, ids to remove) that the repository applies in a few set-based statements, so a
// 1,000-member add is one insert rather than a thousand read-modify-writes of a member array.
import { parsePatchPath } from '../filter/scim-filter-parser.js';
import type { ScimFilter } from '../filter/scim-filter.types.js';
import { CORE_GROUP_SCHEMA_ID } from '../schema/group-schema.js';
import { ScimPatchError } from './scim-patch.errors.js';
import { isPlainObject, parsePatchRequest, type ScimPatchOperation } from './scim-patch-request.js';

/** Bounds: no single request may carry unbounded work (operations: scim-patch-request.ts). */
export const MAX_MEMBERS_PER_REQUEST = 10_000;
export const MAX_GROUP_NAME = 256;

export interface GroupPatchPlan {
  displayName?: string;
  /** null: remove the externalId. */
  externalId?: string | null;
  /** The member list is emptied first (replace of members, remove of all members). */
  resetMembers: boolean;
  /** Ids to be members afterwards (disjoint from `remove`). */
  readonly add: Set<string>;
  /** Ids not to be members afterwards. */
  readonly remove: Set<string>;
}

function fail(scimType: ScimPatchError['scimType'], message: string, index?: number): never {
  throw new ScimPatchError(scimType, message, index);
}

/** The member of `object` named `name` in any letter case. */
function memberOf(object: Readonly<Record<string, unknown>>, name: string): unknown {
  const key = Object.keys(object).find((candidate) => candidate.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : object[key];
}

/**
 * Member ids of a `members` value: an array of `{value}` objects (or one such object). `$ref`, `display` and
 * `type` are accepted and ignored: the id decides.
 */
export function memberIdsOf(value: unknown, where: string): string[] {
  const elements = Array.isArray(value) ? value : [value];
  if (elements.length > MAX_MEMBERS_PER_REQUEST) {
    fail(
      'invalidValue',
      `${where} has ${String(elements.length)} members; at most ${String(MAX_MEMBERS_PER_REQUEST)} per request`,
    );
  }
  return elements.map((element, index) => {
    const id = isPlainObject(element) ? memberOf(element, 'value') : undefined;
    if (typeof id !== 'string' || id.trim() === '') {
      fail('invalidValue', `${where}[${String(index)}].value must be a user id (a non-empty string)`);
    }
    const type = isPlainObject(element) ? memberOf(element, 'type') : undefined;
    if (type !== undefined && type !== null && (typeof type !== 'string' || type.toLowerCase() !== 'user')) {
      fail('invalidValue', `${where}[${String(index)}].type must be "User": only users can be members`);
    }
    return id.trim().toLowerCase();
  });
}

export function checkDisplayName(value: unknown, where = 'displayName'): string {
  if (typeof value !== 'string' || value.trim() === '') {
    fail('invalidValue', `${where} is required and must be a non-empty string`);
  }
  if (value.length > MAX_GROUP_NAME) {
    fail('invalidValue', `${where} is longer than ${String(MAX_GROUP_NAME)} characters`);
  }
  if (value.includes('\u0000')) fail('invalidValue', `${where} contains a NUL character (U+0000)`);
  return value;
}

export function checkExternalId(value: unknown, where = 'externalId'): string | null {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value !== 'string') fail('invalidValue', `${where} must be a string`);
  if (value.length > MAX_GROUP_NAME) {
    fail('invalidValue', `${where} is longer than ${String(MAX_GROUP_NAME)} characters`);
  }
  if (value.includes('\u0000')) fail('invalidValue', `${where} contains a NUL character (U+0000)`);
  return value;
}

/** The ids named by `value eq "<id>"` terms joined with `or`; anything else is not a member filter we serve. */
function idsOfMemberFilter(filter: ScimFilter, index: number): string[] {
  switch (filter.kind) {
    case 'or':
      return [...idsOfMemberFilter(filter.left, index), ...idsOfMemberFilter(filter.right, index)];
    case 'compare':
      if (
        filter.operator === 'eq' &&
        filter.path.schema === undefined &&
        filter.path.subAttribute === undefined &&
        filter.path.attribute.toLowerCase() === 'value' &&
        typeof filter.value === 'string'
      ) {
        return [filter.value.trim().toLowerCase()];
      }
      break;
    case 'and':
    case 'not':
    case 'present':
    case 'valuePath':
      break;
  }
  return fail('invalidFilter', 'A members filter must be value eq "<id>" (or several joined with or)', index);
}

type GroupAttribute = 'displayName' | 'externalId' | 'members';

interface Target {
  attribute: GroupAttribute;
  /** Member ids selected by a `members[value eq …]` filter. */
  filterIds?: string[];
}

function resolveName(name: string, index: number): GroupAttribute {
  switch (name.toLowerCase()) {
    case 'displayname':
      return 'displayName';
    case 'externalid':
      return 'externalId';
    case 'members':
      return 'members';
    default:
      return fail('invalidPath', `"${name}" is not a writable attribute of a Group`, index);
  }
}

function resolveTarget(text: string, index: number): Target {
  let parsed;
  try {
    parsed = parsePatchPath(text);
  } catch (error) {
    fail('invalidPath', `Operations[${String(index)}].path: ${(error as Error).message}`, index);
  }
  const { path, valueFilter, subAttribute } = parsed;
  if (path.schema !== undefined && path.schema.toLowerCase() !== CORE_GROUP_SCHEMA_ID.toLowerCase()) {
    fail('invalidPath', `"${path.schema}" is not a schema of the Group resource`, index);
  }
  const attribute = resolveName(path.attribute, index);
  if (path.subAttribute !== undefined || subAttribute !== undefined) {
    fail('invalidPath', `"${text}": members are added and removed whole, not by sub-attribute`, index);
  }
  if (valueFilter === undefined) return { attribute };
  if (attribute !== 'members') fail('invalidPath', `"${path.attribute}" is not multi-valued`, index);
  return { attribute, filterIds: idsOfMemberFilter(valueFilter, index) };
}

function addMembers(plan: GroupPatchPlan, ids: readonly string[]): void {
  for (const id of ids) {
    plan.remove.delete(id);
    plan.add.add(id);
  }
}

function removeMembers(plan: GroupPatchPlan, ids: readonly string[]): void {
  for (const id of ids) {
    plan.add.delete(id);
    if (!plan.resetMembers) plan.remove.add(id);
  }
}

function replaceMembers(plan: GroupPatchPlan, ids: readonly string[]): void {
  plan.resetMembers = true;
  plan.add.clear();
  plan.remove.clear();
  for (const id of ids) plan.add.add(id);
}

function applyToAttribute(
  plan: GroupPatchPlan,
  operation: ScimPatchOperation,
  target: Target,
  index: number,
): void {
  const where = `Operations[${String(index)}].value`;
  const { op } = operation;
  switch (target.attribute) {
    case 'displayName':
      if (op === 'remove') fail('mutability', 'displayName is required and cannot be removed', index);
      plan.displayName = checkDisplayName(operation.value, where);
      return;
    case 'externalId':
      plan.externalId = op === 'remove' ? null : checkExternalId(operation.value, where);
      return;
    case 'members':
      break;
  }
  if (target.filterIds !== undefined) {
    // members[value eq "<id>"]: remove takes those members out; add/replace with such a path is not meaningful.
    if (op !== 'remove') {
      fail('invalidPath', 'A members[...] filter path is only used with remove', index);
    }
    removeMembers(plan, target.filterIds);
    return;
  }
  switch (op) {
    case 'add':
      addMembers(plan, memberIdsOf(operation.value, where));
      return;
    case 'replace':
      replaceMembers(plan, operation.value === null ? [] : memberIdsOf(operation.value, where));
      return;
    case 'remove':
      // Okta: {op: remove, path: members, value: [{value}]} removes those; without a value, every member goes.
      if (operation.value === undefined || operation.value === null) replaceMembers(plan, []);
      else removeMembers(plan, memberIdsOf(operation.value, where));
      return;
  }
}

/** Read-only members a client may echo in a path-less value (Okta sends the group's id): ignored. */
const IGNORED_IN_VALUE = new Set(['id', 'schemas', 'meta']);

/** Folds a PATCH body into one plan. Throws ScimPatchError (all 400s). */
export function planGroupPatch(body: unknown): GroupPatchPlan {
  const operations = parsePatchRequest(body);
  const plan: GroupPatchPlan = { resetMembers: false, add: new Set(), remove: new Set() };
  operations.forEach((operation, index) => {
    if (operation.path !== undefined) {
      applyToAttribute(plan, operation, resolveTarget(operation.path, index), index);
      return;
    }
    if (operation.op === 'remove') fail('noTarget', 'A remove operation needs a path', index);
    if (!isPlainObject(operation.value)) {
      fail(
        'invalidValue',
        `Operations[${String(index)}].value must be an object when there is no path`,
        index,
      );
    }
    for (const [name, value] of Object.entries(operation.value)) {
      if (IGNORED_IN_VALUE.has(name.toLowerCase())) continue;
      const attributeName = name.startsWith(`${CORE_GROUP_SCHEMA_ID}:`)
        ? name.slice(CORE_GROUP_SCHEMA_ID.length + 1)
        : name;
      applyToAttribute(
        plan,
        { op: operation.op, value },
        { attribute: resolveName(attributeName, index) },
        index,
      );
    }
  });
  return plan;
}

/** The member set a plan leaves, given the current one: the reference the repository's statements must match. */
export function applyPlanToMembers(current: ReadonlySet<string>, plan: GroupPatchPlan): Set<string> {
  const next = plan.resetMembers ? new Set<string>() : new Set(current);
  for (const id of plan.remove) next.delete(id);
  for (const id of plan.add) next.add(id);
  return next;
}

/** The member set after applying the operations one by one to a plain set: the oracle for the plan. */
export function applyOperationsSequentially(current: ReadonlySet<string>, body: unknown): Set<string> {
  const members = new Set(current);
  for (const operation of parsePatchRequest(body)) {
    const single = planGroupPatch({ Operations: [operation] });
    const next = applyPlanToMembers(members, single);
    members.clear();
    for (const id of next) members.add(id);
  }
  return members;
}
