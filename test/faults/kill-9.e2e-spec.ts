// The process dies mid-write (SIGKILL under 20 concurrent writers): after a restart on the same database every
// write that was answered 2xx reads back whole. Runs on SQLite and, when DATABASE_URL is PostgreSQL, there.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startServer, type RunningServer } from '../support/spawn.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import {
  API_KEY,
  WriterLoop,
  kill9,
  readBackProblems,
  sleep,
  statusCounts,
  waitFor,
  writers,
  type Answer,
} from '../support/faults.js';

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

describe('kill -9 under concurrent writers', () => {
  it('keeps every write answered 2xx, whole, after a restart', async () => {
    const db = database!;
    const first = await startServer(env(db));
    servers.push(first);
    const base = `http://127.0.0.1:${first.port}`;

    const loop = new WriterLoop(writers(base, { schedules: 16, scim: 4, items: 3 }));
    // ~1.5 s of writes, and at least 20 acknowledged (a loaded CI machine is slower), bounded.
    await sleep(1_500);
    await waitFor(() => Promise.resolve(loop.acknowledged.length >= 20), 10_000, 50);
    await kill9(first);
    const answers: Answer[] = await loop.stop();

    const counts = statusCounts(answers);
    // Before the kill: created; after it: no answer (0). Nothing else, in particular no 500.
    expect(Object.keys(counts).filter((status) => status !== '201' && status !== '0')).toEqual([]);
    const acknowledged = loop.acknowledged;
    expect(acknowledged.length).toBeGreaterThanOrEqual(20);
    expect(acknowledged.every((answer) => answer.id !== null)).toBe(true);

    const second = await startServer(env(db));
    servers.push(second);
    const problems = await readBackProblems(`http://127.0.0.1:${second.port}`, acknowledged);
    expect(problems).toEqual([]);
    process.stdout.write(`[fault suite] kill -9: ${JSON.stringify(counts)} answers, all 2xx read back\n`);
  }, 60_000);
});
