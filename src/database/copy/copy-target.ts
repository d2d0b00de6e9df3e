// The target of db:copy (and db:restore): its write transaction, with the schema brought to the source's version
// first. All or nothing on both engines, whatever the target held before (even nothing at all):
// - PostgreSQL: the migrations run in the data's own transaction (DDL is transactional there), on one connection,
//   so an interrupted copy into an empty database leaves no table, no function and no `migrations` row behind.
// - SQLite: a migration's DDL commits before the data's transaction; a target without a schema is therefore built
//   in a file beside it and renamed into place at the end (stagedTarget).
import fs from 'node:fs';
import type pg from 'pg';
import { MIGRATIONS } from '../../../migrations/index.js';
import type { DatabaseConfig } from '../../config/config.js';
import { MigrationRunner } from '../migration-runner.js';
import { openDatabase } from '../data-source.js';
import { describeDatabase } from '../database-url.js';
import { openRaw, postgresRaw, type RawDatabase } from './raw-database.js';
import { schemaVersion } from './schema-check.js';

export class CopyRefusedError extends Error {
  override name = 'CopyRefusedError';
}

/** The target, migrated to the source's schema `version` and in a write transaction that commit() ends. */
export async function beginTarget(to: DatabaseConfig, version: number): Promise<RawDatabase> {
  if (to.type === 'postgres') return beginPostgresTarget(to, version);
  await refuseNewer(to, version);
  await migrate(to, version);
  const target = await openRaw(to);
  await target.beginWrite();
  return target;
}

async function beginPostgresTarget(to: DatabaseConfig, version: number): Promise<RawDatabase> {
  const dataSource = await openDatabase(to, { migrations: MIGRATIONS.slice(0, version) });
  const queryRunner = dataSource.createQueryRunner();
  const release = async () => {
    await queryRunner.release();
    await dataSource.destroy();
  };
  let target: RawDatabase | undefined;
  try {
    target = await postgresRaw((await queryRunner.connect()) as pg.ClientBase, release);
    await queryRunner.startTransaction();
    refuseVersion(to, await target.migrationNames(), version);
    await new MigrationRunner(dataSource).runPendingInTransaction(queryRunner);
    return target;
  } catch (error) {
    if (target) {
      await target.rollback();
      await target.close();
    } else await release().catch(() => undefined);
    throw error;
  }
}

/** Applies this build's first `version` migrations the database has not (each committed on its own). */
export async function migrate(to: DatabaseConfig, version: number): Promise<void> {
  const dataSource = await openDatabase(to, { migrations: MIGRATIONS.slice(0, version) });
  try {
    await new MigrationRunner(dataSource).runPending('cli');
  } finally {
    await dataSource.destroy();
  }
}

/** Refuses a target already past the source's schema version. */
async function refuseNewer(to: DatabaseConfig, version: number): Promise<void> {
  const target = await openRaw(to);
  try {
    refuseVersion(to, await target.migrationNames(), version);
  } finally {
    await target.close();
  }
}

function refuseVersion(to: DatabaseConfig, applied: string[], version: number): void {
  if (schemaVersion(applied, `the target ${describeDatabase(to)}`) > version) {
    throw new CopyRefusedError(
      `the target ${describeDatabase(to)} has a newer schema than the source; migrate the source first (migration:run) or copy into an empty database`,
    );
  }
}

/**
 * A SQLite target with no schema yet (no file, or a file without tables) is built in a file beside it and renamed
 * into place at the end: SQLite commits each migration's DDL before the data's transaction begins, so a copy killed
 * in between would otherwise leave a migrated, empty database where there was none. A target that holds a schema
 * is loaded in place, in one transaction. Undefined when no staging is needed.
 */
export async function stagedTarget(
  to: DatabaseConfig,
): Promise<{ work: DatabaseConfig; complete(): void; discard(): void } | undefined> {
  if (to.type !== 'sqlite' || !(await hasNoSchema(to.database))) return undefined;
  const file = `${to.database}.copying-${process.pid}`;
  const remove = () => {
    for (const suffix of ['', '-wal', '-shm', '-journal']) fs.rmSync(`${file}${suffix}`, { force: true });
  };
  remove();
  return {
    work: { type: 'sqlite', database: file },
    // Every connection to the staged file is closed by now, so its WAL is checkpointed into the file.
    complete: () => fs.renameSync(file, to.database),
    discard: remove,
  };
}

async function hasNoSchema(file: string): Promise<boolean> {
  if (!fs.existsSync(file)) return true;
  const target = await openRaw({ type: 'sqlite', database: file }, { readonly: true });
  try {
    return (await target.schema()).size === 0;
  } finally {
    await target.close();
  }
}
