// The schema this build's migrations make, and how a database's schema version and tables compare with it.
// The expected tables come from a fresh in-memory SQLite database migrated to the same version: column names
// are the same on both engines (their types are not, column-values.ts).
import type BetterSqlite3 from 'better-sqlite3';
import { MIGRATIONS } from '../../../migrations/index.js';
import { NOT_DATA_TABLES } from '../../../migrations/tables.js';
import { MigrationRunner } from '../migration-runner.js';
import { openDatabase } from '../data-source.js';
import { sqliteRaw, type Schema } from './raw-database.js';

export const KNOWN_MIGRATIONS: readonly string[] = MIGRATIONS.map((migration) => migration.name);

/** How many of this build's migrations a database has applied; refuses one written by a newer build. */
export function schemaVersion(applied: readonly string[], what: string): number {
  const unknown = applied.filter((name) => !KNOWN_MIGRATIONS.includes(name));
  if (unknown.length > 0) {
    throw new Error(
      `${what} has a schema newer than this build (unknown migration ${unknown.join(', ')}); use a build that has it`,
    );
  }
  return applied.reduce((last, name) => Math.max(last, KNOWN_MIGRATIONS.indexOf(name) + 1), 0);
}

/** The tables (with columns and primary keys) the first `version` migrations create. */
export async function expectedSchema(version: number = MIGRATIONS.length): Promise<Schema> {
  const dataSource = await openDatabase('sqlite::memory:', { migrations: MIGRATIONS.slice(0, version) });
  try {
    await new MigrationRunner(dataSource).runPending('cli');
    const driver = dataSource.driver as unknown as { databaseConnection: BetterSqlite3.Database };
    const schema = await sqliteRaw(driver.databaseConnection).schema();
    for (const table of NOT_DATA_TABLES) schema.delete(table);
    return schema;
  } finally {
    await dataSource.destroy();
  }
}

/** Tables or columns that differ from what the migrations make: one line each. */
export function schemaDrift(actual: Schema, expected: Schema): string[] {
  const problems: string[] = [];
  for (const [table, info] of expected) {
    const present = actual.get(table);
    if (!present) {
      problems.push(`table ${table} is missing`);
      continue;
    }
    const names = new Set(present.columns.map((column) => column.name));
    const wanted = new Set(info.columns.map((column) => column.name));
    for (const column of wanted)
      if (!names.has(column)) problems.push(`column ${table}.${column} is missing`);
    for (const column of names)
      if (!wanted.has(column)) problems.push(`column ${table}.${column} is not in the migrations`);
  }
  for (const table of actual.keys()) {
    if (!expected.has(table) && !NOT_DATA_TABLES.includes(table))
      problems.push(`table ${table} is not in the migrations`);
  }
  return problems;
}
