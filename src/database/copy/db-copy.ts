// db:copy (and db:restore, and db:backup from PostgreSQL): every declared table from one source snapshot into a
// target migrated to the source's schema version, in one target transaction — all or nothing. Interrupted (the
// signal, a lost connection, kill -9), the transaction never commits and the target keeps what it had: on
// PostgreSQL the migrations run in that same transaction; a SQLite target without a schema is built beside it and
// renamed into place (copy-target.ts).
import { MIGRATIONS } from '../../../migrations/index.js';
import type { DatabaseConfig } from '../../config/config.js';
import { describeDatabase } from '../database-url.js';
import { HeapBound } from './heap-bound.js';
import { TableHash } from './column-values.js';
import { beginTarget, CopyRefusedError, migrate, stagedTarget } from './copy-target.js';
import { digestTable, type TableDigest } from './db-verify.js';
import type { Progress } from './progress.js';
import { openRaw, type RawDatabase } from './raw-database.js';
import { schemaVersion } from './schema-check.js';
import { planTables, type PlannedTable } from './table-plan.js';

export interface CopyOptions {
  from: DatabaseConfig;
  to: DatabaseConfig;
  /** Empty a target that holds data; without it such a target is refused. */
  replace: boolean;
  /** After the copy, apply this build's migrations the source had not (a restore of an older backup). */
  migrateForward?: boolean;
  progress: Progress;
  signal?: AbortSignal;
  batchSize?: number;
}

export interface CopyResult {
  tables: Array<{ name: string; rows: number; seconds: number }>;
  rows: number;
  seconds: number;
  schemaVersion: string | undefined;
}

export async function copyDatabase(options: CopyOptions): Promise<CopyResult> {
  const { from, to } = options;
  if (describeDatabase(from) === describeDatabase(to))
    throw new CopyRefusedError('source and target are the same database');
  const started = performance.now();
  const source = await openRaw(from, { readonly: true });
  try {
    await source.beginRead();
    const version = schemaVersion(await source.migrationNames(), `the source ${describeDatabase(from)}`);
    if (version === 0)
      throw new CopyRefusedError(
        `the source ${describeDatabase(from)} has no schema (no migrations applied)`,
      );
    const staged = await stagedTarget(to);
    const target = staged?.work ?? to;
    let digests: Awaited<ReturnType<typeof loadTarget>>;
    try {
      digests = await loadTarget(source, version, { ...options, to: target });
      await checkTarget(target, digests.plan, digests.sourceDigests);
      if (options.migrateForward && version < MIGRATIONS.length) await migrate(target, MIGRATIONS.length);
      staged?.complete();
    } catch (error) {
      staged?.discard();
      throw error;
    }
    const seconds = (performance.now() - started) / 1000;
    const rows = digests.tables.reduce((sum, table) => sum + table.rows, 0);
    options.progress.summary('copied', digests.tables.length, rows, seconds);
    return { tables: digests.tables, rows, seconds, schemaVersion: MIGRATIONS[version - 1]?.name };
  } finally {
    await source.rollback();
    await source.close();
  }
}

async function loadTarget(source: RawDatabase, version: number, options: CopyOptions) {
  const target = await beginTarget(options.to, version);
  try {
    try {
      const plan = planTables(await source.schema(), await target.schema(), 'the source', 'the target');
      if (!options.replace) await refuseData(target, plan, options.to);
      await target.empty(plan.map((table) => table.spec.name));
      const tables: CopyResult['tables'] = [];
      const sourceDigests = new Map<string, TableDigest>();
      for (const table of plan) {
        const result = await copyTable(source, target, table, options);
        tables.push({ name: table.spec.name, rows: result.rows, seconds: result.seconds });
        sourceDigests.set(table.spec.name, result);
      }
      await fixUp(source, target, plan);
      options.signal?.throwIfAborted();
      await target.commit();
      return { plan, tables, sourceDigests };
    } catch (error) {
      await target.rollback();
      throw error;
    }
  } finally {
    options.progress.stop();
    await target.close();
  }
}

async function refuseData(
  target: RawDatabase,
  plan: readonly PlannedTable[],
  to: DatabaseConfig,
): Promise<void> {
  for (const table of plan) {
    if (table.spec.migrationRows) continue;
    const rows = await target.count(table.spec.name);
    if (rows > 0) {
      throw new CopyRefusedError(
        `the target ${describeDatabase(to)} holds data (${rows} rows in ${table.spec.name}); pass --replace to replace it`,
      );
    }
  }
}

async function copyTable(
  source: RawDatabase,
  target: RawDatabase,
  table: PlannedTable,
  options: CopyOptions,
): Promise<TableDigest & { seconds: number }> {
  const started = performance.now();
  const name = table.spec.name;
  options.progress.start(name, await source.count(name));
  const kinds = table.columns.map((column) => column.kind);
  let rows = 0;
  const hash = new TableHash();
  const heap = new HeapBound();
  // The source's digest is taken from the very rows written, so the check after the commit compares the target
  // with the snapshot, not with a source that writers have moved on since.
  async function* tapped(): AsyncGenerator<unknown[][]> {
    const names = table.columns.map((column) => column.name);
    for await (const batch of source.rows(name, names, options.batchSize ?? 1_000)) {
      options.signal?.throwIfAborted();
      for (const row of batch) hash.add(kinds, row);
      rows += batch.length;
      options.progress.advance(batch.length);
      yield batch;
      heap.advance(batch.length);
    }
  }
  await target.load(name, table.columns, tapped());
  const seconds = (performance.now() - started) / 1000;
  options.progress.finish(name, rows, seconds);
  return { rows, hash: hash.value, seconds };
}

/** The declared per-table fix-ups (migrations/tables.ts): counters re-derived, sequences continued. */
async function fixUp(source: RawDatabase, target: RawDatabase, plan: readonly PlannedTable[]): Promise<void> {
  for (const table of plan) for (const sql of table.spec.afterLoad ?? []) await target.execute(sql);
  for (const table of plan) {
    const column = table.spec.sequence;
    if (column !== undefined)
      await target.setSequence(table.spec.name, column, await source.sequenceValue(table.spec.name, column));
  }
  if (target.engine !== 'postgres') return;
  for (const table of plan)
    for (const sql of table.spec.afterSequencesOnPostgres ?? []) await target.execute(sql);
}

/** db:verify's comparison, against the snapshot's digests: the first table that differs fails the copy. */
async function checkTarget(
  to: DatabaseConfig,
  plan: readonly PlannedTable[],
  expected: ReadonlyMap<string, TableDigest>,
): Promise<void> {
  const target = await openRaw(to, { readonly: true });
  try {
    await target.beginRead();
    for (const table of plan) {
      const want = expected.get(table.spec.name)!;
      const got = await digestTable(target, table);
      if (got.rows !== want.rows || got.hash !== want.hash) {
        throw new Error(
          `verification failed: table ${table.spec.name} has ${got.rows} rows in the target, ${want.rows} in the source snapshot${got.rows === want.rows ? ' (contents differ)' : ''}`,
        );
      }
    }
  } finally {
    await target.rollback();
    await target.close();
  }
}
