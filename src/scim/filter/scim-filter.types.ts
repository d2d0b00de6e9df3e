// AST of an RFC 7644 §3.4.2.2 filter. Plain data with one node kind per grammar construct so that a later SQL
// translator (TypeORM query builder) can walk it with an exhaustive switch; grouping parentheses leave no node.
import type { ScimAttributePath } from '../schema/scim-schema.types.js';

export type { ScimAttributePath };

export type ScimCompareOperator = 'eq' | 'ne' | 'co' | 'sw' | 'ew' | 'gt' | 'ge' | 'lt' | 'le';

export const SCIM_COMPARE_OPERATORS: readonly ScimCompareOperator[] = [
  'eq',
  'ne',
  'co',
  'sw',
  'ew',
  'gt',
  'ge',
  'lt',
  'le',
];

/** compValue of the ABNF: JSON false / null / true / number / string. */
export type ScimFilterValue = string | number | boolean | null;

export interface ScimCompareFilter {
  readonly kind: 'compare';
  readonly path: ScimAttributePath;
  readonly operator: ScimCompareOperator;
  readonly value: ScimFilterValue;
}

export interface ScimPresentFilter {
  readonly kind: 'present';
  readonly path: ScimAttributePath;
}

export interface ScimLogicalFilter {
  readonly kind: 'and' | 'or';
  readonly left: ScimFilter;
  readonly right: ScimFilter;
}

export interface ScimNotFilter {
  readonly kind: 'not';
  readonly filter: ScimFilter;
}

/**
 * `emails[type eq "work"]`: matches when at least one element of `path` matches `filter`, whose paths are relative
 * to the element (sub-attribute names). Entra's `emails[type eq "work"].value eq "x"` is parsed into the
 * equivalent `emails[type eq "work" and value eq "x"]`.
 */
export interface ScimValuePathFilter {
  readonly kind: 'valuePath';
  readonly path: ScimAttributePath;
  readonly filter: ScimFilter;
}

export type ScimFilter =
  ScimCompareFilter | ScimPresentFilter | ScimLogicalFilter | ScimNotFilter | ScimValuePathFilter;

/** A PATCH `path` (RFC 7644 §3.5.2, ABNF `PATH = attrPath / valuePath [subAttr]`). */
export interface ScimPatchPath {
  readonly path: ScimAttributePath;
  readonly valueFilter?: ScimFilter;
  /** The sub-attribute after the closing bracket, e.g. `value` in `emails[type eq "work"].value`. */
  readonly subAttribute?: string;
}
