// The same entities and migrations run on SQLite and PostgreSQL. The few column types that differ between the
// two (instants, uuids, JSON) are declared once here and resolved for the dialect before a DataSource starts.
import {
  Column,
  getMetadataArgsStorage,
  PrimaryColumn,
  type ColumnOptions,
  type ColumnType,
  type PrimaryColumnOptions,
} from 'typeorm';

export type Dialect = 'sqlite' | 'postgres';
type PortableKind = 'instant' | 'uuid' | 'json';

const TYPES: Record<PortableKind, Record<Dialect, ColumnType>> = {
  instant: { sqlite: 'datetime', postgres: 'timestamptz' },
  uuid: { sqlite: 'varchar', postgres: 'uuid' },
  json: { sqlite: 'simple-json', postgres: 'jsonb' },
};

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

/** Must run before a DataSource initialises (it reads column options then). */
export function resolvePortableColumns(dialect: Dialect): void {
  for (const column of getMetadataArgsStorage().columns) {
    const kind = PORTABLE.get(column.options);
    if (kind === undefined) continue;
    column.options.type = TYPES[kind][dialect];
    if (kind === 'uuid') column.options.length = dialect === 'sqlite' ? 36 : undefined;
  }
}

/** For migrations written with the Table API: the same mapping, by the runner's dialect. */
export function columnType(kind: PortableKind, dialect: Dialect): string {
  const type = TYPES[kind][dialect];
  return type === 'simple-json' ? 'text' : String(type);
}
