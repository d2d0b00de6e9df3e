// The same entities and migrations run on SQLite and PostgreSQL. The few column types that differ between the
// two (instants, uuids, JSON) are declared once here and resolved for the dialect before a DataSource starts.
import {
  Column,
  getMetadataArgsStorage,
  PrimaryColumn,
  PrimaryGeneratedColumn,
  type ColumnOptions,
  type ColumnType,
  type PrimaryColumnOptions,
} from 'typeorm';

export type Dialect = 'sqlite' | 'postgres';
type PortableKind = 'instant' | 'uuid' | 'json' | 'codePointText' | 'identity';

const TYPES: Record<PortableKind, Record<Dialect, ColumnType>> = {
  instant: { sqlite: 'datetime', postgres: 'timestamptz' },
  uuid: { sqlite: 'varchar', postgres: 'uuid' },
  json: { sqlite: 'simple-json', postgres: 'jsonb' },
  codePointText: { sqlite: 'varchar', postgres: 'varchar' },
  // SQLite's INTEGER PRIMARY KEY is a 64-bit rowid; PostgreSQL needs bigint for the same range.
  identity: { sqlite: 'integer', postgres: 'bigint' },
};

/**
 * Text that sorts and compares in code-point order on both engines, whatever the database's default collation:
 * SQLite's default (BINARY) already is; PostgreSQL takes the column's collation, so these columns are "C" (an
 * `en_US` or ICU database would otherwise sort `_z` before `a`, and `B` between `a` and `b`).
 */
const CODE_POINT_COLLATION: Record<Dialect, string | undefined> = { sqlite: undefined, postgres: 'C' };

const PORTABLE = new WeakMap<object, PortableKind>();

function portable(kind: PortableKind, options: ColumnOptions, primary = false): PropertyDecorator {
  return (target, propertyName) => {
    const base: ColumnOptions = { ...options, type: TYPES[kind].sqlite };
    if (kind === 'uuid') base.length = 36;
    (primary ? PrimaryColumn(base as PrimaryColumnOptions) : Column(base))(target, propertyName);
    const args = getMetadataArgsStorage().columns.at(-1);
    if (args) PORTABLE.set(args.options, kind);
  };
}

export const InstantColumn = (options: ColumnOptions = {}): PropertyDecorator => portable('instant', options);
export const UuidColumn = (options: ColumnOptions = {}): PropertyDecorator => portable('uuid', options);
export const UuidPrimaryColumn = (options: ColumnOptions = {}): PropertyDecorator =>
  portable('uuid', options, true);
export const JsonColumn = (options: ColumnOptions = {}): PropertyDecorator => portable('json', options);
export const CodePointTextColumn = (options: ColumnOptions = {}): PropertyDecorator =>
  portable('codePointText', options);

/** An auto-incremented 64-bit primary key on both engines (PostgreSQL answers it as text). */
export const IdentityPrimaryColumn = (): PropertyDecorator => (target, propertyName) => {
  PrimaryGeneratedColumn({ type: 'integer' })(target, propertyName);
  const args = getMetadataArgsStorage().columns.at(-1);
  if (args) PORTABLE.set(args.options, 'identity');
};

/** Must run before a DataSource initialises (it reads column options then). */
export function resolvePortableColumns(dialect: Dialect): void {
  for (const column of getMetadataArgsStorage().columns) {
    const kind = PORTABLE.get(column.options);
    if (kind === undefined) continue;
    column.options.type = TYPES[kind][dialect];
    if (kind === 'uuid') column.options.length = dialect === 'sqlite' ? 36 : undefined;
    if (kind === 'codePointText') column.options.collation = CODE_POINT_COLLATION[dialect];
  }
}

/** For migrations written with the Table API: the same mapping, by the runner's dialect. */
export function columnType(kind: PortableKind, dialect: Dialect): string {
  const type = TYPES[kind][dialect];
  return type === 'simple-json' ? 'text' : String(type);
}

/** `table.column` of every JSON column of the registered entities (text on SQLite, jsonb on PostgreSQL). */
export function jsonColumns(): Set<string> {
  const storage = getMetadataArgsStorage();
  const names = new Set<string>();
  for (const column of storage.columns) {
    if (PORTABLE.get(column.options) !== 'json') continue;
    const table = storage.tables.find((candidate) => candidate.target === column.target);
    if (typeof table?.name === 'string')
      names.add(`${table.name}.${column.options.name ?? column.propertyName}`);
  }
  return names;
}
