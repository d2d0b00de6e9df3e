// What an operator reads in the log when PostgreSQL goes away under writers: one `error` line when the outage
// starts and one `warn` line when it is over (with its duration and failure count), however many requests failed —
// also when the database fails and answers in turns (its backends terminated again and again), which used to log
// an error/recovery pair each turn. The reason is the driver's, never a framework's message. A private cluster of
// this file's own (never the shared server); PostgreSQL pass only.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { startServer, type RunningServer } from '../support/spawn.js';
import { isPostgresRun } from '../support/test-database.js';
import {
  API_KEY,
  WriterLoop,
  kill9,
  privateClusterRefusal,
  readyStatus,
  skipNotice,
  sleep,
  startPrivateCluster,
  waitFor,
  writers,
  type PrivateCluster,
} from '../support/faults.js';

const FILE = 'test/faults/outage-log-lines.e2e-spec.ts';
const refusal = !isPostgresRun()
  ? 'DATABASE_URL is not PostgreSQL (this file runs on the PostgreSQL pass)'
  : privateClusterRefusal();
if (refusal) skipNotice(FILE, refusal);
const describeIfPossible = refusal ? describe.skip : describe;

let cluster: PrivateCluster | undefined;
let server: RunningServer | undefined;
let dataDir: string | undefined;
let base = '';

beforeAll(async () => {
  if (refusal) return;
  cluster = await startPrivateCluster();
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-api-outage-log-'));
  server = await startServer({
    DATA_DIR: dataDir,
    DATABASE_URL: cluster.url,
    API_KEYS: API_KEY,
    RATE_LIMIT: '0',
  });
  base = `http://127.0.0.1:${server.port}`;
}, 60_000);

afterAll(async () => {
  const writersEnded = WriterLoop.stopAll();
  if (server) await kill9(server);
  await writersEnded;
  await cluster?.destroy();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

interface LogLine {
  level?: string;
  message?: string;
  reason?: string;
  outageSeconds?: unknown;
  failures?: unknown;
}

function lines(from: number): LogLine[] {
  return server!
    .output()
    .slice(from)
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
}

const ENDED = 'database available again';

/** The lines logged from output offset `from` until the outage's end line (waits for it: it follows a calm spell). */
async function outageLines(from: number): Promise<LogLine[]> {
  await waitFor(() => Promise.resolve(lines(from).some((line) => line.message === ENDED)), 40_000, 250);
  return lines(from).filter((line) => line.level === 'error' || line.message === ENDED);
}

function expectOneOutage(logged: LogLine[]): void {
  expect(logged.map((line) => `${line.level} ${line.message}`)).toEqual([
    'error database unavailable: requests that need it are answered 503 until it is back',
    `warn ${ENDED}`,
  ]);
  expect(typeof logged[1].outageSeconds).toBe('number');
  expect(logged[1].failures).toEqual(expect.any(Number));
  expect(logged[1].failures as number).toBeGreaterThan(1);
  for (const line of logged) expect(line.reason ?? '').not.toMatch(/query runner|already released/i);
}

describeIfPossible('one log line when an outage starts, one when it ends', () => {
  it('PostgreSQL stopped under writers for 3 s', async () => {
    const from = server!.output().length;
    const loop = new WriterLoop(writers(base, { schedules: 2, scim: 1 }), 20);
    await sleep(300);
    await cluster!.stop('fast');
    const until = Date.now() + 3_000;
    while (Date.now() < until) {
      await readyStatus(base);
      await sleep(100);
    }
    await cluster!.start();
    expect(await waitFor(async () => (await readyStatus(base)) === 200, 15_000)).toBe(true);
    await sleep(500);
    const answers = await loop.stop();
    expect(answers.filter((answer) => answer.status === 503).length).toBeGreaterThan(1);
    expectOneOutage(await outageLines(from));
  }, 90_000);

  it("the database's connections ended again and again, requests failing and succeeding in turns", async () => {
    const from = server!.output().length;
    const admin = new pg.Client({ connectionString: cluster!.url, connectionTimeoutMillis: 5_000 });
    admin.on('error', () => undefined);
    await admin.connect();
    try {
      const loop = new WriterLoop(writers(base, { schedules: 2, scim: 1 }), 20);
      await sleep(300);
      const until = Date.now() + 3_000;
      while (Date.now() < until) {
        await admin.query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'platform-api'",
        );
        await sleep(100);
      }
      expect(await waitFor(async () => (await readyStatus(base)) === 200, 15_000)).toBe(true);
      const answers = await loop.stop();
      expect(answers.filter((answer) => answer.status === 201).length).toBeGreaterThan(0);
      expect(answers.filter((answer) => answer.status === 503).length).toBeGreaterThan(1);
    } finally {
      await admin.end().catch(() => undefined);
    }
    expectOneOutage(await outageLines(from));
  }, 90_000);
});
