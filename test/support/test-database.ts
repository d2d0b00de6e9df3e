// A fresh database per test file: a SQLite file in a temp folder by default, or a new PostgreSQL database on the
// server DATABASE_URL names (created here, dropped afterwards). Refuses a PostgreSQL database whose name does not
// say it is for tests.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

export interface TestDatabase {
  url: string;
  dataDir: string;
  kind: 'sqlite' | 'postgres';
  drop(): Promise<void>;
}

export const isPostgresRun = (): boolean => /^postgres(ql)?:\/\//i.test(process.env.DATABASE_URL ?? '');

export interface TestDatabaseOptions {
  /** PostgreSQL: create the database with this ICU locale as its default collation (e.g. `en-US`). */
  icuLocale?: string;
}

export async function createTestDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-api-test-'));
  const removeDir = (): void => fs.rmSync(dataDir, { recursive: true, force: true });
  if (!isPostgresRun()) {
    return {
      url: `sqlite:${path.join(dataDir, 'platform.sqlite')}`,
      dataDir,
      kind: 'sqlite',
      drop: () => Promise.resolve(removeDir()),
    };
  }
  const base = new URL(process.env.DATABASE_URL!);
  const baseName = decodeURIComponent(base.pathname.slice(1));
  if (!/test/i.test(baseName)) {
    throw new Error(`Refusing to run tests against database "${baseName}": its name must contain "test".`);
  }
  const name = `${baseName}_${randomBytes(5).toString('hex')}`.toLowerCase();
  await adminQuery(
    base,
    options.icuLocale === undefined
      ? `CREATE DATABASE "${name}"`
      : `CREATE DATABASE "${name}" TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE '${options.icuLocale.replaceAll("'", '')}'`,
  );
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    dataDir,
    kind: 'postgres',
    drop: async () => {
      await adminQuery(base, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      removeDir();
    },
  };
}

async function adminQuery(url: URL, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
