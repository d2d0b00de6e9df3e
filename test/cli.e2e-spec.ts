// The maintenance CLI's answers to a newcomer's first mistakes, run as an operator would (the built dist/ CLI as
// its own process): a command before the schema exists, a database one migration behind, an unknown command,
// --version and help with the database out of reach. The wording comes from one place (src/cli/cli-errors.ts), so
// commands added later get it too.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';
import { ROOT, runCli } from './support/spawn.js';

let database: TestDatabase;
const env = (): Record<string, string> => ({ DATA_DIR: database.dataDir, DATABASE_URL: database.url });

beforeEach(async () => {
  database = await createTestDatabase();
});
afterEach(async () => {
  await database.drop();
});

/** The SQL the test needs on the CLI's database, outside the CLI. */
async function query(sql: string): Promise<void> {
  const url = database.url;
  const dataSource = new DataSource(
    url.startsWith('sqlite:')
      ? { type: 'better-sqlite3', database: url.slice(7) }
      : { type: 'postgres', url },
  );
  await dataSource.initialize();
  try {
    await dataSource.query(sql);
  } finally {
    await dataSource.destroy();
  }
}

describe('maintenance CLI on a database without schema', () => {
  it('answers every command that needs the schema with one line naming migration:run, exit 1', async () => {
    const commands = [
      ['api-key:list'],
      ['api-key:create', '--name', 'first', '--scopes', 'admin'],
      ['jobs:retry', '1'],
    ];
    // Opened once first: migration:status makes the SQLite file (and no table the commands need).
    expect((await runCli(['migration:status'], env())).code).toBe(0);
    // One after the other: on a loaded machine three Nest starts at once can each outlast runCli's time-out.
    const results = [];
    for (const args of commands) results.push(await runCli(args, env()));
    results.forEach((result, index) => {
      expect({ command: commands[index][0], code: result.code, stdout: result.stdout }).toEqual({
        command: commands[index][0],
        code: 1,
        stdout: '',
      });
      expect(result.stderr.trim().split('\n')).toEqual([
        expect.stringMatching(/^The database has no schema yet: run migration:run .*start the service once/),
      ]);
    });
    // Nothing was created on the way: the schema is still the first start's (or migration:run's) to make.
    expect((await runCli(['migration:status'], env())).stdout).not.toMatch(/^applied/m);
  }, 240_000);

  it('says so when the schema is older than the CLI', async () => {
    expect((await runCli(['migration:run'], env())).code).toBe(0);
    // As if the database had last been migrated by a build without the jobs table.
    await query('DROP TABLE jobs');
    await query("DELETE FROM migrations WHERE name = 'Jobs1763780000600'");
    const behind = await runCli(['jobs:list'], env());
    expect({ code: behind.code, stdout: behind.stdout }).toEqual({ code: 1, stdout: '' });
    expect(behind.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        /^The database schema is older than this version \(.*jobs.*\): run migration:run /,
      ),
    ]);
  });
});

describe('maintenance CLI basics', () => {
  it('reports an unknown command once, exit 1', async () => {
    expect((await runCli(['migration:status'], env())).code).toBe(0);
    const result = await runCli(['api-keys:list'], env());
    expect(result.code).toBe(1);
    expect(result.stderr.match(/unknown command/g)).toHaveLength(1);
    expect(result.stderr).toContain("'api-keys:list'");
  });

  it('prints its version without reading the configuration or opening a database', async () => {
    const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      version: string;
    };
    const dataDir = path.join(database.dataDir, 'never-created');
    const result = await runCli(['--version'], { DATA_DIR: dataDir, PORT: 'not a port' });
    expect(result).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    expect(fs.existsSync(dataDir)).toBe(false);
  });

  it('prints help, per-command help and its version under its own name with the database out of reach', async () => {
    const dataDir = path.join(database.dataDir, 'never-created');
    const unreachable = { DATA_DIR: dataDir, DATABASE_URL: 'postgres://127.0.0.1:1/unreachable' };
    const top = await runCli(['--help'], unreachable);
    expect({ code: top.code, stderr: top.stderr }).toEqual({ code: 0, stderr: '' });
    expect(top.stdout).toMatch(/^Usage: platform-api \[options\] \[command\]\n/);
    expect(top.stdout).toMatch(/^ {2}migration:status /m);
    const command = await runCli(['api-key:create', '--help'], unreachable);
    expect({ code: command.code, stderr: command.stderr }).toEqual({ code: 0, stderr: '' });
    expect(command.stdout).toMatch(/^Usage: platform-api api-key:create \[options\]\n/);
    expect(command.stdout).toContain('--scopes');
    const version = await runCli(['--version'], unreachable);
    expect({ code: version.code, stderr: version.stderr }).toEqual({ code: 0, stderr: '' });
    // Nothing was opened or written on the way.
    expect(fs.existsSync(dataDir)).toBe(false);
  }, 180_000);
});
