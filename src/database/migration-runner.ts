// Runs the service's schema migrations under a database lock and records every run (docs/migrations.md):
// a run row is written before the migration starts and finished after it, so a failed migration is recorded even
// though its own transaction rolled back, and a run left `Running` by a process that died is found and marked
// `Abandoned` by the next process that takes the lock.
import { createHash, randomUUID } from 'node:crypto';
import os from 'node:os';
import { Table, type DataSource, type MigrationInterface, type QueryRunner } from 'typeorm';
import { cliSource, systemSource } from '../audit/audit-source.js';
import { AUDIT_EVENTS, AUDIT_TAIL, writeAuditEvent } from '../audit/audit-trail.js';
import { APP_VERSION } from '../common/app-version.js';
import { withSqliteConnection } from './sqlite-transactions.js';
import {
  MigrationRun,
  MigrationRunStatus,
  type MigrationDirection,
  type MigrationRunDetails,
  type MigrationTrigger,
} from './migration-run.entity.js';

const MIGRATIONS_TABLE = 'migrations';
const RUNS_TABLE = 'migration_runs';
/** Arbitrary but fixed: the PostgreSQL advisory-lock key that serialises migrating processes. */
const PG_LOCK_KEY = '7244117170342077001';

export interface KnownMigration {
  name: string;
  source: string;
  checksum: string;
  instance: MigrationInterface;
  timestamp: number;
}

export interface MigrationStatusEntry {
  name: string;
  source: string;
  state: 'applied' | 'pending';
  drifted: boolean;
}

export class MigrationFailedError extends Error {
  constructor(
    readonly migration: string,
    cause: unknown,
  ) {
    super(`Migration ${migration} failed: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
    this.name = 'MigrationFailedError';
  }
}

type Log = (message: string, fields?: Record<string, unknown>) => void;

export class MigrationRunner {
  private readonly known: KnownMigration[];

  constructor(
    private readonly dataSource: DataSource,
    private readonly log: Log = () => undefined,
  ) {
    this.known = dataSource.migrations.map((instance) => describeMigration(instance));
  }

  get migrations(): readonly KnownMigration[] {
    return this.known;
  }

  /** Applies every pending migration; returns the names applied. Throws MigrationFailedError on the first failure. */
  async runPending(trigger: MigrationTrigger): Promise<string[]> {
    return this.withLock(async (queryRunner) => {
      const applied = new Set(await this.appliedNames(queryRunner));
      const pending = this.known.filter((migration) => !applied.has(migration.name));
      for (const migration of pending) await this.execute(queryRunner, migration, 'up', trigger);
      return pending.map((migration) => migration.name);
    });
  }

  /**
   * PostgreSQL only: applies the pending migrations inside the transaction the caller has open on `queryRunner`, so
   * that they commit (or vanish) with the caller's own work — db:copy's data. The migration lock is taken for the
   * transaction. No run rows or audit events are written: the copy replaces both tables with its source's.
   */
  async runPendingInTransaction(queryRunner: QueryRunner): Promise<string[]> {
    if (!this.isPostgres || !queryRunner.isTransactionActive)
      throw new Error('runPendingInTransaction needs an open PostgreSQL transaction');
    await queryRunner.query(`SELECT pg_advisory_xact_lock(${PG_LOCK_KEY})`);
    await this.prepare(queryRunner);
    const applied = new Set(await this.appliedNames(queryRunner));
    const pending = this.known.filter((migration) => !applied.has(migration.name));
    for (const migration of pending) {
      await migration.instance.up(queryRunner);
      await this.markApplied(queryRunner, migration);
    }
    return pending.map((migration) => migration.name);
  }

  /** Reverts the most recently applied migration; returns its name, or undefined when none is applied. */
  async revertLast(trigger: MigrationTrigger): Promise<string | undefined> {
    return this.withLock(async (queryRunner) => {
      const applied = await this.appliedNames(queryRunner);
      const lastName = applied.at(-1);
      if (lastName === undefined) return undefined;
      const migration = this.known.find((candidate) => candidate.name === lastName);
      if (!migration)
        throw new Error(`Applied migration ${lastName} is not in this build; cannot revert it.`);
      await this.execute(queryRunner, migration, 'down', trigger);
      return lastName;
    });
  }

  async status(): Promise<MigrationStatusEntry[]> {
    const queryRunner = this.dataSource.createQueryRunner();
    try {
      const applied = new Set(await this.appliedNames(queryRunner));
      const checksums = (await queryRunner.hasTable(RUNS_TABLE))
        ? await this.lastSucceededChecksums()
        : new Map<string, string>();
      return this.known.map((migration) => {
        const state = applied.has(migration.name) ? 'applied' : 'pending';
        const recorded = checksums.get(migration.name);
        return {
          name: migration.name,
          source: migration.source,
          state,
          drifted: state === 'applied' && recorded !== undefined && recorded !== migration.checksum,
        };
      });
    } finally {
      await queryRunner.release();
    }
  }

  /** True while some process holds the migration lock (PostgreSQL). SQLite runs are never visible mid-way. */
  async isLocked(): Promise<boolean> {
    if (!this.isPostgres) return false;
    // Try and release on one session: an advisory lock belongs to the session that took it.
    const queryRunner = this.dataSource.createQueryRunner();
    try {
      const rows = (await queryRunner.query(`SELECT pg_try_advisory_lock(${PG_LOCK_KEY}) AS free`)) as Array<{
        free: boolean;
      }>;
      const row = rows[0];
      if (row?.free) await queryRunner.query(`SELECT pg_advisory_unlock(${PG_LOCK_KEY})`);
      return !row?.free;
    } finally {
      await queryRunner.release();
    }
  }

  private get isPostgres(): boolean {
    return this.dataSource.options.type === 'postgres';
  }

  private async lastSucceededChecksums(): Promise<Map<string, string>> {
    const runs = await this.dataSource.getRepository(MigrationRun).find({ order: { startedAt: 'ASC' } });
    const result = new Map<string, string>();
    for (const run of runs) {
      if (run.status === MigrationRunStatus.Succeeded && run.details.Direction === 'up') {
        result.set(run.migration, run.details.Checksum);
      }
    }
    return result;
  }

  /**
   * PostgreSQL: a session-level advisory lock on a dedicated connection; each migration in its own transaction.
   * SQLite (one writer per file): the whole batch in one BEGIN IMMEDIATE transaction, each migration in a savepoint.
   */
  async withLock<T>(work: (queryRunner: QueryRunner) => Promise<T>): Promise<T> {
    const queryRunner = this.dataSource.createQueryRunner();
    await queryRunner.connect();
    try {
      if (this.isPostgres) {
        await queryRunner.query(`SELECT pg_advisory_lock(${PG_LOCK_KEY})`);
        try {
          await this.prepare(queryRunner);
          return await work(queryRunner);
        } finally {
          await queryRunner.query(`SELECT pg_advisory_unlock(${PG_LOCK_KEY})`);
        }
      }
      // The connection to this batch alone (src/database/sqlite-transactions.ts), ending in autocommit whatever
      // happens: a COMMIT that fails (a full disk) is rolled back, not left open under the next user.
      return await withSqliteConnection(
        this.dataSource,
        async () => {
          await queryRunner.query('BEGIN IMMEDIATE');
          let result: T;
          try {
            await this.prepare(queryRunner);
            result = await work(queryRunner);
          } catch (error) {
            // Keep what succeeded and the record of the failure (the failed migration was rolled back to its savepoint).
            await this.commitOrRollBack(queryRunner).catch(() => undefined);
            throw error;
          }
          await this.commitOrRollBack(queryRunner);
          return result;
        },
        queryRunner,
      );
    } finally {
      await queryRunner.release();
    }
  }

  private async commitOrRollBack(queryRunner: QueryRunner): Promise<void> {
    try {
      await queryRunner.query('COMMIT');
    } catch (error) {
      await queryRunner.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }

  private async prepare(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: MIGRATIONS_TABLE,
        columns: [
          {
            name: 'id',
            type: 'integer',
            isPrimary: true,
            isGenerated: true,
            generationStrategy: 'increment',
          },
          { name: 'timestamp', type: 'bigint', isNullable: false },
          { name: 'name', type: 'varchar', isNullable: false },
        ],
      }),
      true,
    );
    if (await queryRunner.hasTable(RUNS_TABLE)) {
      // We hold the lock, so nobody else is migrating: a run still marked Running lost its process.
      await queryRunner.query(
        `UPDATE ${RUNS_TABLE} SET status = '${MigrationRunStatus.Abandoned}' WHERE status = '${MigrationRunStatus.Running}'`,
      );
    }
  }

  private async markApplied(queryRunner: QueryRunner, migration: KnownMigration): Promise<void> {
    await queryRunner.query(
      `INSERT INTO ${MIGRATIONS_TABLE} (timestamp, name) VALUES (${migration.timestamp}, '${migration.name}')`,
    );
  }

  private async appliedNames(queryRunner: QueryRunner): Promise<string[]> {
    if (!(await queryRunner.hasTable(MIGRATIONS_TABLE))) return [];
    const rows = (await queryRunner.query(
      `SELECT name FROM ${MIGRATIONS_TABLE} ORDER BY timestamp ASC, id ASC`,
    )) as Array<{
      name: string;
    }>;
    return rows.map((row) => row.name);
  }

  private async execute(
    queryRunner: QueryRunner,
    migration: KnownMigration,
    direction: MigrationDirection,
    trigger: MigrationTrigger,
  ): Promise<void> {
    const run = {
      id: randomUUID(),
      startedAt: new Date(),
      details: {
        Direction: direction,
        Trigger: trigger,
        DurationMs: null,
        Host: os.hostname(),
        ProcessId: process.pid,
        AppVersion: APP_VERSION,
        Checksum: migration.checksum,
        Error: null,
      } satisfies MigrationRunDetails as MigrationRunDetails,
    };
    const started = performance.now();
    await this.record(queryRunner, run, migration, MigrationRunStatus.Running, 'insert');
    this.log(`Migration ${migration.name} ${direction} started`, {
      migration: migration.name,
      direction,
      trigger,
    });
    try {
      await this.inTransaction(queryRunner, async () => {
        if (direction === 'up') {
          await migration.instance.up(queryRunner);
          await this.markApplied(queryRunner, migration);
        } else {
          await migration.instance.down(queryRunner);
          await queryRunner.query(`DELETE FROM ${MIGRATIONS_TABLE} WHERE name = '${migration.name}'`);
        }
        await recordMigration(queryRunner, migration, direction, trigger);
      });
    } catch (error) {
      run.details.DurationMs = Math.round(performance.now() - started);
      run.details.Error = error instanceof Error ? error.message : String(error);
      await this.record(queryRunner, run, migration, MigrationRunStatus.Failed, 'finish');
      this.log(`Migration ${migration.name} ${direction} failed`, {
        migration: migration.name,
        error: run.details.Error,
      });
      throw new MigrationFailedError(migration.name, error);
    }
    run.details.DurationMs = Math.round(performance.now() - started);
    const status = direction === 'up' ? MigrationRunStatus.Succeeded : MigrationRunStatus.Reverted;
    await this.record(queryRunner, run, migration, status, 'finish');
    this.log(`Migration ${migration.name} ${direction} finished`, {
      migration: migration.name,
      durationMs: run.details.DurationMs,
    });
  }

  private async inTransaction(queryRunner: QueryRunner, work: () => Promise<void>): Promise<void> {
    if (this.isPostgres) {
      await queryRunner.startTransaction();
      try {
        await work();
        await queryRunner.commitTransaction();
      } catch (error) {
        await queryRunner.rollbackTransaction();
        throw error;
      }
      return;
    }
    await queryRunner.query('SAVEPOINT migration');
    try {
      await work();
      await queryRunner.query('RELEASE SAVEPOINT migration');
    } catch (error) {
      await queryRunner.query('ROLLBACK TO SAVEPOINT migration');
      await queryRunner.query('RELEASE SAVEPOINT migration');
      throw error;
    }
  }

  /**
   * The first migration creates the runs table, so its own "Running" row cannot be written before it runs:
   * the row is then written once the table exists. On PostgreSQL rows go through the pool (outside the
   * migration's transaction, so a rollback cannot erase them); on SQLite through the batch's connection.
   */
  private async record(
    queryRunner: QueryRunner,
    run: { id: string; startedAt: Date; details: MigrationRunDetails },
    migration: KnownMigration,
    status: MigrationRunStatus,
    mode: 'insert' | 'finish',
  ): Promise<void> {
    if (!(await queryRunner.hasTable(RUNS_TABLE))) return;
    const manager = this.isPostgres ? this.dataSource.manager : queryRunner.manager;
    const repository = manager.getRepository(MigrationRun);
    const row = {
      id: run.id,
      migration: migration.name,
      migrationSource: migration.source,
      startedAt: run.startedAt,
      status,
      details: { ...run.details },
    };
    // insert/update, never save(): save() opens its own transaction, which SQLite cannot nest inside the batch.
    if (mode === 'finish' && (await repository.existsBy({ id: run.id }))) {
      await repository.update({ id: run.id }, { status, details: row.details });
    } else {
      await repository.insert(row);
    }
  }
}

/** The audit event of a migration applied or reverted, in its transaction (once the trail's table exists). */
async function recordMigration(
  queryRunner: QueryRunner,
  migration: KnownMigration,
  direction: MigrationDirection,
  trigger: MigrationTrigger,
): Promise<void> {
  // The tail from migration 1763780001800 on; audit_events itself for the migrations between the two.
  const table = (await queryRunner.hasTable(AUDIT_TAIL))
    ? AUDIT_TAIL
    : (await queryRunner.hasTable(AUDIT_EVENTS))
      ? AUDIT_EVENTS
      : undefined;
  if (table === undefined) return;
  const by =
    trigger === 'cli'
      ? cliSource(`migration:${direction === 'up' ? 'run' : 'revert'}`)
      : systemSource('startup');
  await writeAuditEvent(
    queryRunner.manager,
    {
      by,
      action: direction === 'up' ? 'migration.apply' : 'migration.revert',
      resourceType: 'Migration',
      resourceId: migration.name,
      detail: { trigger, checksum: migration.checksum },
    },
    table,
  );
}

// Each migration's checksum as tsc's output gives it, filled in by the production bundle (scripts/bundle.mjs):
// esbuild rewrites the code the checksum is read from (quotes, references to bundled imports), and a database
// migrated by one build must not look drifted to the other. Undefined when running tsc's output or the sources.
declare const BUILT_MIGRATION_CHECKSUMS: string | undefined; // JSON: { [migration name]: checksum }
const builtChecksums =
  typeof BUILT_MIGRATION_CHECKSUMS === 'undefined'
    ? undefined
    : (JSON.parse(BUILT_MIGRATION_CHECKSUMS) as Readonly<Record<string, string>>);

export function migrationName(instance: MigrationInterface): string {
  return instance.name ?? instance.constructor.name;
}

/** SHA-256 of the migration's code, whitespace-insensitive: tsc and ts-node give the same. */
export function migrationChecksum(instance: MigrationInterface): string {
  const code = `${instance.up.toString()}\n${instance.down.toString()}`.replace(/\s+/g, '');
  return createHash('sha256').update(code).digest('hex');
}

function describeMigration(instance: MigrationInterface): KnownMigration {
  const name = migrationName(instance);
  const match = /^(.*?)(\d{13})$/.exec(name);
  if (!match) throw new Error(`Migration class ${name} must end with a 13-digit timestamp`);
  const [, label, timestamp] = match;
  return {
    name,
    source: `typeorm:migrations/${timestamp}-${label}`,
    checksum: builtChecksums?.[name] ?? migrationChecksum(instance),
    instance,
    timestamp: Number(timestamp),
  };
}
