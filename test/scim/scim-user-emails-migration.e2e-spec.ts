// Migration 1763780000800 (scim_user_emails): on a database that already holds users, the table is filled from
// their documents exactly as the service writes it (userEmailRows), in batches; SQLite and PostgreSQL.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { DataSource } from 'typeorm';
// Registers every area's entities, as the app does before its DataSource starts.
import '../../src/app.module.js';
import { MIGRATIONS } from '../../migrations/index.js';
import { dataSourceOptions } from '../../src/database/data-source.js';
import { resolvePortableColumns } from '../../src/database/portable-columns.js';
import { MigrationRunner } from '../../src/database/migration-runner.js';
import { userEmailRows } from '../../src/scim/user-email-rows.js';
import { createTestDatabase, isPostgresRun, type TestDatabase } from '../support/test-database.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { CORE_USER, filterQuery, scimClient } from './scim-client.js';

const AT = MIGRATIONS.findIndex((migration) => migration.name === 'ScimUserEmails1763780000800');

describe('migration ScimUserEmails1763780000800', () => {
  let database: TestDatabase;
  let dataSource: DataSource | undefined;
  const config = () => ({
    database: database.url.startsWith('sqlite:')
      ? { type: 'sqlite' as const, database: database.url.slice('sqlite:'.length) }
      : { type: 'postgres' as const, url: database.url },
  });
  const open = async (migrations: typeof MIGRATIONS): Promise<DataSource> => {
    resolvePortableColumns(config().database.type);
    dataSource = new DataSource({ ...dataSourceOptions(config()), migrations });
    await dataSource.initialize();
    return dataSource;
  };

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database.drop();
  });

  it('backfills one row per e-mail object of every user already stored', async () => {
    expect(AT).toBeGreaterThan(0);
    const before = await open(MIGRATIONS.slice(0, AT));
    await new MigrationRunner(before).runPending('cli');
    const postgres = before.options.type === 'postgres';
    const documents: Array<Record<string, unknown>> = [
      {
        emails: [
          { value: 'Ann.Lee@Example.COM', type: 'Work', primary: true },
          'not an object',
          { value: 'ann@home.example', primary: false },
          { type: 'other' },
        ],
      },
      { displayName: 'no e-mails' },
      { emails: [{ value: `${'x'.repeat(300)}@example.com`, type: 'home' }] },
      // More users than one backfill batch (500).
      ...Array.from({ length: 620 }, (_, index) => ({
        emails: [{ value: `U${String(index)}@Example.com` }],
      })),
    ];
    const users = documents.map((attributes, index) => ({ id: randomUUID(), index, attributes }));
    for (let start = 0; start < users.length; start += 100) {
      const chunk = users.slice(start, start + 100);
      const parameters: unknown[] = [];
      const tuples = chunk.map((user) => {
        const values = [
          user.id,
          `user${String(user.index)}`,
          `user${String(user.index)}`,
          JSON.stringify(user.attributes),
          1,
          new Date(Date.UTC(2026, 0, 1, 0, 0, user.index)).toISOString(),
        ];
        values.push(values[5]);
        const at = parameters.length;
        parameters.push(...values);
        const p = (offset: number) => (postgres ? `$${String(at + offset + 1)}` : '?');
        return `(${values.map((_, offset) => p(offset)).join(', ')})`;
      });
      await before.query(
        `INSERT INTO scim_users (id, user_name, user_name_lower, attributes, version, created_at, last_modified) VALUES ${tuples.join(', ')}`,
        parameters,
      );
    }
    await before.destroy();
    dataSource = undefined;

    const after = await open(MIGRATIONS);
    await new MigrationRunner(after).runPending('cli');
    const rows = await after.query<Array<Record<string, unknown>>>(
      'SELECT user_id, position, value, value_key, type, is_primary FROM scim_user_emails',
    );
    const actual = rows
      .map((row) => ({
        userId: String(row['user_id']),
        position: Number(row['position']),
        value: row['value'],
        valueKey: row['value_key'],
        type: row['type'],
        primary: row['is_primary'] === null ? null : Boolean(row['is_primary']),
      }))
      .sort((a, b) => `${a.userId}/${String(a.position)}`.localeCompare(`${b.userId}/${String(b.position)}`));
    const expected = users
      .flatMap((user) => userEmailRows(user.attributes).map((row) => ({ userId: user.id, ...row })))
      .sort((a, b) => `${a.userId}/${String(a.position)}`.localeCompare(`${b.userId}/${String(b.position)}`));
    expect(actual).toEqual(expected);
    expect(actual).toHaveLength(3 + 1 + 620);
    const first = actual.filter((row) => row.userId === users[0]?.id);
    expect(first).toEqual([
      expect.objectContaining({ position: 0, value: 'ann.lee@example.com', type: 'work', primary: true }),
      expect.objectContaining({ position: 2, value: 'ann@home.example', type: null, primary: false }),
      expect.objectContaining({ position: 3, value: null, valueKey: null, type: 'other', primary: null }),
    ]);
    // The next migration (1763780000900) starts its user count from the users already there.
    const [stats] = await after.query<Array<{ n: number | string }>>(
      'SELECT user_count AS n FROM scim_user_stats WHERE id = 1',
    );
    expect(Number(stats?.n)).toBe(users.length);
    const long = actual.find((row) => row.userId === users[2]?.id);
    expect(String(long?.valueKey)).toHaveLength(200);
  });
});

// Without the privilege to create pg_trgm, the migration goes on without the trigram index and `co` still works.
const describePostgres = isPostgresRun() ? describe : describe.skip;
describePostgres('migration ScimUserEmails1763780000800 without pg_trgm', () => {
  // Only parsed when the block runs: describe.skip still evaluates this body (DATABASE_URL may be empty then).
  const base = new URL(isPostgresRun() ? (process.env.DATABASE_URL ?? '') : 'postgres://localhost/test');
  const suffix = randomBytes(4).toString('hex');
  const name = `${decodeURIComponent(base.pathname.slice(1))}_notrgm_${suffix}`.toLowerCase();
  const role = `test_notrgm_${suffix}`;
  const admin = async (sql: string, database = decodeURIComponent(base.pathname.slice(1))): Promise<void> => {
    const url = new URL(base);
    url.pathname = `/${database}`;
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  let t: TestApp | undefined;

  beforeAll(async () => {
    await admin(`CREATE ROLE "${role}" LOGIN`);
    await admin(`CREATE DATABASE "${name}"`);
    // May create tables in public, but not extensions (no CREATE on the database).
    await admin(`GRANT CREATE, USAGE ON SCHEMA public TO "${role}"`, name);
  });
  afterAll(async () => {
    await t?.close();
    await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin(`DROP ROLE IF EXISTS "${role}"`);
  });

  it('migrates, leaves the trigram index out, and answers co by scanning the e-mail table', async () => {
    const url = new URL(base);
    url.pathname = `/${name}`;
    url.username = role;
    url.password = '';
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'platform-api-notrgm-'));
    t = await startTestApp({
      database: {
        url: url.toString(),
        dataDir,
        kind: 'postgres',
        drop: () => Promise.resolve(rmSync(dataDir, { recursive: true, force: true })),
      },
    });
    const indexes = await t.dataSource.query<Array<{ n: number }>>(
      `SELECT COUNT(*)::int AS n FROM pg_indexes WHERE indexname = 'IX_scim_user_emails_value_trgm'`,
    );
    expect(indexes[0]?.n).toBe(0);
    const created = await scimClient(t).post('/Users', {
      schemas: [CORE_USER],
      userName: 'no.trigram@example.com',
      emails: [{ value: 'No.Trigram@Example.com', type: 'work' }],
    });
    expect(created.statusCode).toBe(201);
    const found = await scimClient(t).get(filterQuery('emails co "TRIGRAM@"'));
    expect(found.json()).toMatchObject({ totalResults: 1 });
  });
});
