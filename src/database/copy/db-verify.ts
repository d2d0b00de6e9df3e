// db:verify: integrity, schema drift against the migrations, and (with a second database) per-table row counts
// and order-independent content hashes over normalised values, naming the first table and row that differ.
import type { DatabaseConfig } from '../../config/config.js';
import { MigrationRunner } from '../migration-runner.js';
import { openDatabase } from '../data-source.js';
import { describeDatabase } from '../database-url.js';
import { rowDigest, TableHash } from './column-values.js';
import { HeapBound } from './heap-bound.js';
import { openRaw, type RawDatabase } from './raw-database.js';
import { expectedSchema, KNOWN_MIGRATIONS, schemaDrift, schemaVersion } from './schema-check.js';
import { planTables, type PlannedTable } from './table-plan.js';

const BATCH = 2_000;

/** Problems found in one database (empty = sound). */
export async function checkDatabase(database: DatabaseConfig): Promise<string[]> {
  const raw = await openRaw(database, { readonly: true });
  const problems: string[] = [];
  let version: number;
  try {
    problems.push(...(await integrityProblems(raw)));
    version = schemaVersion(await raw.migrationNames(), describeDatabase(database));
    const pending = KNOWN_MIGRATIONS.length - version;
    if (pending > 0) problems.push(`${pending} migration(s) pending (migration:run applies them)`);
    problems.push(...schemaDrift(await raw.schema(), await expectedSchema(version)));
  } finally {
    await raw.close();
  }
  problems.push(...(await checksumDrift(database)));
  return problems;
}

async function integrityProblems(raw: RawDatabase): Promise<string[]> {
  if (raw.engine === 'sqlite') {
    const problems: string[] = [];
    await raw.query('PRAGMA integrity_check', (row) => {
      if (row[0] !== 'ok') problems.push(`integrity: ${String(row[0])}`);
    });
    await raw.query('PRAGMA foreign_key_check', (row) =>
      problems.push(`foreign key: ${String(row[0])} row ${String(row[1])} → ${String(row[2])}`),
    );
    return problems;
  }
  // PostgreSQL enforces its constraints on every write; what can be left unchecked is a constraint added
  // NOT VALID or an index a failed CREATE INDEX CONCURRENTLY left invalid.
  const problems: string[] = [];
  await raw.query(
    'SELECT conname FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = current_schema() AND NOT c.convalidated',
    (row) => problems.push(`constraint ${String(row[0])} is not validated`),
  );
  await raw.query('SELECT indexrelid::regclass::text FROM pg_index WHERE NOT indisvalid', (row) =>
    problems.push(`index ${String(row[0])} is invalid`),
  );
  return problems;
}

async function checksumDrift(database: DatabaseConfig): Promise<string[]> {
  const dataSource = await openDatabase(database);
  try {
    const status = await new MigrationRunner(dataSource).status();
    return status
      .filter((entry) => entry.drifted)
      .map((entry) => `migration ${entry.name} changed since it ran`);
  } finally {
    await dataSource.destroy();
  }
}

export interface TableDigest {
  rows: number;
  hash: bigint;
}

/** Row count and content hash of one table, streamed. */
export async function digestTable(raw: RawDatabase, table: PlannedTable): Promise<TableDigest> {
  const kinds = table.columns.map((column) => column.kind);
  let rows = 0;
  const hash = new TableHash();
  const heap = new HeapBound();
  for await (const batch of raw.rows(
    table.spec.name,
    table.columns.map((column) => column.name),
    BATCH,
  )) {
    for (const row of batch) hash.add(kinds, row);
    rows += batch.length;
    heap.advance(batch.length);
  }
  return { rows, hash: hash.value };
}

/**
 * Compares two databases table by table (declared order) within one snapshot each. Returns the first difference
 * (table, counts, and a row by primary key when one can be named), or undefined when every table is equal.
 */
export async function compareDatabases(a: DatabaseConfig, b: DatabaseConfig): Promise<string | undefined> {
  const left = await openRaw(a, { readonly: true });
  const right = await openRaw(b, { readonly: true });
  try {
    await left.beginRead();
    await right.beginRead();
    const plan = planTables(
      await left.schema(),
      await right.schema(),
      describeDatabase(a),
      describeDatabase(b),
    );
    for (const table of plan) {
      const [x, y] = [await digestTable(left, table), await digestTable(right, table)];
      if (x.rows === y.rows && x.hash === y.hash) continue;
      const row = await firstDifferentRow(left, right, table);
      return `table ${table.spec.name} differs: ${x.rows} rows vs ${y.rows}${row ? `; first different row ${row}` : ''}`;
    }
    return undefined;
  } finally {
    await left.rollback();
    await right.rollback();
    await left.close();
    await right.close();
  }
}

/** The primary key of a row one side lacks or holds differently. Memory: one digest per row of the table. */
async function firstDifferentRow(
  left: RawDatabase,
  right: RawDatabase,
  table: PlannedTable,
): Promise<string | undefined> {
  const kinds = table.columns.map((column) => column.kind);
  const keyIndexes = table.primaryKey.map((name) =>
    table.columns.findIndex((column) => column.name === name),
  );
  const keyOf = (row: unknown[]): string =>
    JSON.stringify(Object.fromEntries(table.primaryKey.map((name, i) => [name, String(row[keyIndexes[i]])])));
  const digests = new Map<string, bigint>();
  const names = table.columns.map((column) => column.name);
  for await (const batch of left.rows(table.spec.name, names, BATCH)) {
    for (const row of batch) digests.set(keyOf(row), rowDigest(kinds, row));
  }
  for await (const batch of right.rows(table.spec.name, names, BATCH)) {
    for (const row of batch) {
      const key = keyOf(row);
      if (digests.get(key) !== rowDigest(kinds, row)) return key;
      digests.delete(key);
    }
  }
  return digests.keys().next().value;
}
