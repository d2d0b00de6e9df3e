// The SQL text pieces of filter translation: quoting of identifiers and JSON keys, JSON access per dialect,
// LIKE/GLOB escaping and operators. Only names from the attribute table or the code reach the quoting functions;
// values always travel as bound parameters.
import { SQLITE_UNICODE_LOWER } from '../../database/sqlite-functions.js';
import type { ScimCompareOperator, ScimFilter } from '../filter/scim-filter.types.js';

export type SqlDialect = 'sqlite' | 'postgres';

export type SqlParameter = string | number | Date;

export interface SqlCondition {
  readonly sql: string;
  readonly parameters: Readonly<Record<string, SqlParameter>>;
}

export const TRUE = '(1 = 1)';
export const FALSE = '(1 = 0)';
export const SAFE_IDENTIFIER = /^[A-Za-z0-9_:.$-]+$/;

/** A SQL identifier in double quotes; only names from the attribute table or the code reach it. */
export function quoteIdentifier(name: string): string {
  if (!SAFE_IDENTIFIER.test(name)) throw new Error(`Unexpected identifier ${JSON.stringify(name)}`);
  return `"${name}"`;
}

export function quoteJsonKey(name: string): string {
  if (!SAFE_IDENTIFIER.test(name)) throw new Error(`Unexpected JSON key ${JSON.stringify(name)}`);
  return name;
}

/** A scalar read from a JSON object expression at `keys` (text on PostgreSQL, the JSON type's value on SQLite). */
export function jsonScalar(dialect: SqlDialect, objectExpression: string, keys: readonly string[]): string {
  if (dialect === 'postgres') {
    const path = keys.map((key) => `'${quoteJsonKey(key)}'`);
    const last = path.pop() ?? "''";
    return `(${[objectExpression, ...path].join(' -> ')} ->> ${last})`;
  }
  return `json_extract(${objectExpression}, '${jsonPathOf(keys)}')`;
}

/** SQLite's JSON path for `keys` ($."a"."b"). */
export function jsonPathOf(keys: readonly string[]): string {
  return `$${keys.map((key) => `."${quoteJsonKey(key)}"`).join('')}`;
}

export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}

export function escapeGlob(text: string): string {
  return text.replace(/[*?[]/g, (char) => `[${char}]`);
}

/**
 * The case fold for a comparison with `text`. SQLite's LOWER() folds ASCII letters only, so a comparison folds
 * through scim_lower (JavaScript's toLowerCase, as the evaluator; registered on every SQLite connection by
 * src/database/data-source.ts) unless the built-in gives the same answer: for an ASCII value without `i` or `k`
 * it does for a match (eq, ne, co, sw, ew): the only characters whose lower case holds an ASCII letter are
 * U+0130 `İ` → `i̇` and the Kelvin sign → `k`, and any other non-ASCII character stays non-ASCII in either case,
 * so matches nothing in such a value. An ordering (gt, ge, lt, le) always folds through scim_lower: a stored
 * Kelvin sign sorts as `k` there. That keeps the common match free of a call into JavaScript per row.
 */
export function lowerFunction(dialect: SqlDialect, text: string, ordering = false): string {
  if (dialect === 'postgres') return 'LOWER';
  return !ordering && isAscii(text) && !/[ik]/i.test(text) ? 'LOWER' : SQLITE_UNICODE_LOWER;
}

export function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** True when JSON.stringify writes `text` unchanged (no quote, backslash, control character or lone surrogate). */
export function isVerbatimInJson(text: string): boolean {
  return text !== '' && JSON.stringify(text) === `"${text}"`;
}

/**
 * A string that must occur in any element matching `filter` (a positive eq/co/sw/ew on a string); the longest one
 * when an `and` offers several, none under `or`/`not`.
 */
export function requiredText(filter: ScimFilter): string | undefined {
  switch (filter.kind) {
    case 'compare':
      return ['eq', 'co', 'sw', 'ew'].includes(filter.operator) &&
        typeof filter.value === 'string' &&
        isVerbatimInJson(filter.value)
        ? filter.value
        : undefined;
    case 'and': {
      const left = requiredText(filter.left);
      const right = requiredText(filter.right);
      if (left === undefined) return right;
      if (right === undefined) return left;
      return right.length > left.length ? right : left;
    }
    case 'or':
    case 'not':
    case 'present':
    case 'valuePath':
      return undefined;
  }
}

export function sqlOperator(operator: ScimCompareOperator): string {
  switch (operator) {
    case 'eq':
      return '=';
    case 'ne':
      return '<>';
    case 'gt':
      return '>';
    case 'ge':
      return '>=';
    case 'lt':
      return '<';
    case 'le':
      return '<=';
    case 'co':
    case 'sw':
    case 'ew':
      throw new Error(`"${operator}" has no single SQL operator`);
  }
}
