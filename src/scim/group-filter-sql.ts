// RFC 7644 §3.4.2.2 filters on Groups as SQL over scim_groups and scim_group_members: the filters Entra ID and Okta
// send (`displayName eq`, `externalId eq`, `id eq "…" and members eq "<userId>"` for a membership check,
// `members.value eq`, `members[value eq "…"]`) plus the other string operators on displayName/externalId, `pr`,
// `and`/`or`/`not`. Every condition uses an index: display_name_lower for displayName, external_id, the primary
// keys of both tables for id and membership. Values are always bound parameters.
import type { ScimAttributePath, ScimCompareFilter, ScimFilter } from './filter/scim-filter.types.js';
import { CORE_GROUP_SCHEMA_ID } from './schema/group-schema.js';
import { parseListFilter } from './scim-list-filter.js';
import { ScimError, ScimErrorCode } from './scim.errors.js';
import type { SqlDialect } from './filter-sql/sql-text.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface GroupSqlCondition {
  sql: string;
  parameters: Record<string, string>;
}

/** Characters as SQL's substr/right count them (code points; a string's length counts UTF-16 units). */
function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

function invalid(message: string): never {
  throw ScimError.badRequest(ScimErrorCode.InvalidFilter, message);
}

type GroupFilterAttribute = 'id' | 'externalId' | 'displayName' | 'members';

function attributeOf(path: ScimAttributePath): GroupFilterAttribute {
  if (path.schema !== undefined && path.schema.toLowerCase() !== CORE_GROUP_SCHEMA_ID.toLowerCase()) {
    invalid(`"${path.schema}" is not a schema of the Group resource`);
  }
  const name = path.attribute.toLowerCase();
  const sub = path.subAttribute?.toLowerCase();
  if (name === 'members' && (sub === undefined || sub === 'value')) return 'members';
  if (sub === undefined) {
    if (name === 'id') return 'id';
    if (name === 'externalid') return 'externalId';
    if (name === 'displayname') return 'displayName';
  }
  const printed = `${path.attribute}${path.subAttribute !== undefined ? `.${path.subAttribute}` : ''}`;
  return invalid(
    `Groups can be filtered on id, externalId, displayName and members (members.value), not on "${printed}"`,
  );
}

class GroupFilterTranslator {
  private counter = 0;
  readonly parameters: Record<string, string> = {};

  constructor(
    private readonly dialect: SqlDialect,
    private readonly alias: string,
  ) {}

  private bind(value: string): string {
    const name = `scimg${String(this.counter++)}`;
    this.parameters[name] = value;
    return `:${name}`;
  }

  private column(name: string): string {
    return `"${this.alias}"."${name}"`;
  }

  /** The group has a member (row "scim_gm") meeting `condition` (the user id given, or any). */
  private membership(userId: string | undefined, condition?: string): string {
    const member = `SELECT 1 FROM "scim_group_members" "scim_gm" WHERE "scim_gm"."group_id" = ${this.column('id')}`;
    if (condition !== undefined) return `EXISTS (${member} AND ${condition})`;
    return userId === undefined
      ? `EXISTS (${member})`
      : `EXISTS (${member} AND "scim_gm"."user_id" = ${this.bind(userId)})`;
  }

  /** `column sw/ew value` for a non-empty value. */
  private affix(column: string, operator: 'sw' | 'ew', value: string): string {
    const length = String(codePoints(value));
    if (operator === 'sw') return `COALESCE(substr(${column}, 1, ${length}) = ${this.bind(value)}, FALSE)`;
    return this.dialect === 'postgres'
      ? `COALESCE(right(${column}, ${length}) = ${this.bind(value)}, FALSE)`
      : `COALESCE(substr(${column}, -${length}) = ${this.bind(value)}, FALSE)`;
  }

  /** `column <op> value` for strings (value already lower-cased for case-insensitive columns). */
  private compareString(column: string, operator: ScimCompareFilter['operator'], value: string): string {
    switch (operator) {
      case 'eq':
        return `COALESCE(${column} = ${this.bind(value)}, FALSE)`;
      case 'ne':
        return `COALESCE(${column} <> ${this.bind(value)}, TRUE)`;
      // substr/right count characters (code points), not UTF-16 units: an emoji is one. Every string starts and
      // ends with "" (SQLite's substr(x, -0) would be all of x).
      case 'sw':
      case 'ew':
        if (value === '') return `(${column} IS NOT NULL)`;
        return this.affix(column, operator, value);
      case 'co':
        return this.dialect === 'postgres'
          ? `COALESCE(strpos(${column}, ${this.bind(value)}) > 0, FALSE)`
          : `COALESCE(instr(${column}, ${this.bind(value)}) > 0, FALSE)`;
      case 'gt':
      case 'ge':
      case 'lt':
      case 'le':
        return invalid(`"${operator}" is not supported on Group attributes`);
    }
  }

  private compare(filter: ScimCompareFilter): string {
    const attribute = attributeOf(filter.path);
    if (typeof filter.value !== 'string') {
      return invalid(`${attribute} is compared with a string, got ${JSON.stringify(filter.value)}`);
    }
    switch (attribute) {
      case 'id':
      case 'members': {
        if (filter.operator !== 'eq' && filter.operator !== 'ne') {
          invalid(`${attribute} supports eq and ne, not "${filter.operator}"`);
        }
        const id = filter.value.trim().toLowerCase();
        const matches = !UUID.test(id)
          ? 'FALSE'
          : attribute === 'id'
            ? `${this.column('id')} = ${this.bind(id)}`
            : this.membership(id);
        return filter.operator === 'eq' ? `(${matches})` : `(NOT (${matches}))`;
      }
      case 'externalId':
        return this.compareString(this.column('external_id'), filter.operator, filter.value);
      case 'displayName':
        return this.compareString(
          this.column('display_name_lower'),
          filter.operator,
          filter.value.toLowerCase(),
        );
    }
  }

  translate(filter: ScimFilter): string {
    switch (filter.kind) {
      case 'and':
        return `(${this.translate(filter.left)} AND ${this.translate(filter.right)})`;
      case 'or':
        return `(${this.translate(filter.left)} OR ${this.translate(filter.right)})`;
      case 'not':
        return `(NOT ${this.translate(filter.filter)})`;
      case 'compare':
        return this.compare(filter);
      case 'present': {
        const attribute = attributeOf(filter.path);
        switch (attribute) {
          case 'id':
          case 'displayName':
            return 'TRUE';
          case 'externalId':
            return `(${this.column('external_id')} IS NOT NULL)`;
          case 'members':
            return this.membership(undefined);
        }
        break;
      }
      case 'valuePath': {
        // members[…]: one member matching the whole bracket (RFC 7644 §3.4.2.2), so `members[not (value eq "a")]`
        // is a group with a member other than a, and `members[value eq "a" and value eq "b"]` matches none.
        if (attributeOf(filter.path) !== 'members' || filter.path.subAttribute !== undefined) {
          invalid('Only members[value eq "<id>"] is a value path of a Group');
        }
        return this.membership(undefined, this.memberCondition(filter.filter));
      }
    }
    return invalid('Unsupported filter');
  }

  /** A condition on one member row ("scim_gm") from the filter inside members[…], where only `value` is named. */
  private memberCondition(filter: ScimFilter): string {
    switch (filter.kind) {
      case 'and':
        return `(${this.memberCondition(filter.left)} AND ${this.memberCondition(filter.right)})`;
      case 'or':
        return `(${this.memberCondition(filter.left)} OR ${this.memberCondition(filter.right)})`;
      case 'not':
        return `(NOT ${this.memberCondition(filter.filter)})`;
      case 'compare':
      case 'present': {
        if (filter.path.attribute.toLowerCase() !== 'value' || filter.path.subAttribute !== undefined) {
          invalid('Inside members[…] only value can be compared');
        }
        if (filter.kind === 'present') return 'TRUE'; // every member has a value
        if (typeof filter.value !== 'string') {
          return invalid(`members.value is compared with a string, got ${JSON.stringify(filter.value)}`);
        }
        if (filter.operator !== 'eq' && filter.operator !== 'ne') {
          invalid(`members.value supports eq and ne, not "${filter.operator}"`);
        }
        const id = filter.value.trim().toLowerCase();
        const equal = UUID.test(id) ? `"scim_gm"."user_id" = ${this.bind(id)}` : 'FALSE';
        return filter.operator === 'eq' ? `(${equal})` : `(NOT (${equal}))`;
      }
      case 'valuePath':
        return invalid('Value paths cannot nest');
    }
  }
}

/** A Groups list `filter` as one SQL condition on the row aliased `alias`. Throws ScimError (400). */
export function groupFilterToSql(text: string, dialect: SqlDialect, alias: string): GroupSqlCondition {
  const filter = parseListFilter(text, (parsed) => parsed);
  const translator = new GroupFilterTranslator(dialect, alias);
  const sql = translator.translate(filter);
  return { sql, parameters: translator.parameters };
}
