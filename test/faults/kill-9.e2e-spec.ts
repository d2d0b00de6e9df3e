// The process dies mid-write (SIGKILL under 20 concurrent writers, half of them sending an Idempotency-Key): after a
// restart on the same database every write that was answered 2xx reads back whole, and the retry of every keyed
// write — answered, or in flight at the kill — gets that write's own answer, and nothing is created twice. One kill
// and two starts serve both checks (a start costs seconds on a loaded machine). Runs on SQLite and, when
// DATABASE_URL is PostgreSQL, there.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startServer, type RunningServer } from '../support/spawn.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import {
  API_KEY,
  AUTH,
  WriterLoop,
  createSchedule,
  createScimUser,
  kill9,
  readBackProblems,
  scheduleItems,
  sleep,
  statusCounts,
  waitFor,
  writers,
  type Answer,
} from '../support/faults.js';

/** A start takes ~1 s alone and 10–30 s on a machine shared by eight test runs. */
const START_MS = 60_000;

let database: TestDatabase | undefined;
const servers: RunningServer[] = [];

const env = (db: TestDatabase): Record<string, string> => ({
  DATA_DIR: db.dataDir,
  DATABASE_URL: db.url,
  API_KEYS: API_KEY,
  RATE_LIMIT: '0',
});

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  const writersEnded = WriterLoop.stopAll();
  for (const server of servers) await kill9(server);
  await writersEnded;
  await database?.drop();
});

/** One logical write under its own Idempotency-Key, sent again as it was. */
interface KeyedWrite {
  kind: 'schedule' | 'scim';
  /** The schedule item's name or the userName: unique to this write. */
  name: string;
  send(base: string): Promise<Answer>;
  startedAt?: number;
  first?: Answer;
}

function keyedWrite(kind: KeyedWrite['kind']): KeyedWrite {
  const headers = { 'Idempotency-Key': `"${randomUUID()}"` };
  if (kind === 'schedule') {
    const items = scheduleItems(1, 40);
    return { kind, name: items[0].Name, send: (base) => createSchedule(base, items, headers) };
  }
  const userName = `keyed-${randomUUID()}`;
  return { kind, name: userName, send: (base) => createScimUser(base, userName, headers) };
}

/** How many stored schedules have an item of each name (operation 2, page by page). */
async function scheduleNames(base: string): Promise<Map<string, number>> {
  const names = new Map<string, number>();
  for (let page = 1, pages = 1; page <= pages; page++) {
    const response = await fetch(`${base}/api/v1/Schedule?PageSize=500&PageIndex=${page}`, {
      headers: AUTH,
      signal: AbortSignal.timeout(10_000),
    });
    const body = (await response.json()) as {
      TotalPages: number;
      Result: Array<{ ScheduleItems: Array<{ Name: string }> }>;
    };
    pages = body.TotalPages;
    for (const schedule of body.Result) {
      const name = schedule.ScheduleItems[0]?.Name ?? '';
      names.set(name, (names.get(name) ?? 0) + 1);
    }
  }
  return names;
}

describe('kill -9 under concurrent writers', () => {
  it('keeps every write answered 2xx, whole, and answers every keyed write’s retry with its own answer', async () => {
    const db = database!;
    const first = await startServer(env(db), START_MS);
    servers.push(first);
    const base = `http://127.0.0.1:${first.port}`;

    const keyed: KeyedWrite[] = [];
    const keyedWriter = (kind: KeyedWrite['kind']) => async (): Promise<Answer> => {
      const write = keyedWrite(kind);
      keyed.push(write);
      write.startedAt = Date.now();
      write.first = await write.send(base);
      return write.first;
    };
    const loop = new WriterLoop([
      ...writers(base, { schedules: 8, scim: 2, items: 3 }),
      ...Array.from({ length: 8 }, () => keyedWriter('schedule')),
      ...Array.from({ length: 2 }, () => keyedWriter('scim')),
    ]);
    // ~1.5 s of writes, and at least 20 acknowledged, 5 of them keyed (a loaded CI machine is slower), bounded.
    await sleep(1_500);
    const keyedAnswered = () => keyed.filter((write) => write.first?.status === 201).length;
    await waitFor(() => Promise.resolve(loop.acknowledged.length >= 20 && keyedAnswered() >= 5), 15_000, 50);
    const killedAt = Date.now();
    await kill9(first);
    const answers: Answer[] = await loop.stop();

    const counts = statusCounts(answers);
    // Before the kill: created, or — on a machine loaded far past its cores — 503 with Retry-After (Overloaded, or
    // DatabaseUnavailable after a 5 s wait for SQLite's connection): nothing stored, to be retried. After it: no
    // answer (0). Nothing else, in particular no 500.
    const unexpected = answers.filter(
      (answer) =>
        answer.status !== 201 && answer.status !== 0 && !(answer.status === 503 && answer.retryAfter),
    );
    expect(unexpected.map((answer) => `${answer.status} ${JSON.stringify(answer.body)}`)).toEqual([]);
    const acknowledged = loop.acknowledged;
    expect(acknowledged.length).toBeGreaterThanOrEqual(20);
    expect(acknowledged.every((answer) => answer.id !== null)).toBe(true);

    const second = await startServer(env(db), START_MS);
    servers.push(second);
    const again = `http://127.0.0.1:${second.port}`;
    expect(await readBackProblems(again, acknowledged)).toEqual([]);

    // Every keyed write again, under its key: its own answer if it committed (answered or not), else carried out.
    const problems: string[] = [];
    let inFlight = 0;
    let committedInFlight = 0;
    let afterKill = 0;
    const finals: Answer[] = [];
    for (const write of keyed) {
      const retry = await write.send(again);
      finals.push(retry);
      const answered = write.first!.status === 201;
      const sentBeforeKill = write.startedAt! < killedAt;
      // Unanswered: sent before the kill (in flight), or after it to a process already gone.
      if (write.first!.status === 0 && sentBeforeKill) inFlight += 1;
      if (write.first!.status === 0 && !sentBeforeKill) afterKill += 1;
      if (retry.status !== 201) {
        problems.push(`${write.kind} retry: ${retry.status} ${JSON.stringify(retry.body)}`);
      } else if (
        answered &&
        !(retry.replayed && JSON.stringify(retry.body) === JSON.stringify(write.first!.body))
      ) {
        problems.push(`${write.kind} ${write.first!.id}: not its own answer (${String(retry.id)})`);
      } else if (!answered && retry.replayed) {
        if (!sentBeforeKill) problems.push(`${write.kind}: sent after the kill, yet replayed`);
        committedInFlight += 1;
      }
    }
    expect(problems).toEqual([]);
    // Each keyed write is stored once (users: userName is unique, a second would have been 409) and reads back whole.
    const names = await scheduleNames(again);
    const notOnce = keyed.filter((write) => write.kind === 'schedule' && names.get(write.name) !== 1);
    expect(notOnce.map((write) => `${write.name}: ${names.get(write.name) ?? 0}`)).toEqual([]);
    expect(await readBackProblems(again, finals)).toEqual([]);
    process.stdout.write(
      `[fault suite] kill -9: ${JSON.stringify(counts)} answers, all 2xx read back; ${keyed.length} keyed ` +
        `writes retried: ${keyedAnswered()} answered before the kill got their own answer; ${inFlight} in ` +
        `flight at the kill, of which ${committedInFlight} had committed (answer ` +
        `replayed) and ${inFlight - committedInFlight} were carried out by the retry; ${afterKill} sent after the ` +
        `kill, carried out by the retry; 0 answers lost\n`,
    );
  }, 180_000);
});
