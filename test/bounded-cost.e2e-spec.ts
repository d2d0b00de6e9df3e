// Bounded cost: the attacks a holder of an ordinary `schedules` key tried, each against the built service as its own
// process with load shedding at its default (OVERLOAD_EVENT_LOOP_DELAY_MS), while a bystander probes /health/live
// and reads schedules every 50 ms. For each attack the service's event loop is never held 500 ms (its own record,
// test/support/loop-gaps.mjs), no bystander request is shed (503), the process's peak RSS grows by at most 300 MB,
// the answer stays under 1 MiB and the database grows by at most 20 MiB. The answer's and the probe's times are
// printed, not asserted: they are the test machine's as much as the service's (bench/ical-import.mjs measures
// them). Scaled to run in seconds where the bound shows at that size (the 25 MB line is kept).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';
import { longestLoopGap, loopGapsEnv, startServer, type RunningServer } from './support/spawn.js';

const KEY = 'bounded-cost-admin-key-0123456789';
/**
 * The loop bound holds on an idle 2-core machine; on a shared one (CI runners, several suites at once) a process
 * waits for a core while its loop is "held", so the bound is scaled by the load per core — the higher of its value
 * when the spec starts and when the attack ends (the 1-minute average lags a load that has just begun) — and every
 * figure is printed. Sizes are never scaled.
 */
const loadPerCore = () => Math.max(1, os.loadavg()[0] / os.cpus().length);
const LOAD = loadPerCore();
/**
 * The stalls a review found held the service's loop 4,800–5,300 ms. The service's own record of its loop is the
 * measure (`loopMs`: ≤ 25 ms per attack on an idle machine); 500 ms catches any of those stalls with a tenfold
 * margin. The bystander's probe (`probeMaxMs`, printed) also counts the spec's own turns while it sends 25 MB and a
 * loaded runner's scheduling: 30–60 ms idle, 662 ms once in CI (PostgreSQL pass, windows-1252 line) while the
 * service's answer took 821 ms.
 */
const GOALS = {
  loopMs: 500,
  rssBytes: 300e6,
  answerBytes: 1024 * 1024,
  dbBytes: 20 * 1024 * 1024,
};

/** The longest stretch a SCIM PATCH may hold the service's loop (its own record), scaled like the goals above. */
const SCIM_PATCH_LOOP_MS = 100 * LOAD;

const ics = (...parts: string[]) =>
  ['BEGIN:VCALENDAR', 'VERSION:2.0', ...parts, 'END:VCALENDAR', ''].join('\r\n');
const event = (uid: string, ...lines: string[]) =>
  [
    'BEGIN:VEVENT',
    `UID:${uid}`,
    'DTSTART:20260105T090000Z',
    'DTEND:20260105T091500Z',
    ...lines,
    'END:VEVENT',
  ].join('\r\n');

interface Seen {
  status: number;
  answerMs: number;
  answerBytes: number;
  body: string;
  probeMaxMs: number;
  loopMaxMs: number;
  probes: number;
  shed: number;
  rssGrowth: number;
  dbGrowth: number;
}

describe('bounded cost: no single request stalls, bloats or sheds the instance ', () => {
  let database: TestDatabase;
  let server: RunningServer;
  let dataSource: DataSource;
  let loopGaps: string;
  const url = (route: string) => `http://127.0.0.1:${server.port}${route}`;

  beforeAll(async () => {
    database = await createTestDatabase();
    loopGaps = path.join(database.dataDir, 'loop-gaps.txt');
    server = await startServer({
      ...loopGapsEnv(loopGaps),
      DATA_DIR: database.dataDir,
      DATABASE_URL: database.url,
      API_KEYS: KEY,
      RATE_LIMIT: '0',
    });
    const sqlite = database.url.startsWith('sqlite:');
    dataSource = new DataSource(
      sqlite
        ? { type: 'better-sqlite3', database: database.url.slice(7) }
        : { type: 'postgres', url: database.url },
    );
    await dataSource.initialize();
  }, 60_000);
  afterAll(async () => {
    await dataSource?.destroy();
    await server?.stop();
    await database?.drop();
  });

  /** Bytes the database takes: its files on SQLite (main file and WAL), pg_database_size on PostgreSQL. */
  async function databaseBytes(): Promise<number> {
    if (database.url.startsWith('sqlite:')) {
      const file = database.url.slice(7);
      return [file, `${file}-wal`].reduce(
        (sum, name) => sum + (fs.existsSync(name) ? fs.statSync(name).size : 0),
        0,
      );
    }
    const [row] = await dataSource.query<Array<{ size: string }>>(
      'SELECT pg_database_size(current_database()) AS size',
    );
    return Number(row.size);
  }

  /** Peak resident memory of the service so far (VmHWM) and now (VmRSS), bytes. */
  function memory(): { peak: number; now: number } {
    const status = fs.readFileSync(path.join('/proc', String(server.child.pid), 'status'), 'utf8');
    const kib = (name: string) =>
      Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0) * 1024;
    return { peak: kib('VmHWM'), now: kib('VmRSS') };
  }

  /** Sends one attack while the bystander probes; what each side saw. */
  async function attack(text: string, headers: Record<string, string> = {}): Promise<Seen> {
    // Encoded before the clock starts, so the spec's own work is not counted as the service's.
    const body = Buffer.from(text, 'utf8');
    const rssBefore = memory().now;
    const dbBefore = await databaseBytes();
    let running = true;
    let probeMaxMs = 0;
    let probes = 0;
    let shed = 0;
    const bystander = (async () => {
      while (running) {
        const began = performance.now();
        const live = await fetch(url('/health/live'));
        probeMaxMs = Math.max(probeMaxMs, performance.now() - began);
        probes++;
        const read = await fetch(url('/api/v1/Schedule?PageSize=5'), {
          headers: { authorization: `Bearer ${KEY}` },
        });
        if (live.status === 503 || read.status === 503) shed++;
        await read.arrayBuffer();
        await live.arrayBuffer();
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const beganAt = Date.now();
    const began = performance.now();
    const response = await fetch(url('/api/v1/Schedule/import'), {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'text/calendar', ...headers },
      body,
    });
    const answer = await response.text();
    const answerMs = performance.now() - began;
    // Let the bystander see the time right after the answer too (a late garbage collection, the answer's write).
    await new Promise((resolve) => setTimeout(resolve, 200));
    running = false;
    await bystander;
    const endedAt = Date.now();
    return {
      status: response.status,
      answerMs,
      answerBytes: Buffer.byteLength(answer),
      body: answer,
      probeMaxMs,
      loopMaxMs: longestLoopGap(loopGaps, beganAt, endedAt),
      probes,
      shed,
      rssGrowth: memory().peak - rssBefore,
      dbGrowth: (await databaseBytes()) - dbBefore,
    };
  }

  function expectBounded(seen: Seen): void {
    const load = Math.max(LOAD, loadPerCore());
    const report = { ...seen, body: seen.body.slice(0, 200), load };
    // Printed so a failure (or a slow machine) shows every figure at once.
    process.stdout.write(`${JSON.stringify(report)}\n`);
    expect(seen.probes).toBeGreaterThan(0);
    expect(seen.loopMaxMs).toBeLessThanOrEqual(GOALS.loopMs * load);
    expect(seen.shed).toBe(0);
    expect(seen.rssGrowth).toBeLessThanOrEqual(GOALS.rssBytes);
    expect(seen.answerBytes).toBeLessThanOrEqual(GOALS.answerBytes);
    expect(seen.dbGrowth).toBeLessThanOrEqual(GOALS.dbBytes);
  }

  it('refuses one 25 MB RDATE line of 1,500,000 date-times, naming its line', async () => {
    const body = ics(event('rdate', `RDATE:${'20270101T090000Z,'.repeat(1_500_000)}20270101T090000Z`));
    const seen = await attack(body);
    expect(seen.status).toBe(400);
    expect(seen.body).toContain('line 7: RDATE: is more than 1,048,576 characters long');
    // Refused as the body arrives, the moment the line passes 1 MiB: no chunk costs more than its own scan, and
    // the rest of the 25 MB is read and dropped, never collected or decoded (ContentLineMeter).
    expectBounded(seen);
  }, 30_000);

  it('refuses the same line sent as windows-1252, measured in octets as it arrives', async () => {
    const body = ics(event('rdate', `RDATE:${'20270101T090000Z,'.repeat(1_500_000)}20270101T090000Z`));
    const seen = await attack(body, { 'content-type': 'text/calendar; charset=windows-1252' });
    expect(seen.status).toBe(400);
    expect(seen.body).toContain('line 7: RDATE: is more than 1,048,576 characters long');
    expectBounded(seen);
  }, 30_000);

  it('answers one event and 90,000 empty components with a bounded answer, and keeps it for its Idempotency-Key', async () => {
    const empty = 'BEGIN:FOO\r\nEND:FOO\r\n'.repeat(90_000).slice(0, -2);
    const body = ics(event(`valid-${randomUUID()}`), empty);
    const seen = await attack(body, { 'idempotency-key': `"${randomUUID()}"` });
    expect(seen.status).toBe(201);
    const answer = JSON.parse(seen.body) as {
      Skipped: unknown[];
      SkippedTotal: number;
      SkippedCounts: unknown[];
    };
    expect(answer.Skipped).toHaveLength(100);
    expect(answer.SkippedTotal).toBe(90_000);
    expect(answer.SkippedCounts).toEqual([{ Component: 'FOO', Count: 90_000 }]);
    expectBounded(seen);
  }, 30_000);

  it('refuses a calendar of 200,000 empty components at the first one over the limit', async () => {
    const body = ics(event('many'), 'BEGIN:FOO\r\nEND:FOO\r\n'.repeat(200_000).slice(0, -2));
    const seen = await attack(body);
    expect(seen.status).toBe(400);
    expect(seen.body).toContain('more than 100,000 components');
    expectBounded(seen);
  }, 30_000);

  it('refuses 2,000 events whose rule can never occur (FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30) in well under 3 s', async () => {
    const events = Array.from({ length: 2_000 }, (_, i) =>
      event(`never-${i}`, 'RRULE:FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30'),
    );
    const seen = await attack(ics(...events));
    expect(seen.status).toBe(400);
    expect(seen.body).toContain('can never occur after the first occurrence');
    expectBounded(seen);
  }, 30_000);

  it('keeps the event loop free through a SCIM PATCH of 1,000 operations filtering 100 emails each', async () => {
    const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/scim+json' };
    const emails = Array.from({ length: 100 }, (_, i) => ({
      value: `mail${i}@example.com`,
      type: i % 2 === 0 ? 'work' : 'home',
    }));
    const created = await fetch(url('/api/v1/scim/Users'), {
      method: 'POST',
      headers,
      body: JSON.stringify({
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
        userName: `patched-${randomUUID()}@example.com`,
        emails,
      }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const operations = Array.from({ length: 1_000 }, (_, i) => ({
      op: 'replace',
      path: 'emails[type eq "work" and value co "@example"].display',
      value: `Work ${i}`,
    }));
    const beganAt = Date.now();
    const response = await fetch(url(`/api/v1/scim/Users/${id}`), {
      method: 'PATCH',
      headers,
      body: JSON.stringify({
        schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
        Operations: operations,
      }),
    });
    const answer = (await response.json()) as { emails: Array<{ type: string; display?: string }> };
    // Let the record see the time right after the answer too.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const loopMaxMs = longestLoopGap(loopGaps, beganAt, Date.now());
    process.stdout.write(
      `${JSON.stringify({ case: 'scim-patch', status: response.status, loopMaxMs, load: LOAD })}\n`,
    );
    expect(response.status).toBe(200);
    expect(answer.emails.filter((email) => email.type === 'work').map((email) => email.display)).toEqual(
      Array.from({ length: 50 }, () => 'Work 999'),
    );
    // Before, the operations ran in one stretch of ~0.8–1.6 s on this machine; now in slices of ~8 ms.
    expect(loopMaxMs).toBeLessThanOrEqual(SCIM_PATCH_LOOP_MS);
  }, 60_000);

  /** Schedules stored from UIDs starting with `prefix`. */
  async function storedWith(prefix: string): Promise<number> {
    const [row] = await dataSource.query<Array<{ count: string | number }>>(
      `SELECT COUNT(*) AS count FROM schedules WHERE ical_uid LIKE '${prefix}%'`,
    );
    return Number(row.count);
  }

  it('refuses 20,000 never-occurring SECONDLY rules with UNTIL at once, with a bounded answer, storing nothing', async () => {
    const events = Array.from({ length: 20_000 }, (_, i) =>
      event(`never-until-${i}`, 'RRULE:FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30;UNTIL=20300101T000000Z'),
    );
    const seen = await attack(ics(...events));
    expect(seen.status).toBe(400);
    expect(seen.body).toContain('can never occur after the first occurrence');
    expectBounded(seen);
    expect(await storedWith('never-until-')).toBe(0);
  }, 120_000);

  it('refuses 20,000 rules that match rarely (Feb 29 on a Monday) once their checks pass the import allowance', async () => {
    const events = Array.from({ length: 20_000 }, (_, i) =>
      event(`rare-${i}`, 'RRULE:FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO'),
    );
    const seen = await attack(ics(...events));
    expect(seen.status).toBe(400);
    expect(seen.body).toContain("the calendar's rules take more checking than one import allows");
    expectBounded(seen);
    expect(await storedWith('rare-')).toBe(0);
  }, 120_000);
});
