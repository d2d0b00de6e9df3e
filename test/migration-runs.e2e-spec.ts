// Operations 7 and 8, and the migration runner behind them, on the real database.
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource, Table, type MigrationInterface, type QueryRunner } from 'typeorm';
import { MIGRATIONS } from '../migrations/index.js';
import { dataSourceOptions } from '../src/database/data-source.js';
import { resolvePortableColumns } from '../src/database/portable-columns.js';
import { MigrationRun, MigrationRunStatus } from '../src/database/migration-run.entity.js';
import { MigrationFailedError, MigrationRunner } from '../src/database/migration-runner.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';
import { startTestApp, type TestApp } from './support/test-app.js';

const FIRST = MIGRATIONS[0].name;

describe('operations 7 and 8', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  it('records the start-up run of every migration and lists them newest first with Data null', async () => {
    const response = await t.post('/api/v1/migration/getMigrationRuns', { Context: null, MigrationId: null });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(Object.keys(body)).toEqual(['Succeeded', 'Message', 'Code', 'MigrationRuns']);
    expect(body).toMatchObject({ Succeeded: true, Message: null, Code: null });
    expect(body.MigrationRuns).toHaveLength(MIGRATIONS.length);
    const run = body.MigrationRuns.find((entry: { Migration: string }) => entry.Migration === FIRST);
    expect(run).toEqual({
      Id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      Migration: FIRST,
      MigrationSource: 'typeorm:migrations/1763780000000-Init',
      TimeStamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      Status: 'Succeeded',
      Data: null,
    });
  });

  it('answers details with the run data', async () => {
    const response = await t.post('/api/v1/migration/details', { MigrationId: FIRST });
    const body = response.json();
    expect(body).toMatchObject({ Succeeded: true, Code: null });
    expect(body.MigrationRuns[0].Data).toEqual({
      Direction: 'up',
      Trigger: 'startup',
      DurationMs: expect.any(Number),
      Host: expect.any(String),
      ProcessId: expect.any(Number),
      AppVersion: expect.stringMatching(/^\d+\.\d+\.\d+/),
      Checksum: expect.stringMatching(/^[0-9a-f]{64}$/),
      Error: null,
    });
    const byRunId = (
      await t.post('/api/v1/migration/details', { MigrationId: body.MigrationRuns[0].Id })
    ).json();
    expect(byRunId.MigrationRuns).toHaveLength(1);
  });

  it('answers MigrationNotFound for an unknown migration, keeping the documented shape', async () => {
    for (const url of ['/api/v1/migration/getMigrationRuns', '/api/v1/migration/details']) {
      const response = await t.post(url, { MigrationId: 'NoSuchMigration1' });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({
        Succeeded: false,
        Message: expect.stringContaining('NoSuchMigration1'),
        Code: 'MigrationNotFound',
        MigrationRuns: null,
      });
    }
  });

  it('requires MigrationId in details and names it', async () => {
    const response = await t.post('/api/v1/migration/details', { Context: { Domain: 'x' } });
    expect(response.statusCode).toBe(400);
    expect(response.json().Errors.map((error: { Field: string }) => error.Field)).toContain('MigrationId');
  });

  it('knows an entity for every table the migrations create (each area registers its own)', async () => {
    const rows: Array<{ name: string }> = await t.dataSource.query(
      t.dataSource.options.type === 'postgres'
        ? `SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema()`
        : `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`,
    );
    const tables = rows.map((row) => row.name).filter((name) => name !== 'migrations');
    const entities = t.dataSource.entityMetadatas.map((metadata) => metadata.tableName);
    expect([...tables].sort()).toEqual([...new Set(entities)].sort());
  });

  it('has a schema with no difference from the entities (migration:generate would find nothing)', async () => {
    const sql = await t.dataSource.driver.createSchemaBuilder().log();
    expect(sql.upQueries.map((query) => query.query)).toEqual([]);
  });
});

class AddWidgets1900000000001 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({ name: 'widgets', columns: [{ name: 'id', type: 'integer', isPrimary: true }] }),
    );
  }
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('widgets');
  }
}

class Broken1900000000002 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({ name: 'half_done', columns: [{ name: 'id', type: 'integer', isPrimary: true }] }),
    );
    throw new Error('boom in the middle');
  }
  async down(): Promise<void> {}
}

describe('migration runner', () => {
  let database: TestDatabase;
  let dataSource: DataSource | undefined;

  const open = async (migrations: Array<new () => MigrationInterface>): Promise<DataSource> => {
    database = await createTestDatabase();
    const config = {
      database: database.url.startsWith('sqlite:')
        ? { type: 'sqlite' as const, database: database.url.slice('sqlite:'.length) }
        : { type: 'postgres' as const, url: database.url },
    };
    resolvePortableColumns(config.database.type);
    dataSource = new DataSource({ ...dataSourceOptions(config), migrations });
    await dataSource.initialize();
    return dataSource;
  };
  const runs = (ds: DataSource, migration: string) =>
    ds.getRepository(MigrationRun).find({ where: { migration }, order: { startedAt: 'ASC' } });

  afterEach(async () => {
    await dataSource?.destroy();
    dataSource = undefined;
    await database.drop();
  });

  it('records a failed run although its transaction rolled back, and keeps what succeeded before it', async () => {
    const ds = await open([...MIGRATIONS, AddWidgets1900000000001, Broken1900000000002]);
    const runner = new MigrationRunner(ds);
    await expect(runner.runPending('cli')).rejects.toBeInstanceOf(MigrationFailedError);
    const [failed] = await runs(ds, 'Broken1900000000002');
    expect(failed).toMatchObject({
      status: MigrationRunStatus.Failed,
      details: { Error: 'boom in the middle', Trigger: 'cli' },
    });
    expect(await ds.createQueryRunner().hasTable('half_done')).toBe(false);
    expect(await ds.createQueryRunner().hasTable('widgets')).toBe(true);
    const status = await runner.status();
    expect(status.find((entry) => entry.name === 'Broken1900000000002')?.state).toBe('pending');
    expect(status.find((entry) => entry.name === 'AddWidgets1900000000001')?.state).toBe('applied');
  });

  it('records a revert, and status shows the migration pending again', async () => {
    const ds = await open([...MIGRATIONS, AddWidgets1900000000001]);
    const runner = new MigrationRunner(ds);
    expect(await runner.runPending('cli')).toEqual([
      ...MIGRATIONS.map((m) => m.name),
      'AddWidgets1900000000001',
    ]);
    expect(await runner.revertLast('cli')).toBe('AddWidgets1900000000001');
    const history = await runs(ds, 'AddWidgets1900000000001');
    expect(history.map((run) => run.status)).toEqual([
      MigrationRunStatus.Succeeded,
      MigrationRunStatus.Reverted,
    ]);
    expect(history[1].details.Direction).toBe('down');
    expect(await ds.createQueryRunner().hasTable('widgets')).toBe(false);
    expect((await runner.status()).find((entry) => entry.name === 'AddWidgets1900000000001')?.state).toBe(
      'pending',
    );
  });

  it('reports a run left Running by a dead process as Abandoned, and marks it so at the next migration', async () => {
    const ds = await open([...MIGRATIONS]);
    const runner = new MigrationRunner(ds);
    await runner.runPending('startup');
    const id = randomUUID();
    await ds.getRepository(MigrationRun).insert({
      id,
      migration: FIRST,
      migrationSource: 'typeorm:migrations/1763780000000-Init',
      startedAt: new Date(),
      status: MigrationRunStatus.Running,
      details: {
        Direction: 'up',
        Trigger: 'startup',
        DurationMs: null,
        Host: 'gone',
        ProcessId: 999999,
        AppVersion: '0',
        Checksum: 'x',
        Error: null,
      },
    });
    expect(await runner.isLocked()).toBe(false);
    await runner.runPending('startup');
    expect((await ds.getRepository(MigrationRun).findOneByOrFail({ id })).status).toBe(
      MigrationRunStatus.Abandoned,
    );
  });

  it('shows a migration whose code changed since it ran as drifted', async () => {
    const ds = await open([...MIGRATIONS]);
    const runner = new MigrationRunner(ds);
    await runner.runPending('cli');
    expect((await runner.status()).every((entry) => entry.state === 'applied' && !entry.drifted)).toBe(true);
    const [run] = await runs(ds, FIRST);
    await ds
      .getRepository(MigrationRun)
      .update({ id: run.id }, { details: { ...run.details, Checksum: 'changed' } });
    expect((await runner.status()).find((entry) => entry.name === FIRST)?.drifted).toBe(true);
  });
});
