// The memory one iCalendar import may take, and the imports one instance carries out at once: the built service
// as its own process, its resident memory read from /proc (a bound on memory, never on time). A calendar under
// every per-event cap but over the per-calendar ones is refused naming the limit; the largest calendar of that kind
// the limits accept is stored; three of those at once are either stored or answered 503 with Retry-After, never
// half-written. The calendars are built here, not kept as files.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';
import { startServer, type RunningServer } from './support/spawn.js';

const KEY = 'import-memory-admin-key-0123456789';
/** What one import may add to the service's resident memory, and the most an answer may be. */
const RSS_GROWTH = 300e6;
const ANSWER_BYTES = 1024 * 1024;
const EVENTS = 1_300;

/** `n` UTC date-times a day apart from 2027-01-01, at `hour`. */
function dates(n: number, hour: number): string[] {
  const start = Date.UTC(2027, 0, 1, hour);
  return Array.from({ length: n }, (_, i) =>
    new Date(start + i * 86_400_000)
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d{3}/, ''),
  );
}

/** `count` RDATE and `count` EXDATE values an event, four a line; `pad` characters of DESCRIPTION an event. */
function calendar(tag: string, count: number, pad = 0): Buffer {
  const lines = (name: string, list: string[]) =>
    Array.from(
      { length: Math.ceil(list.length / 4) },
      (_, i) => `${name}:${list.slice(i * 4, i * 4 + 4).join(',')}`,
    );
  const rdates = lines('RDATE', dates(count, 9));
  const exdates = lines('EXDATE', dates(count, 10));
  const parts = ['BEGIN:VCALENDAR', 'VERSION:2.0'];
  for (let i = 0; i < EVENTS; i++) {
    parts.push(
      'BEGIN:VEVENT',
      `UID:${tag}-${i}@example.com`,
      'DTSTART:20270101T090000Z',
      'DTEND:20270101T091500Z',
      'RRULE:FREQ=DAILY',
      ...(pad > 0 ? [`DESCRIPTION:${'x'.repeat(pad)}`] : []),
      ...rdates,
      ...exdates,
      'END:VEVENT',
    );
  }
  parts.push('END:VCALENDAR', '');
  return Buffer.from(parts.join('\r\n'));
}

interface Answer {
  status: number;
  retryAfter: string | null;
  bytes: number;
  text: string;
}

describe('import memory: bounded per request and per instance', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let server: RunningServer | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
    const sqlite = database.url.startsWith('sqlite:');
    dataSource = new DataSource(
      sqlite
        ? { type: 'better-sqlite3', database: database.url.slice(7) }
        : { type: 'postgres', url: database.url },
    );
    // The schema is the service's: it is started once before the data source reads.
    await (await start()).stop();
    server = undefined;
    await dataSource.initialize();
  }, 60_000);
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  /** A fresh service on the spec's database, so each case's peak memory is its own. */
  async function start(): Promise<RunningServer> {
    server = await startServer({
      DATA_DIR: database.dataDir,
      DATABASE_URL: database.url,
      API_KEYS: KEY,
      RATE_LIMIT: '0',
    });
    return server;
  }

  /** Resident memory of the service (kB lines of /proc/<pid>/status), bytes: now and its peak so far. */
  function memory(running: RunningServer): { now: number; peak: number } {
    const status = fs.readFileSync(path.join('/proc', String(running.child.pid), 'status'), 'utf8');
    const bytes = (name: string) =>
      Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0) * 1024;
    return { now: bytes('VmRSS'), peak: bytes('VmHWM') };
  }

  async function post(running: RunningServer, body: Buffer): Promise<Answer> {
    const response = await fetch(`http://127.0.0.1:${running.port}/api/v1/Schedule/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'text/calendar' },
      body,
    });
    const text = await response.text();
    return {
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      bytes: Buffer.byteLength(text),
      text,
    };
  }

  async function stored(tag: string): Promise<number> {
    const [row] = await dataSource.query<Array<{ count: string | number }>>(
      `SELECT COUNT(*) AS count FROM schedules WHERE ical_uid LIKE '${tag}-%'`,
    );
    return Number(row.count);
  }

  it('refuses 1,300 events × 672 RDATE and 672 EXDATE values (under every per-event cap), naming the limit', async () => {
    const body = calendar('attack', 672);
    expect(body.length).toBeLessThanOrEqual(32 * 1024 * 1024);
    const running = await start();
    const before = memory(running).now;
    const answer = await post(running, body);
    const growth = memory(running).peak - before;
    process.stdout.write(
      `${JSON.stringify({ case: 'attack', status: answer.status, growth, bytes: answer.bytes })}\n`,
    );
    expect(answer.status).toBe(400);
    expect(answer.text).toContain("brings the calendar's RDATE and EXDATE values to more than 100,000");
    expect(answer.bytes).toBeLessThanOrEqual(ANSWER_BYTES);
    expect(growth).toBeLessThanOrEqual(RSS_GROWTH);
    expect(await stored('attack')).toBe(0);
  }, 120_000);

  it('stores the largest such calendar the limits take (98,800 values, ~29 MB) within the memory bound', async () => {
    const body = calendar('largest', 38, 20_000);
    const running = await start();
    const before = memory(running).now;
    const answer = await post(running, body);
    const growth = memory(running).peak - before;
    process.stdout.write(
      `${JSON.stringify({ case: 'largest', status: answer.status, growth, bytes: answer.bytes })}\n`,
    );
    expect(answer.status).toBe(201);
    expect(answer.bytes).toBeLessThanOrEqual(ANSWER_BYTES);
    expect(growth).toBeLessThanOrEqual(RSS_GROWTH);
    expect(await stored('largest')).toBe(EVENTS);
  }, 180_000);

  it('admits three such calendars at once only while the instance has room: the others 503 with Retry-After', async () => {
    const bodies = ['first', 'second', 'third'].map((tag) => calendar(tag, 38, 20_000));
    const running = await start();
    const before = memory(running).now;
    const answers = await Promise.all(bodies.map((body) => post(running, body)));
    const growth = memory(running).peak - before;
    process.stdout.write(
      `${JSON.stringify({ case: 'three', statuses: answers.map((answer) => answer.status), growth })}\n`,
    );
    const refused = answers.filter((answer) => answer.status === 503);
    expect(answers.filter((answer) => answer.status === 201).length).toBeGreaterThanOrEqual(1);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(refused.length + answers.filter((answer) => answer.status === 201).length).toBe(3);
    for (const answer of refused) {
      expect(Number(answer.retryAfter)).toBeGreaterThan(0);
      expect(answer.text).toContain('IMPORT_INFLIGHT_BYTES');
    }
    // Each calendar stored whole or not at all.
    for (const [index, tag] of ['first', 'second', 'third'].entries()) {
      expect(await stored(tag)).toBe(answers[index].status === 201 ? EVENTS : 0);
    }
    // The bodies refused were received whole (~29 MB each, its chunks and their copy in one buffer) before the
    // refusal; what the admitted one built stays within one import's bound.
    expect(growth).toBeLessThanOrEqual(RSS_GROWTH + 2 * 2 * bodies[0].length);
  }, 240_000);
});
