// How one value read by a filter (a Leaf: a column, a JSON scalar or an e-mail row column) is compared with a
// literal, per attribute type and dialect. Each condition is TRUE or FALSE, never SQL NULL (see scim-filter-sql.ts).
import { ScimFilterError } from '../filter/scim-filter.errors.js';
import type { ScimCompareOperator, ScimFilterValue } from '../filter/scim-filter.types.js';
import type { ScimAttributeDefinition } from '../schema/scim-schema.types.js';
import { emailValueKey } from '../user-email-rows.js';
import {
  escapeGlob,
  escapeLike,
  FALSE,
  lowerFunction,
  sqlOperator,
  type SqlDialect,
  type SqlParameter,
} from './sql-text.js';

/** What a comparison reads: one SQL expression and the attribute definition that says how to compare it. */
export interface Leaf {
  readonly expression: string;
  readonly definition: ScimAttributeDefinition;
  /** The column already holds the lower-cased value (userName): compare with a lower-cased parameter. */
  readonly lowered: boolean;
  /** A PostgreSQL uuid column: compared as text so that a malformed id is no match rather than an error. */
  readonly uuid: boolean;
  /** A real column (never holds '' for "absent"), rather than a value read out of the JSON document. */
  readonly column: boolean;
  /** A boolean column (scim_user_emails.is_primary) rather than JSON's true/false read as 1/0 or 'true'/'false'. */
  readonly booleanColumn?: boolean;
  /** An indexed column holding emailValueKey(the value): `eq` also compares it, so that the index is used. */
  readonly key?: string;
}

export function isPrimaryFlag(definition: ScimAttributeDefinition): boolean {
  return definition.type === 'boolean' && definition.name === 'primary';
}

/** Writes leaf comparisons, binding literals through the translator that owns the parameters. */
export class LeafComparisons {
  constructor(
    private readonly dialect: SqlDialect,
    private readonly bind: (value: SqlParameter) => string,
  ) {}

  private get postgres(): boolean {
    return this.dialect === 'postgres';
  }

  /** A comparison on one possibly-null value, TRUE or FALSE (never NULL). */
  compareSingle(leaf: Leaf, operator: ScimCompareOperator, value: ScimFilterValue): string {
    if (value !== null && isPrimaryFlag(leaf.definition)) {
      // An absent primary is false (RFC 7643 §2.4), as the evaluator reads it.
      const absent = leaf.booleanColumn === true && this.postgres ? 'FALSE' : this.postgres ? "'false'" : '0';
      const absentIsFalse = `COALESCE(${leaf.expression}, ${absent})`;
      return this.booleanComparison({ ...leaf, expression: absentIsFalse }, operator, value);
    }
    const { expression } = leaf;
    if (value === null) {
      if (operator === 'eq') return `(${expression} IS NULL)`;
      if (operator === 'ne') return `(${expression} IS NOT NULL)`;
      return FALSE;
    }
    if (operator === 'ne') {
      return `(${expression} IS NULL OR NOT ${this.comparison(leaf, 'eq', value)})`;
    }
    return `(${expression} IS NOT NULL AND ${this.comparison(leaf, operator, value)})`;
  }

  /** The comparison of a non-null value with a non-null literal (its result is never NULL then). */
  comparison(leaf: Leaf, operator: ScimCompareOperator, value: Exclude<ScimFilterValue, null>): string {
    const { definition } = leaf;
    switch (definition.type) {
      case 'boolean':
        return this.booleanComparison(leaf, operator, value);
      case 'dateTime':
        return this.dateComparison(leaf, operator, value);
      case 'integer':
      case 'decimal':
        return this.numberComparison(leaf, operator, value);
      case 'string':
      case 'reference':
      case 'binary':
        return this.stringComparison(leaf, operator, String(value));
      case 'complex':
        throw new Error(`Complex attribute "${definition.name}" reached a comparison`);
    }
  }

  booleanComparison(leaf: Leaf, operator: ScimCompareOperator, value: ScimFilterValue): string {
    if (typeof value !== 'boolean') throw new Error('A boolean attribute needs a boolean literal');
    // SQLite's json_extract reads JSON true/false as 1/0 (and stores a boolean column as 1/0); PostgreSQL's ->> as
    // the text 'true'/'false'.
    const literal =
      leaf.booleanColumn === true && this.postgres
        ? value
          ? 'TRUE'
          : 'FALSE'
        : this.postgres
          ? this.bind(value ? 'true' : 'false')
          : value
            ? '1'
            : '0';
    if (operator === 'eq') return `(${leaf.expression} = ${literal})`;
    if (operator === 'ne') return `(${leaf.expression} <> ${literal})`;
    return FALSE;
  }

  dateComparison(leaf: Leaf, operator: ScimCompareOperator, value: ScimFilterValue): string {
    const instant = new Date(String(value));
    if (!leaf.column) {
      // No dateTime attribute lives in the JSON document today; refuse rather than compare text.
      throw new ScimFilterError(
        `"${leaf.definition.name}" cannot be compared as a date`,
        -1,
        'invalidFilter',
      );
    }
    return `(${leaf.expression} ${sqlOperator(operator)} ${this.bind(instant)})`;
  }

  numberComparison(leaf: Leaf, operator: ScimCompareOperator, value: ScimFilterValue): string {
    if (typeof value !== 'number') throw new Error('A number attribute needs a number literal');
    const expression = this.postgres ? `CAST(${leaf.expression} AS double precision)` : leaf.expression;
    return `(${expression} ${sqlOperator(operator)} ${this.bind(value)})`;
  }

  stringComparison(leaf: Leaf, operator: ScimCompareOperator, value: string): string {
    const caseExact = leaf.definition.caseExact || leaf.uuid;
    let left = leaf.uuid ? `CAST(${leaf.expression} AS text)` : leaf.expression;
    let text = value;
    let lowerRight = false;
    const ordering = operator === 'gt' || operator === 'ge' || operator === 'lt' || operator === 'le';
    const lower = lowerFunction(this.dialect, value, ordering);
    if (leaf.lowered) text = value.toLowerCase();
    else if (!caseExact) {
      left = `${lower}(${left})`;
      lowerRight = true;
    }
    const bound = (literal: string): string => {
      const parameter = this.bind(literal);
      return lowerRight ? `${lower}(${parameter})` : parameter;
    };
    switch (operator) {
      case 'eq':
      case 'ne':
      case 'gt':
      case 'ge':
      case 'lt':
      case 'le': {
        const collated =
          this.postgres && operator !== 'eq' && operator !== 'ne' ? `${left} COLLATE "C"` : left;
        const comparison = `(${collated} ${sqlOperator(operator)} ${bound(text)})`;
        if (operator === 'eq' && leaf.key !== undefined) {
          return `(${leaf.key} = ${this.bind(emailValueKey(text))} AND ${comparison})`;
        }
        return comparison;
      }
      case 'co':
      case 'sw':
      case 'ew': {
        const before = operator === 'co' || operator === 'ew';
        const after = operator === 'co' || operator === 'sw';
        // SQLite's LIKE ignores ASCII case, so a case-exact match there uses GLOB (case-sensitive) instead.
        if (caseExact && !this.postgres) {
          const pattern = `${before ? '*' : ''}${escapeGlob(text)}${after ? '*' : ''}`;
          return `(${left} GLOB ${this.bind(pattern)})`;
        }
        const pattern = `${before ? '%' : ''}${escapeLike(text)}${after ? '%' : ''}`;
        return `(${left} LIKE ${bound(pattern)} ESCAPE '\\')`;
      }
    }
  }
}
