// Checks a parsed filter against the attribute table and rewrites it into canonical form, the input a SQL
// translator can rely on. RFC 7644 §3.4.2.2: unknown attributes and unsupported attribute/operator combinations
// (gt/ge/lt/le on booleans, binaries or complex attributes) are `invalidFilter`; a comparison on a complex
// multi-valued attribute without sub-attribute (`emails co "x"`) compares its `value` sub-attribute.
import type { ScimAttributeDefinition, ScimAttributePath } from '../schema/scim-schema.types.js';
import { ScimFilterError } from './scim-filter.errors.js';
import { printAttributePath } from './scim-filter-printer.js';
import {
  elementScope,
  lookupScopedAttribute,
  type ScimFilterScope,
  USER_FILTER_SCOPE,
} from './scim-filter-scope.js';
import type { ScimCompareOperator, ScimFilter, ScimFilterValue } from './scim-filter.types.js';

const ORDERING: readonly ScimCompareOperator[] = ['gt', 'ge', 'lt', 'le'];
const SUBSTRING: readonly ScimCompareOperator[] = ['co', 'sw', 'ew'];

interface CanonicalTarget {
  readonly path: ScimAttributePath;
  /** The attribute whose value is compared (the sub-attribute when there is one). */
  readonly leaf: ScimAttributeDefinition;
  readonly attribute: ScimAttributeDefinition;
}

function fail(message: string): never {
  throw new ScimFilterError(message, -1, 'invalidFilter');
}

function canonicalTarget(scope: ScimFilterScope, path: ScimAttributePath): CanonicalTarget {
  const found = lookupScopedAttribute(scope, path);
  if (!found.found) return fail(found.message);
  const canonical: ScimAttributePath = {
    ...(found.extensionId !== undefined ? { schema: found.extensionId } : {}),
    attribute: found.attribute.name,
    ...(found.subAttribute !== undefined ? { subAttribute: found.subAttribute.name } : {}),
  };
  return { path: canonical, leaf: found.subAttribute ?? found.attribute, attribute: found.attribute };
}

function coerceLiteral(
  target: CanonicalTarget,
  operator: ScimCompareOperator,
  value: ScimFilterValue,
): ScimFilterValue {
  const name = printAttributePath(target.path);
  const { type } = target.leaf;
  if (value === null) {
    if (operator === 'eq' || operator === 'ne') return null;
    return fail(`Operator "${operator}" cannot compare "${name}" with null`);
  }
  if (ORDERING.includes(operator) && (type === 'boolean' || type === 'binary' || type === 'complex')) {
    return fail(`Operator "${operator}" is not supported for ${type} attribute "${name}"`);
  }
  if (SUBSTRING.includes(operator) && !(type === 'string' || type === 'reference' || type === 'binary')) {
    return fail(`Operator "${operator}" is not supported for ${type} attribute "${name}"`);
  }
  switch (type) {
    case 'boolean':
      if (typeof value === 'boolean') return value;
      // Entra and Okta send booleans as strings in bodies; accept the same in filters.
      if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
      return fail(`"${name}" is a boolean; compare it with true or false`);
    case 'integer':
      if (typeof value === 'number' && Number.isInteger(value)) return value;
      return fail(`"${name}" is an integer; compare it with an integer`);
    case 'decimal':
      if (typeof value === 'number') return value;
      return fail(`"${name}" is a number; compare it with a number`);
    case 'dateTime':
      if (typeof value === 'string' && !Number.isNaN(Date.parse(value))) return value;
      return fail(`"${name}" is a dateTime; compare it with an xsd:dateTime string`);
    case 'string':
    case 'reference':
    case 'binary':
      if (typeof value === 'string') return value;
      return fail(`"${name}" is a string; compare it with a string in double quotes`);
    case 'complex':
      return fail(`"${name}" is complex; compare one of its sub-attributes`);
  }
}

function resolveIn(filter: ScimFilter, scope: ScimFilterScope): ScimFilter {
  switch (filter.kind) {
    case 'and':
    case 'or':
      return {
        kind: filter.kind,
        left: resolveIn(filter.left, scope),
        right: resolveIn(filter.right, scope),
      };
    case 'not':
      return { kind: 'not', filter: resolveIn(filter.filter, scope) };
    case 'present':
      return { kind: 'present', path: canonicalTarget(scope, filter.path).path };
    case 'compare': {
      let target = canonicalTarget(scope, filter.path);
      if (target.path.subAttribute === undefined && target.attribute.type === 'complex') {
        const value = target.attribute.subAttributes?.find((sub) => sub.name === 'value');
        if (value === undefined) {
          return fail(`"${printAttributePath(target.path)}" is complex; compare one of its sub-attributes`);
        }
        target = { ...target, path: { ...target.path, subAttribute: value.name }, leaf: value };
      }
      return {
        kind: 'compare',
        path: target.path,
        operator: filter.operator,
        value: coerceLiteral(target, filter.operator, filter.value),
      };
    }
    case 'valuePath': {
      const target = canonicalTarget(scope, filter.path);
      if (target.path.subAttribute !== undefined || target.attribute.type !== 'complex') {
        return fail(
          `A value filter needs a complex attribute, "${printAttributePath(target.path)}" is not one`,
        );
      }
      return {
        kind: 'valuePath',
        path: target.path,
        filter: resolveIn(filter.filter, elementScope(target.attribute)),
      };
    }
  }
}

/**
 * Validates `filter` against the schema of `scope` (the User resource by default) and returns it with canonical
 * attribute names: extension attributes keep their schema URN, core ones drop it. Throws `ScimFilterError`
 * (`invalidFilter`, position -1).
 */
export function resolveFilter(filter: ScimFilter, scope: ScimFilterScope = USER_FILTER_SCOPE): ScimFilter {
  return resolveIn(filter, scope);
}
