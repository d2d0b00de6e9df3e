// `audit:list`, the CLI's view of the audit trail, run as an operator would: the built CLI as its own
// process on a database no instance serves, so nothing folds the tail: the events the CLI writes stay in
// `audit_events_tail` while the first migrations' events sit in `audit_events`, and every page is read across both
// tables. Filters, paging with the printed cursor, the text and JSON forms, and refusals of bad flags.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';
import { runCli } from './support/spawn.js';

interface AuditEvent {
  Id: string;
  OccurredAt: string;
  ActorType: string;
  ActorId: string | null;
  Action: string;
  ResourceType: string;
  ResourceId: string | null;
  Outcome: string;
}

let database: TestDatabase;
const env = (): Record<string, string> => ({ DATA_DIR: database.dataDir, DATABASE_URL: database.url });

/** Runs the CLI; fails the test with its stderr unless it exits 0. */
async function cli(...args: string[]): Promise<string> {
  const result = await runCli(args, env());
  expect({ args, code: result.code, stderr: result.stderr }).toEqual({ args, code: 0, stderr: '' });
  return result.stdout;
}

async function listed(...args: string[]): Promise<{ Result: AuditEvent[]; NextCursor: string | null }> {
  return JSON.parse(await cli('audit:list', '--json', ...args)) as {
    Result: AuditEvent[];
    NextCursor: string | null;
  };
}

let created: string;
let revoked: string;

beforeAll(async () => {
  database = await createTestDatabase();
  await cli('migration:run');
  const output = await cli('api-key:create', '--name', 'audit-cli-reader', '--scopes', 'schedules');
  created = /^Created API key (\S+) /m.exec(output)?.[1] ?? '';
  expect(created).not.toBe('');
  const other = await cli('api-key:create', '--name', 'audit-cli-revoked', '--scopes', 'users');
  revoked = /^Created API key (\S+) /m.exec(other)?.[1] ?? '';
  await cli('api-key:revoke', revoked);
}, 240_000);

afterAll(async () => {
  await database?.drop();
});

describe('audit:list', () => {
  it('lists the CLI’s own changes newest first, naming the command as the actor', async () => {
    const { Result } = await listed('--resource-type', 'ApiKey');
    expect(Result.map((event) => [event.Action, event.ResourceId, event.ActorType, event.ActorId])).toEqual([
      ['api-key.revoke', revoked, 'cli', 'api-key:revoke'],
      ['api-key.create', revoked, 'cli', 'api-key:create'],
      ['api-key.create', created, 'cli', 'api-key:create'],
    ]);
    expect(Result.every((event) => event.Outcome === 'success')).toBe(true);
    const ids = Result.map((event) => BigInt(event.Id));
    expect([...ids].sort((a, b) => (a > b ? -1 : a < b ? 1 : 0))).toEqual(ids);
  });

  it('filters by action, actor, resource id and time', async () => {
    expect((await listed('--action', 'api-key.revoke')).Result.map((event) => event.ResourceId)).toEqual([
      revoked,
    ]);
    expect((await listed('--actor', 'api-key:create')).Result.map((event) => event.ResourceId)).toEqual([
      revoked,
      created,
    ]);
    expect((await listed('--resource-id', created)).Result.map((event) => event.Action)).toEqual([
      'api-key.create',
    ]);
    expect((await listed('--since', '2999-01-01T00:00:00Z')).Result).toEqual([]);
    const everything = (await listed('--page-size', '500')).Result;
    expect(everything.length).toBeGreaterThan(3);
    // Until the oldest event's own instant (exclusive): nothing before it.
    const oldest = everything[everything.length - 1].OccurredAt;
    expect((await listed('--until', oldest)).Result).toEqual([]);
  });

  it('pages with the printed cursor through every event exactly once', async () => {
    const everything = (await listed('--page-size', '500')).Result.map((event) => event.Id);
    expect(everything.length).toBeGreaterThan(3);
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await listed('--page-size', '2', ...(cursor === null ? [] : ['--cursor', cursor]));
      expect(page.Result.length).toBeLessThanOrEqual(2);
      paged.push(...page.Result.map((event) => event.Id));
      cursor = page.NextCursor;
    } while (cursor !== null && paged.length < everything.length + 2);
    expect(paged).toEqual(everything);
  }, 240_000);

  it('prints one line per event and how to get the next page', async () => {
    const text = await cli('audit:list', '--resource-type', 'ApiKey', '--page-size', '2');
    const lines = text.trim().split('\n');
    expect(lines).toEqual([
      expect.stringMatching(
        new RegExp(
          `^\\d+  \\d{4}-\\d{2}-\\d{2}T[^ ]+Z  success api-key\\.revoke  ApiKey ${revoked}  by cli api-key:revoke`,
        ),
      ),
      expect.stringMatching(
        new RegExp(`^\\d+  \\S+  success api-key\\.create  ApiKey ${revoked}  by cli api-key:create`),
      ),
      expect.stringMatching(/^More: --cursor \d+$/),
    ]);
    const next = lines[2].slice('More: '.length).split(' ');
    const rest = await cli('audit:list', '--resource-type', 'ApiKey', '--page-size', '2', ...next);
    expect(rest.trim().split('\n')).toEqual([
      expect.stringMatching(new RegExp(`api-key\\.create  ApiKey ${created}  by cli api-key:create`)),
    ]);
    expect((await cli('audit:list', '--action', 'scim.user.patch')).trim()).toBe('No audit events match.');
  });

  it('refuses bad flags with one line naming the flag, exit 1', async () => {
    for (const [args, message] of [
      [['--cursor', 'abc'], /--cursor must be a value printed by a previous page/],
      [['--page-size', '0'], /--page-size must be 1 to 500/],
      [['--since', 'yesterday'], /--since must be an ISO 8601 instant/],
    ] as const) {
      const result = await runCli(['audit:list', ...args], env());
      expect({ args, code: result.code, stdout: result.stdout }).toEqual({ args, code: 1, stdout: '' });
      expect(result.stderr).toMatch(message);
    }
  }, 120_000);
});
