// In-memory evaluation of an RFC 7644 §3.4.2.2 filter, for the PATCH engine's value-filter paths
// (`emails[type eq "work"]`) only: list requests are translated into SQL instead. Follows §3.4.2.2's rules: a
// multi-valued attribute matches when any value matches, `pr` needs a non-empty value, and strings compare per
// RFC 7643 §2.2 `caseExact` (case-insensitively unless the table says otherwise; unknown attributes too).
import type { ScimAttributeDefinition, ScimAttributePath } from '../schema/scim-schema.types.js';
import {
  elementScope,
  lookupScopedAttribute,
  type ScimFilterScope,
  USER_FILTER_SCOPE,
} from './scim-filter-scope.js';
import type { ScimCompareOperator, ScimFilter, ScimFilterValue } from './scim-filter.types.js';

type PlainObject = Readonly<Record<string, unknown>>;

function isPlainObject(value: unknown): value is PlainObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads a property whose name matches case-insensitively (RFC 7643 §2.1). */
function readProperty(object: PlainObject, name: string): unknown {
  if (Object.hasOwn(object, name)) return object[name];
  const lower = name.toLowerCase();
  const key = Object.keys(object).find((candidate) => candidate.toLowerCase() === lower);
  return key === undefined ? undefined : object[key];
}

function isPresent(value: unknown): boolean {
  if (value === null || value === undefined || value === '') return false;
  if (Array.isArray(value)) return value.some(isPresent);
  if (isPlainObject(value)) return Object.values(value).some(isPresent);
  return true;
}

interface Located {
  readonly values: readonly unknown[];
  readonly leaf?: ScimAttributeDefinition;
  readonly attribute?: ScimAttributeDefinition;
}

function flatten(value: unknown): unknown[] {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value.filter((item) => item !== undefined && item !== null) : [value];
}

function locate(resource: PlainObject, scope: ScimFilterScope, path: ScimAttributePath): Located {
  const found = lookupScopedAttribute(scope, path);
  let container: unknown = resource;
  if (found.found && found.extensionId !== undefined) container = readProperty(resource, found.extensionId);
  else if (!found.found && path.schema !== undefined) container = readProperty(resource, path.schema);
  if (!isPlainObject(container)) return { values: [] };
  const attributeName = found.found ? found.attribute.name : path.attribute;
  const values = flatten(readProperty(container, attributeName));
  const attribute = found.found ? found.attribute : undefined;
  if (path.subAttribute === undefined) {
    return { values, ...(attribute ? { attribute, leaf: attribute } : {}) };
  }
  const subName = found.found && found.subAttribute ? found.subAttribute.name : path.subAttribute;
  const subValues = values.flatMap((value) =>
    isPlainObject(value) ? flatten(readProperty(value, subName)) : [],
  );
  const leaf = found.found ? found.subAttribute : undefined;
  return { values: subValues, ...(attribute ? { attribute } : {}), ...(leaf ? { leaf } : {}) };
}

function compareOrdered(difference: number, operator: ScimCompareOperator): boolean {
  switch (operator) {
    case 'eq':
      return difference === 0;
    case 'ne':
      return difference !== 0;
    case 'gt':
      return difference > 0;
    case 'ge':
      return difference >= 0;
    case 'lt':
      return difference < 0;
    case 'le':
      return difference <= 0;
    case 'co':
    case 'sw':
    case 'ew':
      return false;
  }
}

function compareStrings(
  actual: string,
  operator: ScimCompareOperator,
  expected: string,
  leaf: ScimAttributeDefinition | undefined,
): boolean {
  if (leaf?.type === 'dateTime' && !['co', 'sw', 'ew'].includes(operator)) {
    const left = Date.parse(actual);
    const right = Date.parse(expected);
    if (!Number.isNaN(left) && !Number.isNaN(right)) return compareOrdered(left - right, operator);
  }
  const caseExact = leaf?.caseExact ?? false;
  const a = caseExact ? actual : actual.toLowerCase();
  const b = caseExact ? expected : expected.toLowerCase();
  switch (operator) {
    case 'co':
      return a.includes(b);
    case 'sw':
      return a.startsWith(b);
    case 'ew':
      return a.endsWith(b);
    case 'eq':
    case 'ne':
    case 'gt':
    case 'ge':
    case 'lt':
    case 'le':
      return compareOrdered(a < b ? -1 : a > b ? 1 : 0, operator);
  }
}

function isPrimaryFlag(leaf: ScimAttributeDefinition | undefined): boolean {
  return leaf?.type === 'boolean' && leaf.name === 'primary';
}

function compareValue(
  actual: unknown,
  operator: ScimCompareOperator,
  expected: ScimFilterValue,
  leaf: ScimAttributeDefinition | undefined,
): boolean {
  if (expected === null || actual === null || actual === undefined) {
    const bothNull = expected === null && (actual === null || actual === undefined);
    if (operator === 'eq') return bothNull;
    if (operator === 'ne') return !bothNull;
    return false;
  }
  let wanted: ScimFilterValue = expected;
  if (typeof actual === 'boolean' && typeof expected === 'string' && /^(true|false)$/i.test(expected)) {
    wanted = expected.toLowerCase() === 'true';
  }
  if (typeof actual === 'string' && typeof wanted === 'string') {
    return compareStrings(actual, operator, wanted, leaf);
  }
  if (typeof actual === 'number' && typeof wanted === 'number') {
    return compareOrdered(actual - wanted, operator);
  }
  if (typeof actual === 'boolean' && typeof wanted === 'boolean') {
    if (operator === 'eq') return actual === wanted;
    if (operator === 'ne') return actual !== wanted;
    return false;
  }
  return operator === 'ne';
}

// Unknown attributes still evaluate (as case-insensitive strings) so that the evaluator is total.
const unknownComplex: ScimAttributeDefinition = {
  name: '',
  type: 'complex',
  multiValued: true,
  required: false,
  caseExact: false,
  mutability: 'readWrite',
  returned: 'default',
  uniqueness: 'none',
  description: '',
  subAttributes: [],
};

function evaluate(filter: ScimFilter, resource: PlainObject, scope: ScimFilterScope): boolean {
  switch (filter.kind) {
    case 'and':
      return evaluate(filter.left, resource, scope) && evaluate(filter.right, resource, scope);
    case 'or':
      return evaluate(filter.left, resource, scope) || evaluate(filter.right, resource, scope);
    case 'not':
      return !evaluate(filter.filter, resource, scope);
    case 'present':
      return locate(resource, scope, filter.path).values.some(isPresent);
    case 'compare': {
      const located = locate(resource, scope, filter.path);
      let { values, leaf } = located;
      // `emails eq "x"` on a complex multi-valued attribute compares each element's `value`.
      if (filter.path.subAttribute === undefined && located.attribute?.type === 'complex') {
        const valueSub = located.attribute.subAttributes?.find((sub) => sub.name === 'value');
        values = values.flatMap((item) => (isPlainObject(item) ? flatten(readProperty(item, 'value')) : []));
        leaf = valueSub;
      }
      // RFC 7643 §2.4: an absent `primary` means false, inside an element (`emails[primary eq false]`) and in the
      // dotted form (`emails.primary eq false`: some element's primary, false where the element has none). A user
      // without elements still has no value at all.
      if (
        filter.value !== null &&
        filter.path.subAttribute !== undefined &&
        located.attribute?.multiValued === true &&
        isPrimaryFlag(leaf)
      ) {
        const { subAttribute: _sub, ...container } = filter.path;
        const elements = locate(resource, scope, container).values.filter(isPlainObject);
        if (elements.length > 0) {
          values = elements.map((element) => readProperty(element, leaf?.name ?? 'primary') ?? false);
        }
      }
      const absentIsFalse =
        values.length === 0 &&
        filter.value !== null &&
        filter.path.subAttribute === undefined &&
        isPrimaryFlag(leaf);
      const candidates = absentIsFalse ? [false] : values.length === 0 ? [null] : values;
      return candidates.some((value) => compareValue(value, filter.operator, filter.value, leaf));
    }
    case 'valuePath': {
      const located = locate(resource, scope, filter.path);
      const innerScope: ScimFilterScope | undefined =
        located.attribute?.type === 'complex' ? elementScope(located.attribute) : undefined;
      return located.values.some(
        (element) =>
          isPlainObject(element) &&
          evaluate(filter.filter, element, innerScope ?? { kind: 'element', attribute: unknownComplex }),
      );
    }
  }
}

/**
 * True when `resource` matches `filter`. `scope` says what the filter's paths are relative to: the whole User by
 * default, or one element of a multi-valued attribute (`elementScope(emailsDefinition)`).
 */
export function matchesFilter(
  filter: ScimFilter,
  resource: Readonly<Record<string, unknown>>,
  scope: ScimFilterScope = USER_FILTER_SCOPE,
): boolean {
  return evaluate(filter, resource, scope);
}
