// PostgreSQL goes away under writers: a private cluster of this file's own (never the shared server) is stopped
// fast and immediately, and its backends are terminated in a loop. Clients see 201 or 503 DatabaseUnavailable
// (SCIM: its error schema), never 500; readiness is 503 during and 200 soon after; writes succeed again without a
// restart of the service; every write answered 2xx is in the database. Runs on the PostgreSQL pass only.
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
  createSchedule,
  createScimUser,
  failureAnswerProblems,
  kill9,
  metrics,
  privateClusterRefusal,
  queryCluster,
  readyStatus,
  skipNotice,
  sleep,
  startPrivateCluster,
  statusCounts,
  waitFor,
  writers,
  type Answer,
  type PrivateCluster,
} from '../support/faults.js';

const FILE = 'test/faults/postgres-outage.e2e-spec.ts';
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
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-api-outage-'));
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

/** Acknowledged writes missing from the cluster, or stored only in part (asked directly, not through the service). */
async function missingFromCluster(acknowledged: Answer[]): Promise<string[]> {
  const scheduleIds = acknowledged.filter((answer) => answer.kind === 'schedule').map((answer) => answer.id!);
  const userIds = acknowledged.filter((answer) => answer.kind === 'scim').map((answer) => answer.id!);
  const items = await queryCluster<{ id: string; name: string }>(
    cluster!.url,
    `SELECT s.id::text AS id, i.name FROM schedules s JOIN schedule_items i ON i.schedule_id = s.id
      WHERE s.id::text = ANY($1::text[])`,
    [scheduleIds],
  );
  const users = await queryCluster<{ id: string }>(
    cluster!.url,
    'SELECT id::text AS id FROM scim_users WHERE id::text = ANY($1::text[])',
    [userIds],
  );
  const namesById = new Map<string, string[]>();
  for (const row of items) namesById.set(row.id, [...(namesById.get(row.id) ?? []), row.name]);
  const storedUsers = new Set(users.map((row) => row.id));
  const problems: string[] = [];
  for (const answer of acknowledged) {
    if (answer.kind === 'scim') {
      if (!storedUsers.has(answer.id!)) problems.push(`user ${answer.id} missing`);
      continue;
    }
    const names = (namesById.get(answer.id!) ?? []).sort();
    const sent = (answer.sentItems ?? []).map((item) => item.Name).sort();
    if (JSON.stringify(names) !== JSON.stringify(sent))
      problems.push(`schedule ${answer.id}: ${names.length} items`);
  }
  return problems;
}

/** Statuses other than 201/503, and 503s that are not the documented DatabaseUnavailable answer. */
function unexpected(answers: Answer[]): string[] {
  return [
    ...answers
      .filter((answer) => answer.status !== 201 && answer.status !== 503)
      .map((answer) => `${answer.kind} ${answer.status} ${JSON.stringify(answer.body ?? answer.error)}`),
    ...answers
      .filter((answer) => answer.status === 503)
      .flatMap((answer) => failureAnswerProblems(answer, 503)),
  ];
}

async function writesSucceed(): Promise<number[]> {
  const answers = await Promise.all([createSchedule(base), createScimUser(base)]);
  return answers.map((answer) => answer.status);
}

/** Whether the writers got 201s again (schedule and SCIM alike) after answer number `mark`, within 10 s. */
function writersServedAfter(loop: WriterLoop, mark: number): Promise<boolean> {
  return waitFor(() => {
    const created = loop.answers.slice(mark).filter((answer) => answer.status === 201);
    return Promise.resolve(
      created.filter((answer) => answer.kind === 'schedule').length >= 4 &&
        created.some((answer) => answer.kind === 'scim'),
    );
  }, 10_000);
}

describeIfPossible('PostgreSQL outages under writers', () => {
  it.each(['fast', 'immediate'] as const)(
    'pg_ctl stop -m %s for 3 s: 201 or 503, not ready during, recovers without a restart, no 2xx lost',
    async (mode) => {
      const db = cluster!;
      const loop = new WriterLoop(writers(base, { schedules: 2, scim: 1, items: 2 }), 20);
      await sleep(500);
      await db.stop(mode);
      const stoppedAt = Date.now();
      const readyDuring: number[] = [];
      let availableDuring: number | undefined;
      while (Date.now() - stoppedAt < 3_000) {
        readyDuring.push(await readyStatus(base));
        availableDuring ??= (await metrics(base)).get('platform_database_available');
        await sleep(200);
      }
      await db.start();
      const startedAt = Date.now();
      const backWithin = await waitFor(async () => (await readyStatus(base)) === 200, 10_000, 100);
      const recoveryMs = Date.now() - startedAt;
      expect(backWithin).toBe(true);
      expect(await writesSucceed()).toEqual([201, 201]);
      expect(await writersServedAfter(loop, loop.answers.length)).toBe(true);
      const answers = await loop.stop();

      expect(server!.child.exitCode).toBeNull();
      expect(readyDuring.length).toBeGreaterThan(5);
      expect(readyDuring.filter((status) => status !== 503)).toEqual([]);
      expect(availableDuring).toBe(0);
      expect(unexpected(answers)).toEqual([]);
      const counts = statusCounts(answers);
      // The outage was seen by the writers (schedule and SCIM alike), and they were served before and after it.
      expect(answers.some((answer) => answer.kind === 'schedule' && answer.status === 503)).toBe(true);
      expect(answers.some((answer) => answer.kind === 'scim' && answer.status === 503)).toBe(true);
      expect((await metrics(base)).get('platform_database_available')).toBe(1);

      expect(await missingFromCluster(loop.acknowledged)).toEqual([]);
      process.stdout.write(
        `[fault suite] stop -m ${mode}: ${JSON.stringify(counts)}, ready again ${recoveryMs} ms after start\n`,
      );
    },
    45_000,
  );

  it('pg_terminate_backend every 50 ms for 2 s: 201 or 503, no 2xx lost, the service stays up', async () => {
    const admin = new pg.Client({ connectionString: cluster!.url, connectionTimeoutMillis: 5_000 });
    admin.on('error', () => undefined);
    await admin.connect();
    try {
      const loop = new WriterLoop(writers(base, { schedules: 2, scim: 1, items: 2 }), 20);
      await sleep(300);
      let terminated = 0;
      const until = Date.now() + 2_000;
      while (Date.now() < until) {
        const { rows } = await admin.query<{ ended: boolean }>(
          "SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE application_name = 'platform-api'",
        );
        terminated += rows.filter((row) => row.ended).length;
        await sleep(50);
      }
      expect(await waitFor(async () => (await readyStatus(base)) === 200, 10_000, 100)).toBe(true);
      expect(await writesSucceed()).toEqual([201, 201]);
      expect(await writersServedAfter(loop, loop.answers.length)).toBe(true);
      const answers = await loop.stop();

      expect(terminated).toBeGreaterThan(0);
      expect(server!.child.exitCode).toBeNull();
      expect(unexpected(answers)).toEqual([]);
      expect(await missingFromCluster(loop.acknowledged)).toEqual([]);
      process.stdout.write(
        `[fault suite] terminate backends (${terminated} ended): ${JSON.stringify(statusCounts(answers))}\n`,
      );
    } finally {
      await admin.end().catch(() => undefined);
    }
  }, 45_000);
});
