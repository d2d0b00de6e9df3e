// RFC 7644 §3.5.2 PATCH: add (§3.5.2.1), remove (§3.5.2.2) and replace (§3.5.2.3) applied to a resource held as
// a plain object in SCIM core-schema form, driven by the attribute table. The input is never modified: the
// operations run on a deep copy that is returned only when all of them succeed, which makes the request atomic
// as §3.5.2 requires. Leniencies for Entra ID and Okta: value coercions live in scim-value-coercion.ts; path ones
// (path-less keys that are paths, add through a filter that matches nothing, remove with a value list) are
// commented where they happen, here and in scim-patch-target.ts.
import { runInSlices, type TimeSlicer } from '../../common/time-slicer.js';
import { matchesFilter } from '../filter/scim-filter-evaluator.js';
import { printFilter } from '../filter/scim-filter-printer.js';
import { elementScope } from '../filter/scim-filter-scope.js';
import type { ScimFilter } from '../filter/scim-filter.types.js';
import { findExtension, sameName } from '../schema/schema-lookup.js';
import type { ScimAttributeDefinition, ScimResourceSchema } from '../schema/scim-schema.types.js';
import { type ScimUser, UNSUPPORTED_USER_ATTRIBUTES, USER_RESOURCE_SCHEMA } from '../schema/user-schema.js';
import { ScimPatchError } from './scim-patch.errors.js';
import { isPlainObject, parsePatchRequest, type ScimPatchOperation } from './scim-patch-request.js';
import {
  type AttributeTarget,
  type PatchContext,
  fail,
  resolveTarget,
  type PatchTarget,
} from './scim-patch-target.js';
import {
  containerOf,
  elementsOf,
  ensureContainer,
  isEmpty,
  isMutableObject,
  type Mutable,
  read,
  remove,
  storeElements,
  write,
} from './scim-resource-access.js';
import {
  coerceComplexValue,
  coerceMultiValued,
  coerceSimpleValue,
  jsonEqual,
  matchesGivenKeys,
  sameElement,
  type ScimJsonObject,
} from './scim-value-coercion.js';

export interface ScimPatchOptions {
  /** The resource type; the User resource by default. */
  readonly schema?: ScimResourceSchema;
  /**
   * Attributes of an extension schema the service does not know (e.g. an Entra custom extension): `reject`
   * (default, RFC-strict `invalidPath`) or `ignore` (drop them so provisioning of the known attributes goes on).
   * Unknown attributes of the core or of a known extension schema are always `invalidPath`.
   */
  readonly unknownExtensions?: 'reject' | 'ignore';
  /** Core attribute names accepted and dropped; by default RFC 7643 User attributes the service does not store. */
  readonly ignoredAttributes?: readonly string[];
}

type WriteMode = 'add' | 'replace';

// ---- mutability (RFC 7643 §2.2, RFC 7644 §3.5.2) ------------------------------------------------------------

/** The value currently at an unfiltered target, for "is this write a change at all?" checks. */
function currentValue(document: Mutable, target: AttributeTarget): unknown {
  const container = containerOf(document, target);
  if (container === undefined) return undefined;
  const value = read(container, target.attribute.name);
  if (target.subAttribute === undefined) return value;
  return isMutableObject(value) ? read(value, target.subAttribute.name) : undefined;
}

/**
 * A client may not change readOnly attributes (`id`, `meta`) nor change immutable ones once set. Writing the
 * value an attribute already has is not a change, so clients that echo `id` in a path-less value still work.
 * Returns true when the write is such a no-op.
 */
function isUnchangedProtectedWrite(document: Mutable, target: AttributeTarget, raw: unknown): boolean {
  const mutability =
    target.attribute.mutability === 'readOnly' || target.subAttribute?.mutability === 'readOnly'
      ? 'readOnly'
      : target.attribute.mutability === 'immutable' || target.subAttribute?.mutability === 'immutable'
        ? 'immutable'
        : 'readWrite';
  if (mutability === 'readWrite') return false;
  const current = target.filter === undefined ? currentValue(document, target) : undefined;
  if (target.filter === undefined && jsonEqual(current, raw)) return true;
  if (mutability === 'immutable' && target.filter === undefined && current === undefined) return false;
  return fail('mutability', `Attribute "${target.label}" is ${mutability} and cannot be changed`);
}

function checkRemovable(target: AttributeTarget): void {
  const { attribute, subAttribute } = target;
  if (
    attribute.mutability === 'readOnly' ||
    attribute.mutability === 'immutable' ||
    subAttribute?.mutability === 'readOnly'
  ) {
    fail('mutability', `Attribute "${target.label}" is ${attribute.mutability} and cannot be removed`);
  }
  const whole = subAttribute === undefined && target.filter === undefined;
  if ((whole && attribute.required) || subAttribute?.required === true) {
    fail('mutability', `Attribute "${target.label}" is required and cannot be removed`);
  }
}

// ---- primary (RFC 7643 §2.4, RFC 7644 §3.5.2) ---------------------------------------------------------------

/**
 * `chosen` are the elements this request set `primary: true` on. One of them clears the flag on every other
 * element; more than one is invalid ("The primary attribute value 'true' MUST appear no more than once").
 */
function settlePrimary(
  attribute: ScimAttributeDefinition,
  elements: readonly unknown[],
  chosen: readonly unknown[],
): void {
  if (chosen.length > 1) {
    fail('invalidValue', `Only one "${attribute.name}" value may have primary set to true`);
  }
  const [primary] = chosen;
  if (primary === undefined) return;
  for (const element of elements) {
    if (element !== primary && isMutableObject(element) && element['primary'] === true) {
      element['primary'] = false;
    }
  }
}

function setsPrimary(value: unknown): boolean {
  return isPlainObject(value) && value['primary'] === true;
}

// ---- add / replace --------------------------------------------------------------------------------------------

/** Sub-attribute values a filter pins with `eq` (e.g. type "work"), to build the element `add` creates. */
function templateFromFilter(filter: ScimFilter): ScimJsonObject {
  switch (filter.kind) {
    case 'compare':
      return filter.operator === 'eq' && filter.value !== null
        ? { [filter.path.attribute]: filter.value }
        : {};
    case 'and':
      return { ...templateFromFilter(filter.left), ...templateFromFilter(filter.right) };
    case 'or':
    case 'not':
    case 'present':
    case 'valuePath':
      return {};
  }
}

function mergeInto(target: Mutable, changes: ScimJsonObject): void {
  for (const [name, value] of Object.entries(changes)) {
    if (value === null) remove(target, name);
    else write(target, name, value);
  }
}

function writeWholeAttribute(
  document: Mutable,
  target: AttributeTarget,
  raw: unknown,
  mode: WriteMode,
): void {
  const { attribute } = target;
  if (raw === null && attribute.required) {
    fail('mutability', `Attribute "${target.label}" is required and cannot be cleared`);
  }
  const container = ensureContainer(document, target);
  if (attribute.multiValued) {
    const incoming = coerceMultiValued(attribute, raw, target.label);
    if (mode === 'replace') {
      settlePrimary(attribute, incoming, incoming.filter(setsPrimary));
      storeElements(container, attribute, incoming);
      return;
    }
    // RFC 7644 §3.5.2.1: values already present are not added again.
    const elements = elementsOf(container, attribute);
    const chosen: unknown[] = [];
    for (const value of incoming) {
      const existing = elements.find((element) => sameElement(attribute, element, value));
      if (isMutableObject(existing) && isPlainObject(value)) {
        // Same value and type: keep the stored spelling, take the other sub-attributes (e.g. primary) given.
        const identity = ['value', 'type'];
        mergeInto(
          existing,
          Object.fromEntries(Object.entries(value).filter(([key]) => !identity.includes(key))),
        );
      } else if (existing === undefined) {
        elements.push(value);
      }
      if (setsPrimary(value)) chosen.push(existing ?? value);
    }
    settlePrimary(attribute, elements, chosen);
    storeElements(container, attribute, elements);
    return;
  }
  // Entra clears the manager with `replace …:manager ""`: an empty string for a complex value means none, and so
  // does an empty list for a single-valued one (Entra gives the manager as a list: `[{"value":"<id>"}]`).
  const noneGiven = raw === '' || (Array.isArray(raw) && raw.length === 0 && !attribute.multiValued);
  if (raw === null || (noneGiven && attribute.type === 'complex')) {
    remove(container, attribute.name);
    return;
  }
  if (attribute.type === 'complex') {
    // RFC 7644 §3.5.2.1/§3.5.2.3: sub-attributes not given are left unchanged.
    const changes = coerceComplexValue(attribute, raw, target.label, true);
    const current = read(container, attribute.name);
    const merged: Mutable = isPlainObject(current) ? { ...current } : {};
    mergeInto(merged, changes);
    if (isEmpty(merged)) remove(container, attribute.name);
    else write(container, attribute.name, merged);
    return;
  }
  write(container, attribute.name, coerceSimpleValue(attribute, raw, target.label));
}

function writeSubAttribute(
  document: Mutable,
  target: AttributeTarget & { readonly subAttribute: ScimAttributeDefinition },
  raw: unknown,
): void {
  const { attribute, subAttribute } = target;
  // `manager.value` set to "" clears it, as `manager` set to "" does.
  const clears = raw === null || (raw === '' && !attribute.multiValued && subAttribute.name === 'value');
  const value = clears ? null : coerceSimpleValue(subAttribute, raw, target.label);
  const container = value === null ? containerOf(document, target) : ensureContainer(document, target);
  if (container === undefined) return;
  if (!attribute.multiValued) {
    const current = read(container, attribute.name);
    const merged: Mutable = isPlainObject(current) ? { ...current } : {};
    mergeInto(merged, { [subAttribute.name]: value });
    if (isEmpty(merged)) remove(container, attribute.name);
    else write(container, attribute.name, merged);
    return;
  }
  // No filter on a multi-valued attribute addresses every element; with none, one is created.
  const elements = elementsOf(container, attribute);
  if (elements.length === 0) {
    if (value !== null) storeElements(container, attribute, [{ [subAttribute.name]: value }]);
    return;
  }
  for (const element of elements)
    if (isMutableObject(element)) mergeInto(element, { [subAttribute.name]: value });
  if (value === true && subAttribute.name === 'primary') settlePrimary(attribute, elements, elements);
  storeElements(container, attribute, elements);
}

function writeFiltered(
  document: Mutable,
  target: AttributeTarget & { readonly filter: ScimFilter },
  raw: unknown,
  mode: WriteMode,
): void {
  const { attribute, subAttribute, filter } = target;
  const scope = elementScope(attribute);
  const container = ensureContainer(document, target);
  const elements = elementsOf(container, attribute);
  const matched = elements.filter(
    (element) => isPlainObject(element) && matchesFilter(filter, element, scope),
  );
  if (raw === null && subAttribute === undefined) {
    fail('invalidValue', `"${target.label}" needs an object value; use "remove" to delete elements`);
  }
  const changes: ScimJsonObject =
    subAttribute === undefined
      ? coerceComplexValue(attribute, raw, target.label, mode === 'add')
      : { [subAttribute.name]: raw === null ? null : coerceSimpleValue(subAttribute, raw, target.label) };

  let written: unknown[];
  if (matched.length === 0 && mode === 'add' && subAttribute !== undefined && raw === null) return;
  if (matched.length === 0) {
    // RFC 7644 §3.5.2.3: replace with a filter that matches nothing is noTarget. Entra sends `add` to
    // `emails[type eq "work"].value` meaning "create the work e-mail", so add builds the element from the filter.
    // Entra also sends `replace` (and `add`) to `emails[type eq "work"].value` for a user whose one e-mail has no
    // type: that element is filled (it gets the filter's attributes), or, with none such, the element is created,
    // so that the address change reaches the user's one (primary) e-mail either way. A replace of whole elements
    // through a filter that matches nothing stays noTarget.
    if (mode === 'replace' && subAttribute === undefined) {
      fail('noTarget', `No "${attribute.name}" value matches the filter ${printFilter(filter)}`);
    }
    const template = templateFromFilter(filter);
    // `add` fills only Entra's case, an e-mail without a type for `emails[type eq …]`: elsewhere an element that
    // lacks the filter's attribute is another value (a phone without a type, a role that is not primary), kept.
    const fills =
      mode === 'replace' ||
      (sameName(attribute.name, 'emails') && Object.keys(template).every((key) => key === 'type'));
    const blanks = fills
      ? elements.filter(
          (element) => isMutableObject(element) && Object.keys(template).every((key) => !(key in element)),
        )
      : [];
    const blank = blanks.length === 1 ? blanks[0] : undefined;
    const created: Mutable = isMutableObject(blank) ? blank : { ...template };
    if (created === blank) mergeInto(created, { ...template });
    mergeInto(created, changes);
    if (!matchesFilter(filter, created, scope)) {
      fail(
        'noTarget',
        `No "${attribute.name}" value matches ${printFilter(filter)}, and one cannot be built from it`,
      );
    }
    if (created !== blank) elements.push(created);
    written = [created];
    // A filter such as primary eq true puts the flag on the new element without the value naming it.
    if (setsPrimary(created)) settlePrimary(attribute, elements, written);
  } else if (mode === 'replace' && subAttribute === undefined) {
    // RFC 7644 §3.5.2.3: "all matching record values SHALL be replaced".
    written = matched.map(() => structuredClone(changes));
    matched.forEach((element, index) => {
      elements[elements.indexOf(element)] = written[index];
    });
  } else {
    for (const element of matched) if (isMutableObject(element)) mergeInto(element, structuredClone(changes));
    written = matched;
  }
  if (changes['primary'] === true) settlePrimary(attribute, elements, written);
  storeElements(
    container,
    attribute,
    elements.filter((element) => !isEmpty(element)),
  );
}

function writeTarget(
  document: Mutable,
  target: PatchTarget,
  raw: unknown,
  mode: WriteMode,
  context: PatchContext,
): void {
  switch (target.kind) {
    case 'ignore':
      return;
    case 'schema':
      writeSchemaObject(document, target, raw, mode, context);
      return;
    case 'attribute':
      if (isUnchangedProtectedWrite(document, target, raw)) return;
      if (target.filter !== undefined)
        writeFiltered(document, { ...target, filter: target.filter }, raw, mode);
      else if (target.subAttribute !== undefined) {
        writeSubAttribute(document, { ...target, subAttribute: target.subAttribute }, raw);
      } else writeWholeAttribute(document, target, raw, mode);
  }
}

/** A value object whose keys are attribute paths: a path-less operation, or a schema URN's object. */
function writeSchemaObject(
  document: Mutable,
  target: { readonly schemaId?: string; readonly isExtension: boolean },
  raw: unknown,
  mode: WriteMode,
  context: PatchContext,
): void {
  let value = raw;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value) as unknown;
    } catch {
      // Reported below as "must be an object".
    }
  }
  if (value === null && target.isExtension && target.schemaId !== undefined) {
    remove(document, target.schemaId);
    return;
  }
  if (!isPlainObject(value)) {
    fail('invalidValue', `A ${target.schemaId ?? 'path-less'} value must be an object of attributes`);
  }
  for (const [key, member] of Object.entries(value)) {
    // The resource's `schemas` is derived from its content; clients echo it and it is not theirs to set.
    if (!target.isExtension && sameName(key, 'schemas')) continue;
    const nested = resolveTarget(key, context, target.isExtension ? target.schemaId : undefined);
    writeTarget(document, nested, member, mode, context);
  }
}

// ---- remove ------------------------------------------------------------------------------------------------

function removeTarget(document: Mutable, target: PatchTarget, raw: unknown): void {
  switch (target.kind) {
    case 'ignore':
      return;
    case 'schema':
      if (!target.isExtension) fail('invalidPath', 'The core schema cannot be removed');
      remove(document, target.schemaId);
      return;
    case 'attribute':
      break;
  }
  checkRemovable(target);
  const { attribute, subAttribute, filter } = target;
  const container = containerOf(document, target);
  if (container === undefined) {
    if (filter !== undefined) fail('noTarget', `No "${attribute.name}" value matches ${printFilter(filter)}`);
    return;
  }
  if (!attribute.multiValued) {
    if (subAttribute === undefined) {
      remove(container, attribute.name);
      return;
    }
    const current = read(container, attribute.name);
    if (!isPlainObject(current)) return;
    const rest: Mutable = { ...current };
    remove(rest, subAttribute.name);
    if (isEmpty(rest)) remove(container, attribute.name);
    else write(container, attribute.name, rest);
    return;
  }
  const elements = elementsOf(container, attribute);
  let selected: unknown[];
  if (filter !== undefined) {
    const scope = elementScope(attribute);
    selected = elements.filter((element) => isPlainObject(element) && matchesFilter(filter, element, scope));
    if (selected.length === 0)
      fail('noTarget', `No "${attribute.name}" value matches ${printFilter(filter)}`);
  } else if (subAttribute === undefined && raw !== undefined && raw !== null) {
    // Entra removes single members/roles as {"op":"Remove","path":"roles","value":[{"value":"r1"}]}.
    // Okta and Entra list only some sub-attributes ([{"value":"x"}], {"type":"home"}): match on the keys given.
    const listed = coerceMultiValued(attribute, raw, target.label);
    selected = elements.filter((element) =>
      listed.some((value) => matchesGivenKeys(attribute, element, value)),
    );
    if (selected.length === 0)
      fail('noTarget', `No "${attribute.name}" value matches the values listed for removal`);
  } else {
    selected = elements;
  }
  let remaining: unknown[];
  if (subAttribute === undefined) {
    remaining = elements.filter((element) => !selected.includes(element));
  } else {
    for (const element of selected) if (isMutableObject(element)) remove(element, subAttribute.name);
    remaining = elements.filter((element) => !isEmpty(element));
  }
  storeElements(container, attribute, remaining);
}

// ---- driver ------------------------------------------------------------------------------------------------

/** A User's `groups` (with or without the core schema's URN, any sub-attribute or filter after it). */
const USER_GROUPS_PATH = /^(?:urn:ietf:params:scim:schemas:core:2\.0:user:)?groups(?:$|[.[])/i;

function applyOperation(document: Mutable, operation: ScimPatchOperation, context: PatchContext): void {
  // RFC 7644 §3.5.2: an operation on a readOnly attribute is `mutability`; a User's `groups` (RFC 7643 §4.1.2) is
  // readOnly, changed through /Groups. In a body or a path-less value it is ignored, as other readOnly input is.
  if (
    operation.path !== undefined &&
    USER_GROUPS_PATH.test(operation.path.trim()) &&
    context.ignoredAttributes.some((name) => sameName(name, 'groups'))
  ) {
    fail('mutability', `groups is read-only; memberships change through /Groups (path "${operation.path}")`);
  }
  if (operation.op === 'remove') {
    // RFC 7644 §3.5.2.2: a remove without path is noTarget.
    if (operation.path === undefined) fail('noTarget', 'A "remove" operation needs a path');
    removeTarget(document, resolveTarget(operation.path, context), operation.value);
    return;
  }
  if (operation.value === undefined) fail('invalidValue', `An "${operation.op}" operation needs a value`);
  if (operation.path === undefined) {
    writeSchemaObject(document, { isExtension: false }, operation.value, operation.op, context);
    return;
  }
  writeTarget(document, resolveTarget(operation.path, context), operation.value, operation.op, context);
}

/** Keeps `schemas` (when the resource carries it) in step with the extensions actually present. */
function syncSchemas(document: Mutable, schema: ScimResourceSchema): void {
  const schemas = read(document, 'schemas');
  if (!Array.isArray(schemas)) return;
  const next: unknown[] = schemas.filter(
    (id) => typeof id !== 'string' || findExtension(schema, id) === undefined || !isEmpty(read(document, id)),
  );
  for (const extension of schema.extensions) {
    const present = !isEmpty(read(document, extension.id));
    if (present && !next.some((id) => typeof id === 'string' && sameName(id, extension.id)))
      next.push(extension.id);
  }
  write(document, 'schemas', next);
}

function contextOf(options: ScimPatchOptions): PatchContext {
  return {
    schema: options.schema ?? USER_RESOURCE_SCHEMA,
    ignoreUnknownExtensions: options.unknownExtensions === 'ignore',
    ignoredAttributes: options.ignoredAttributes ?? UNSUPPORTED_USER_ATTRIBUTES,
  };
}

/**
 * Applies parsed operations to a copy of `resource` and returns the copy. Throws `ScimPatchError` (with the
 * failing operation's index) and leaves `resource` untouched when any operation fails.
 */
export function applyPatchOperations(
  resource: Readonly<Record<string, unknown>>,
  operations: readonly ScimPatchOperation[],
  options: ScimPatchOptions = {},
): Record<string, unknown> {
  const steps = patchSteps(resource, operations, options);
  for (;;) {
    const next = steps.next();
    if (next.done === true) return next.value;
  }
}

/**
 * `applyPatchOperations` with the event loop free between operations whenever `slicer`'s budget is spent: 1,000
 * operations with value filters over 100 emails each take about a second.
 */
export function applyPatchOperationsSliced(
  resource: Readonly<Record<string, unknown>>,
  operations: readonly ScimPatchOperation[],
  options: ScimPatchOptions = {},
  slicer?: TimeSlicer,
): Promise<Record<string, unknown>> {
  return runInSlices(patchSteps(resource, operations, options), slicer);
}

/** The operations one by one, pausing (yielding) after each. */
function* patchSteps(
  resource: Readonly<Record<string, unknown>>,
  operations: readonly ScimPatchOperation[],
  options: ScimPatchOptions,
): Generator<void, Record<string, unknown>> {
  const context = contextOf(options);
  const document: Mutable = structuredClone(resource);
  for (const [index, operation] of operations.entries()) {
    yield;
    try {
      applyOperation(document, operation, context);
    } catch (error) {
      if (error instanceof ScimPatchError) {
        throw new ScimPatchError(error.scimType, `Operations[${String(index)}]: ${error.message}`, index);
      }
      throw error;
    }
    for (const extension of context.schema.extensions) {
      if (isEmpty(read(document, extension.id))) remove(document, extension.id);
    }
  }
  syncSchemas(document, context.schema);
  return document;
}

/** Parses a PATCH body (either accepted shape) and applies it; see `applyPatchOperations`. */
export function applyScimPatch(
  resource: Readonly<Record<string, unknown>>,
  body: unknown,
  options: ScimPatchOptions = {},
): Record<string, unknown> {
  return applyPatchOperations(resource, parsePatchRequest(body), options);
}

/** `applyScimPatch` for the User resource, typed. */
export function applyUserPatch(
  user: Readonly<ScimUser>,
  body: unknown,
  options: ScimPatchOptions = {},
): ScimUser {
  // The cast is sound: every value written was checked against the User table, and the input was a ScimUser.
  return applyScimPatch({ ...user }, body, options) as unknown as ScimUser;
}

/** `applyUserPatch` in slices (`applyPatchOperationsSliced`). */
export async function applyUserPatchSliced(
  user: Readonly<ScimUser>,
  body: unknown,
  options: ScimPatchOptions = {},
  slicer?: TimeSlicer,
): Promise<ScimUser> {
  const patched = await applyPatchOperationsSliced({ ...user }, parsePatchRequest(body), options, slicer);
  // Sound for the reason given in applyUserPatch.
  return patched as unknown as ScimUser;
}

/** For normalisation: a path-less replace on a fresh object, without the Operations[i] prefix on errors. */
export function applyPathlessReplace(
  value: unknown,
  options: ScimPatchOptions = {},
): Record<string, unknown> {
  const context = contextOf(options);
  const document: Mutable = {};
  writeSchemaObject(document, { isExtension: false }, value, 'replace', context);
  for (const extension of context.schema.extensions) {
    if (isEmpty(read(document, extension.id))) remove(document, extension.id);
  }
  return document;
}
