// RFC 7644 §3.4.2.2 list filters as the service accepts them: parsed, checked against the attribute table, and
// bounded so that none reaches the database's own limits.
import { parseFilter } from './filter/scim-filter-parser.js';
import { resolveFilter } from './filter/scim-filter-resolver.js';
import type { ScimFilter } from './filter/scim-filter.types.js';
import { rethrowEngineError, ScimError, ScimErrorCode } from './scim.errors.js';

/**
 * Bounds on a list filter, so that no filter reaches the database's own limits (SQLite refuses expressions nested
 * deeper than 1000 and statements with more than 32766 parameters) or the parser's stack: 400 invalidFilter instead
 * of a 500. A hundred levels still allow a chain of a hundred `or`s, which is far more than Entra or Okta send.
 */
export const MAX_FILTER_LENGTH = 10_000;
export const MAX_FILTER_DEPTH = 100;
/**
 * Comparisons per filter: a 240-term filter over users with thousands of emails each held the process
 * for seconds. Past this, 400 tooMany: the filter is more than the service is willing to evaluate.
 */
export const MAX_FILTER_TERMS = 100;

/** Comparisons (compare and present nodes) in a filter. */
export function countFilterTerms(filter: ScimFilter): number {
  switch (filter.kind) {
    case 'and':
    case 'or':
      return countFilterTerms(filter.left) + countFilterTerms(filter.right);
    case 'not':
    case 'valuePath':
      return countFilterTerms(filter.filter);
    case 'compare':
    case 'present':
      return 1;
  }
}

function depthOf(filter: ScimFilter): number {
  switch (filter.kind) {
    case 'and':
    case 'or':
      return 1 + Math.max(depthOf(filter.left), depthOf(filter.right));
    case 'not':
    case 'valuePath':
      return 1 + depthOf(filter.filter);
    case 'compare':
    case 'present':
      return 1;
  }
}

/**
 * A list request's `filter`, parsed, bounded and passed through `resolve` (by default the User attribute table's
 * check; Groups check their few attributes while translating).
 */
export function parseListFilter(
  text: string,
  resolve: (filter: ScimFilter) => ScimFilter = resolveFilter,
): ScimFilter {
  const tooComplex = (detail: string): ScimError => ScimError.badRequest(ScimErrorCode.InvalidFilter, detail);
  if (text.length > MAX_FILTER_LENGTH) {
    throw tooComplex(`The filter is longer than ${String(MAX_FILTER_LENGTH)} characters`);
  }
  if (text.includes('\u0000')) throw tooComplex('The filter contains a NUL character (U+0000)');
  let filter: ScimFilter;
  try {
    filter = resolve(parseFilter(text));
  } catch (error) {
    rethrowEngineError(error, ScimErrorCode.InvalidFilter);
  }
  const terms = countFilterTerms(filter);
  if (terms > MAX_FILTER_TERMS) {
    throw ScimError.badRequest(
      ScimErrorCode.TooMany,
      `The filter has ${String(terms)} comparisons; at most ${String(MAX_FILTER_TERMS)}`,
    );
  }
  if (depthOf(filter) > MAX_FILTER_DEPTH) {
    throw tooComplex(`The filter nests deeper than ${String(MAX_FILTER_DEPTH)} levels`);
  }
  return filter;
}
