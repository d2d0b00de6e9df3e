// Checks and converts request values against the attribute table (RFC 7643 §2.3 data types, §2.4 multi-valued
// attributes), accepting what Entra ID and Okta really send: booleans as strings ("False"), a complex value as a
// JSON object inside a string (Entra's roles; the interface document types `Value` as a string), a bare string
// for a complex attribute with a `value` sub-attribute (Entra's enterprise `manager`), and `Id`/`DisplayName`
// for role `value`/`display`. Output uses the table's canonical attribute names.
import { findAttribute } from '../schema/schema-lookup.js';
import type { ScimAttributeDefinition } from '../schema/scim-schema.types.js';
import { ScimPatchError } from './scim-patch.errors.js';
import { isPlainObject } from './scim-patch-request.js';

export type ScimJsonValue = string | number | boolean | null | ScimJsonValue[] | ScimJsonObject;
export interface ScimJsonObject {
  [key: string]: ScimJsonValue;
}

function invalid(message: string): never {
  throw new ScimPatchError('invalidValue', message);
}

function show(value: unknown): string {
  // JSON.stringify returns undefined for undefined and functions, whatever its declared type says.
  const text = JSON.stringify(value) as string | undefined;
  return text === undefined ? String(value) : text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** Parses `text` when it is a JSON object (or, if allowed, array) and returns undefined otherwise. */
function parseJsonText(text: string, allowArray: boolean): unknown {
  const trimmed = text.trim();
  if (!(trimmed.startsWith('{') || (allowArray && trimmed.startsWith('[')))) return undefined;
  try {
    const parsed: unknown = JSON.parse(trimmed);
    return isPlainObject(parsed) || (allowArray && Array.isArray(parsed)) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** A single value of a non-complex attribute. */
export function coerceSimpleValue(
  attribute: ScimAttributeDefinition,
  raw: unknown,
  label: string,
): ScimJsonValue {
  switch (attribute.type) {
    case 'string':
    case 'reference':
    case 'binary':
      if (typeof raw === 'string') return raw;
      return invalid(`${label} must be a string, got ${show(raw)}`);
    case 'boolean':
      if (typeof raw === 'boolean') return raw;
      if (typeof raw === 'string' && /^\s*(true|false)\s*$/i.test(raw))
        return raw.trim().toLowerCase() === 'true';
      return invalid(`${label} must be a boolean, got ${show(raw)}`);
    case 'integer':
      if (typeof raw === 'number' && Number.isInteger(raw)) return raw;
      return invalid(`${label} must be an integer, got ${show(raw)}`);
    case 'decimal':
      if (typeof raw === 'number' && Number.isFinite(raw)) return raw;
      return invalid(`${label} must be a number, got ${show(raw)}`);
    case 'dateTime':
      if (typeof raw === 'string' && !Number.isNaN(Date.parse(raw))) return raw;
      return invalid(`${label} must be an xsd:dateTime string, got ${show(raw)}`);
    case 'complex':
      return invalid(`${label} is complex; give an object`);
  }
}

/**
 * Drops an alias (`Id`, `DisplayName`) whose RFC 7643 name (`value`, `display`) the same object also gives: the RFC
 * name wins. /Schemas advertises only the RFC names as writable, so a client filling every
 * advertised sub-attribute may send the aliases with other values (or echo them from an older answer); Entra's app
 * role object (`{"id":"<role guid>","value":"Admin",…}`) means `value` as the role and `id` as the app role's GUID.
 */
function withoutShadowedAliases(
  attribute: ScimAttributeDefinition,
  inner: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const names = new Set(Object.keys(inner).map((key) => key.toLowerCase()));
  return Object.fromEntries(
    Object.entries(inner).filter(([key]) => {
      const sub = findAttribute(attribute.subAttributes ?? [], key);
      return (
        sub === undefined ||
        sub.name.toLowerCase() === key.toLowerCase() ||
        !names.has(sub.name.toLowerCase())
      );
    }),
  );
}

/**
 * Entra ID's documented manager PATCH gives the single-valued enterprise `manager` as a list:
 * `"value":[{"value":"<id>"}]`. A one-element list of a single-valued complex attribute is taken as its element, an
 * empty list as no value (""); longer lists stay an error — which element would be meant is a guess.
 */
function singleOfArray(attribute: ScimAttributeDefinition, raw: unknown, label: string): unknown {
  if (attribute.multiValued || !Array.isArray(raw)) return raw;
  if (raw.length > 1) return invalid(`${label} is single-valued; give one value, not ${String(raw.length)}`);
  return raw.length === 0 ? '' : raw[0];
}

/**
 * The sub-attributes of one complex value. With `keepNulls`, a null member is kept as a "clear this
 * sub-attribute" marker (merging into an existing value); otherwise it is dropped (a new element).
 */
export function coerceComplexValue(
  attribute: ScimAttributeDefinition,
  raw: unknown,
  label: string,
  keepNulls: boolean,
): ScimJsonObject {
  let source: unknown = singleOfArray(attribute, raw, label);
  // An empty string for a complex value with a `value` (Entra's `manager: ""`) is no value at all.
  if (source === '' && findAttribute(attribute.subAttributes ?? [], 'value') !== undefined) return {};
  if (typeof source === 'string') {
    const parsed = parseJsonText(source, false);
    const valueSub = findAttribute(attribute.subAttributes ?? [], 'value');
    if (parsed !== undefined) source = parsed;
    else if (valueSub !== undefined) source = { [valueSub.name]: source };
  }
  if (!isPlainObject(source)) return invalid(`${label} must be an object, got ${show(raw)}`);
  let object: Readonly<Record<string, unknown>> = source;

  // Entra sends a role as {"value": "{\"id\":\"r1\",\"displayName\":\"Admin\"}"}: unwrap the inner object.
  const valueKey = Object.keys(object).find((key) => key.toLowerCase() === 'value');
  const valueText = valueKey === undefined ? undefined : object[valueKey];
  if (valueKey !== undefined && typeof valueText === 'string') {
    const inner = parseJsonText(valueText, false);
    if (isPlainObject(inner)) {
      const rest = Object.fromEntries(Object.entries(object).filter(([key]) => key !== valueKey));
      object = { ...rest, ...inner };
    }
  }

  // `Id` is `value` under the interface document's name: when both are given, `value` wins and `Id` is ignored.
  const entries = Object.entries(withoutShadowedAliases(attribute, object));
  const result: ScimJsonObject = {};
  const given = new Set<string>();
  for (const [key, value] of entries) {
    const sub = findAttribute(attribute.subAttributes ?? [], key);
    if (sub === undefined) return invalid(`Unknown sub-attribute "${attribute.name}.${key}" in ${label}`);
    // RFC 7644 §3.5.1: a readOnly sub-attribute in a request (the enterprise manager's displayName) is ignored.
    if (sub.mutability === 'readOnly') continue;
    // `manager: {"value": ""}` is no manager, as `manager: ""` and `manager.value: ""` are.
    const noValue = value === '' && sub.name === 'value' && !attribute.multiValued;
    const coerced =
      value === null || value === undefined || noValue
        ? null
        : coerceSimpleValue(sub, value, `${label}.${sub.name}`);
    if (given.has(sub.name)) return invalid(`${label} gives "${attribute.name}.${sub.name}" more than once`);
    given.add(sub.name);
    if (coerced === null) {
      if (keepNulls) result[sub.name] = null;
      else Reflect.deleteProperty(result, sub.name);
      continue;
    }
    result[sub.name] = coerced;
  }
  return result;
}

/**
 * Values of one multi-valued attribute (emails, phoneNumbers, roles, …) a user may have: 20,000 e-mails
 * per user made every filter and PATCH over those users slow. Real directories hold a handful.
 */
export const MAX_MULTI_VALUES = 100;

/** The elements of a multi-valued attribute; a single value is taken as a one-element list, null as none. */
export function coerceMultiValued(
  attribute: ScimAttributeDefinition,
  raw: unknown,
  label: string,
): ScimJsonValue[] {
  let source: unknown = raw;
  if (typeof source === 'string' && attribute.type === 'complex') {
    const parsed = parseJsonText(source, true);
    if (parsed !== undefined) source = parsed;
  }
  if (source === null || source === undefined) return [];
  const items: readonly unknown[] = Array.isArray(source) ? source : [source];
  if (items.length > MAX_MULTI_VALUES) {
    throw new ScimPatchError(
      'invalidValue',
      `${label} has ${String(items.length)} values; at most ${String(MAX_MULTI_VALUES)}`,
    );
  }
  const elements: ScimJsonValue[] = [];
  items.forEach((item, index) => {
    if (item === null || item === undefined) return;
    const itemLabel = `${label}[${String(index)}]`;
    if (attribute.type === 'complex') {
      const element = coerceComplexValue(attribute, item, itemLabel, false);
      if (Object.keys(element).length > 0) elements.push(element);
    } else {
      elements.push(coerceSimpleValue(attribute, item, itemLabel));
    }
  });
  return elements;
}

function sameString(a: ScimJsonValue | undefined, b: ScimJsonValue | undefined, caseExact: boolean): boolean {
  if (typeof a === 'string' && typeof b === 'string') {
    return caseExact ? a === b : a.toLowerCase() === b.toLowerCase();
  }
  return jsonEqual(a ?? null, b ?? null);
}

/**
 * Whether two elements of a multi-valued attribute are "the same value" (RFC 7644 §3.5.2.1: adding a value that
 * is already there changes nothing). Elements with a `value` sub-attribute are identified by value and type, so
 * that re-adding an e-mail with `primary: true` updates it instead of duplicating it; others compare whole.
 */
export function sameElement(attribute: ScimAttributeDefinition, a: unknown, b: unknown): boolean {
  if (attribute.type !== 'complex') {
    return sameString(a as ScimJsonValue, b as ScimJsonValue, attribute.caseExact);
  }
  if (!isPlainObject(a) || !isPlainObject(b)) return false;
  const subs = attribute.subAttributes ?? [];
  const valueSub = findAttribute(subs, 'value');
  const typeSub = findAttribute(subs, 'type');
  const compared = valueSub !== undefined ? [valueSub, ...(typeSub ? [typeSub] : [])] : subs;
  return compared.every((sub) =>
    sameString(
      a[sub.name] as ScimJsonValue | undefined,
      b[sub.name] as ScimJsonValue | undefined,
      sub.caseExact,
    ),
  );
}

/**
 * Whether `element` is one a remove's value list names: every sub-attribute the listed value gives matches (so
 * `{"value":"x"}` names the element with that value whatever its type, `{"type":"home"}` every home one); a simple
 * value compares whole. A listed object that gives no known sub-attribute names nothing.
 */
export function matchesGivenKeys(
  attribute: ScimAttributeDefinition,
  element: unknown,
  given: unknown,
): boolean {
  if (attribute.type !== 'complex') {
    return sameString(element as ScimJsonValue, given as ScimJsonValue, attribute.caseExact);
  }
  if (!isPlainObject(element) || !isPlainObject(given)) return false;
  const keys = Object.keys(given);
  if (keys.length === 0) return false;
  return keys.every((key) => {
    const sub = findAttribute(attribute.subAttributes ?? [], key);
    return (
      sub !== undefined &&
      sameString(
        element[sub.name] as ScimJsonValue | undefined,
        given[key] as ScimJsonValue | undefined,
        sub.caseExact,
      )
    );
  });
}

export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, index) => jsonEqual(item, b[index]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].every((key) => jsonEqual(a[key] ?? null, b[key] ?? null));
  }
  return false;
}
