// RFC 7644 §3.4.2.3 `sortBy` for Users. The attributes with a column (id, userName, externalId, meta.created,
// meta.lastModified) sort by it and its index; every other attribute the stored document holds sorts by its value
// there (a scan of the matching users, as a filter on it is): singular attributes and sub-attributes
// (`displayName`, `name.familyName`, the enterprise extension's `department` or `manager.value`), and multi-valued
// ones by "the value of the primary attribute, if any, or else the first value in the list" (`emails`,
// `emails.type`). Strings compare case-insensitively unless the schema says `caseExact`, in code-point order on
// both engines; resources without a value sort last ascending and first descending.
import { SQLITE_UNICODE_LOWER } from '../database/sqlite-functions.js';
import { parsePatchPath } from './filter/scim-filter-parser.js';
import { lookupScopedAttribute, USER_FILTER_SCOPE } from './filter/scim-filter-scope.js';
import { jsonPathOf, jsonScalar, quoteIdentifier, type SqlDialect } from './filter-sql/sql-text.js';

export type UserColumnSortKey = 'id' | 'userName' | 'externalId' | 'created' | 'lastModified';

/** A value of the stored JSON document to sort by. */
export interface DocumentSortKey {
  /** The path to the attribute in the document (an extension's attributes sit under its schema URN). */
  readonly keys: readonly string[];
  /** A multi-valued attribute: its primary element is compared, else its first. */
  readonly multiValued: boolean;
  /** The key compared within that element (a complex attribute's sub-attribute). */
  readonly elementKey?: string;
  readonly lowered: boolean;
  readonly numeric: boolean;
}

export type UserSortKey = UserColumnSortKey | DocumentSortKey;

export interface UserSort {
  key: UserSortKey;
  descending: boolean;
}

const COLUMN_KEYS: Readonly<Record<string, UserColumnSortKey>> = {
  id: 'id',
  username: 'userName',
  externalid: 'externalId',
  'meta.created': 'created',
  'meta.lastmodified': 'lastModified',
};

/** Computed per request or kept outside the document: not sortable. */
const NOT_IN_DOCUMENT = new Set(['schemas', 'meta', 'groups', 'password']);

/** The sort key `sortBy` names, or undefined when it names nothing a User can be sorted by. */
export function userSortKey(sortBy: string): UserSortKey | undefined {
  const name = sortBy.toLowerCase().replace('urn:ietf:params:scim:schemas:core:2.0:user:', '');
  const column = COLUMN_KEYS[name];
  if (column !== undefined) return column;
  let path;
  try {
    path = parsePatchPath(sortBy);
  } catch {
    return undefined;
  }
  if (path.valueFilter !== undefined || path.subAttribute !== undefined) return undefined;
  const found = lookupScopedAttribute(USER_FILTER_SCOPE, path.path);
  if (!found.found || NOT_IN_DOCUMENT.has(found.attribute.name)) return undefined;
  const { attribute, subAttribute } = found;
  const root = found.extensionId !== undefined ? [found.extensionId, attribute.name] : [attribute.name];
  if (attribute.multiValued) {
    const element = subAttribute ?? attribute.subAttributes?.find((candidate) => candidate.name === 'value');
    if (attribute.type === 'complex' && element === undefined) return undefined;
    const leaf = element ?? attribute;
    return {
      keys: root,
      multiValued: true,
      ...(element !== undefined ? { elementKey: element.name } : {}),
      lowered: isText(leaf.type) && !leaf.caseExact,
      numeric: isNumber(leaf.type),
    };
  }
  if (subAttribute === undefined && attribute.type === 'complex') return undefined;
  const leaf = subAttribute ?? attribute;
  return {
    keys: subAttribute !== undefined ? [...root, subAttribute.name] : root,
    multiValued: false,
    lowered: isText(leaf.type) && !leaf.caseExact,
    numeric: isNumber(leaf.type),
  };
}

function isText(type: string): boolean {
  return type === 'string' || type === 'reference';
}

function isNumber(type: string): boolean {
  return type === 'integer' || type === 'decimal';
}

/** The SQL value a document sort key orders by, for the row aliased `alias`. */
export function documentSortExpression(key: DocumentSortKey, dialect: SqlDialect, alias: string): string {
  const document = `${quoteIdentifier(alias)}."attributes"`;
  let value: string;
  if (!key.multiValued) {
    value = jsonScalar(dialect, document, key.keys);
  } else if (dialect === 'postgres') {
    const list = [document, ...key.keys.map((name) => `'${name}'`)].join(' -> ');
    const element =
      key.elementKey === undefined ? `(e #>> '{}')` : jsonScalar(dialect, 'e', [key.elementKey]);
    value =
      `(SELECT ${element} FROM jsonb_array_elements(CASE WHEN jsonb_typeof(${list}) = 'array' ` +
      `THEN ${list} ELSE '[]'::jsonb END) WITH ORDINALITY AS t(e, n) ` +
      `ORDER BY (e ->> 'primary') = 'true' DESC NULLS LAST, n LIMIT 1)`;
  } else {
    const element =
      key.elementKey === undefined ? 'j.value' : jsonScalar(dialect, 'j.value', [key.elementKey]);
    value =
      `(SELECT ${element} FROM json_each(${document}, '${jsonPathOf(key.keys)}') AS j ` +
      `ORDER BY json_extract(j.value, '$.primary') = 1 DESC, j.key LIMIT 1)`;
  }
  // SQLite's LOWER() folds ASCII only; scim_lower is JavaScript's toLowerCase (src/database/sqlite-functions.ts).
  if (key.lowered) value = `${dialect === 'postgres' ? 'LOWER' : SQLITE_UNICODE_LOWER}(${value})`;
  if (dialect === 'postgres') return key.numeric ? `(${value})::numeric` : `(${value}) COLLATE "C"`;
  return value;
}
