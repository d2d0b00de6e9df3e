// Canonical text for an RFC 7644 §3.4.2.2 filter AST: lower-case operators, single spaces, JSON literals, and
// parentheses exactly where the tree shape needs them (and binds tighter than or; both associate to the left),
// so that parseFilter(printFilter(ast)) rebuilds the same tree.
import type { ScimAttributePath, ScimFilter, ScimFilterValue } from './scim-filter.types.js';

export function printAttributePath(path: ScimAttributePath): string {
  const name = path.subAttribute === undefined ? path.attribute : `${path.attribute}.${path.subAttribute}`;
  return path.schema === undefined ? name : `${path.schema}:${name}`;
}

export function printFilterValue(value: ScimFilterValue): string {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new RangeError(`A filter number must be finite, got ${String(value)}`);
    // JSON.stringify(-0) is "0"; keep the sign so the value survives a round trip.
    return Object.is(value, -0) ? '-0' : JSON.stringify(value);
  }
  return JSON.stringify(value);
}

function group(filter: ScimFilter, needsParentheses: boolean): string {
  const text = printFilter(filter);
  return needsParentheses ? `(${text})` : text;
}

export function printFilter(filter: ScimFilter): string {
  switch (filter.kind) {
    case 'compare':
      return `${printAttributePath(filter.path)} ${filter.operator} ${printFilterValue(filter.value)}`;
    case 'present':
      return `${printAttributePath(filter.path)} pr`;
    case 'and':
      return `${group(filter.left, filter.left.kind === 'or')} and ${group(
        filter.right,
        filter.right.kind === 'or' || filter.right.kind === 'and',
      )}`;
    case 'or':
      return `${printFilter(filter.left)} or ${group(filter.right, filter.right.kind === 'or')}`;
    case 'not':
      return `not (${printFilter(filter.filter)})`;
    case 'valuePath':
      return `${printAttributePath(filter.path)}[${printFilter(filter.filter)}]`;
  }
}
