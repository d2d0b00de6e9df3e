// db:copy into a fresh, empty PostgreSQL database is all or nothing, schema included: the migrations run in the
// data's transaction, so a copy killed (SIGKILL) while it loads leaves the database exactly as it was — no table,
// function, sequence or type, no `migrations` row — and the next copy into it is not refused as "holds data".
// Runs in the SQLite pass only (the source is a SQLite file); the target is a database of its own on the server at
// 127.0.0.1:5432 (PG_ADMIN_URL to change).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3';
import pg from 'pg';
import { killCopyHalfway } from './support/kill-copy.js';
import { runCli } from './support/spawn.js';
import { createTestDatabase, isPostgresRun, type TestDatabase } from './support/test-database.js';

const ADMIN_URL = process.env.PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const suite = isPostgresRun() ? describe.skip : describe;

async function query(url: string, sql: string): Promise<unknown[][]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query({ text: sql, rowMode: 'array' })).rows as unknown[][];
  } finally {
    await client.end();
  }
}

/** Every object in the database's own schemas (not pg_catalog / information_schema / toast), by kind and name. */
const OWN_OBJECTS = `
  SELECT 'relation ' || c.relkind::text || ' ' || n.nspname || '.' || c.relname FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'
  UNION ALL
  SELECT 'function ' || n.nspname || '.' || p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
   WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
  UNION ALL
  SELECT 'type ' || n.nspname || '.' || t.typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
   WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'
  UNION ALL
  SELECT 'extension ' || extname FROM pg_extension
  UNION ALL
  SELECT 'schema ' || nspname FROM pg_namespace
  ORDER BY 1`;

suite('db:copy into an empty PostgreSQL database', () => {
  let source: TestDatabase;
  let pgName: string;
  let pgUrl: string;
  const env = () => ({ DATABASE_URL: source.url, DATA_DIR: source.dataDir });

  beforeAll(async () => {
    source = await createTestDatabase();
    const migrated = await runCli(['migration:run'], env());
    expect(migrated.code).toBe(0);
    // Enough rows that the copy is still loading rate_limits when it is killed.
    const db = new Database(source.url.slice('sqlite:'.length));
    const insert = db.prepare('INSERT INTO rate_limits (key, points, expire) VALUES (?, 1, 0)');
    db.transaction(() => {
      for (let i = 0; i < 300_000; i++) insert.run(`k${i}`);
    })();
    db.close();
    pgName = `test_dbcopy_empty_${randomBytes(4).toString('hex')}`;
    pgUrl = `${ADMIN_URL.replace(/\/[^/]*$/, '')}/${pgName}`;
    await query(ADMIN_URL, `CREATE DATABASE "${pgName}"`);
  }, 120_000);

  afterAll(async () => {
    await query(ADMIN_URL, `DROP DATABASE IF EXISTS "${pgName}" WITH (FORCE)`);
    await source?.drop();
  });

  it('leaves no table, function or migrations row behind when killed halfway; the next copy goes through', async () => {
    const before = await query(pgUrl, OWN_OBJECTS);
    await killCopyHalfway(['--to', pgUrl], env());
    const tables = await query(
      pgUrl,
      `SELECT table_schema || '.' || table_name FROM information_schema.tables
        WHERE table_schema NOT IN ('pg_catalog', 'information_schema')`,
    );
    expect(tables).toEqual([]);
    expect(await query(pgUrl, OWN_OBJECTS)).toEqual(before);
    // The killed session's transaction and lock are gone with it: a copy now finds an empty database, not data.
    const again = await runCli(['db:copy', '--to', pgUrl], env(), 120_000);
    expect(again.stderr).toBe('');
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^table=rate_limits rows=300000 /m);
    const migrations = await query(pgUrl, 'SELECT COUNT(*)::int FROM migrations');
    const sourceMigrations = new Database(source.url.slice('sqlite:'.length), { readonly: true });
    expect(migrations).toEqual([[sourceMigrations.prepare('SELECT COUNT(*) FROM migrations').pluck().get()]]);
    sourceMigrations.close();
  }, 240_000);
});
