// SQLite on a storage that fills up (a small tmpfs as DATA_DIR): writes answer 507 StorageFull with Retry-After,
// never 500, readiness is 503 while full; once space is freed writes succeed again without a restart, and after a
// kill -9 every write that was answered 2xx reads back whole. Needs root (mount); skipped with a notice otherwise
// and on the PostgreSQL pass.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startServer, type RunningServer } from '../support/spawn.js';
import { isPostgresRun } from '../support/test-database.js';
import {
  API_KEY,
  createSchedule,
  createScimUser,
  failureAnswerProblems,
  fillUp,
  kill9,
  metrics,
  mountTmpfs,
  readBackProblems,
  readyStatus,
  scheduleItems,
  skipNotice,
  sleep,
  statusCounts,
  tmpfsRefusal,
  unmountTmpfs,
  waitFor,
  type Answer,
} from '../support/faults.js';

const FILE = 'test/faults/sqlite-full-disk.e2e-spec.ts';
const refusal = isPostgresRun() ? 'DATABASE_URL is PostgreSQL (this file is for SQLite)' : tmpfsRefusal();
if (refusal) skipNotice(FILE, refusal);
const describeIfPossible = refusal ? describe.skip : describe;

const TMPFS_MIB = 8;
const FILLER_BYTES = 2 * 1024 * 1024;
/** Space left for schedules once the filler (and ballast) are written: fills within a few hundred requests. */
const ROOM_BYTES = 1024 * 1024;
/** One large-ish schedule: 10 items with 400-character names (~5 KB of rows). */
const bigItems = () => scheduleItems(10, 400);

let dataDir: string | undefined;
const servers: RunningServer[] = [];

beforeAll(() => {
  if (!refusal) dataDir = mountTmpfs(TMPFS_MIB);
});

afterAll(async () => {
  for (const server of servers) await kill9(server);
  if (dataDir) unmountTmpfs(dataDir);
});

const fillTo = (file: string, bytes: number): void => {
  const fd = fs.openSync(file, 'w');
  try {
    const chunk = Buffer.alloc(64 * 1024, 1);
    for (let written = 0; written < bytes; written += chunk.length) {
      fs.writeSync(fd, chunk, 0, Math.min(chunk.length, bytes - written));
    }
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
};

const freeBytes = (dir: string): number => {
  const stats = fs.statfsSync(dir);
  return stats.bavail * stats.bsize;
};

describeIfPossible('SQLite on a full storage', () => {
  it('answers 507 while full, recovers without a restart, and loses no acknowledged write', async () => {
    const dir = dataDir!;
    const env = {
      DATA_DIR: dir,
      DATABASE_URL: `sqlite:${path.join(dir, 'platform.sqlite')}`,
      API_KEYS: API_KEY,
      RATE_LIMIT: '0',
    };
    const server = await startServer(env);
    servers.push(server);
    const base = `http://127.0.0.1:${server.port}`;

    // The filler is what gets freed later; the ballast leaves about ROOM_BYTES for the database to grow into.
    const filler = path.join(dir, 'filler.bin');
    fillTo(filler, FILLER_BYTES);
    const ballastBytes = freeBytes(dir) - ROOM_BYTES;
    if (ballastBytes > 0) fillTo(path.join(dir, 'ballast.bin'), ballastBytes);

    const answers: Answer[] = [];
    const onlyCreatedOrFull = () =>
      answers.filter((answer) => answer.status !== 201 && answer.status !== 507);
    const documented507 = () =>
      answers
        .filter((answer) => answer.status === 507)
        .flatMap((answer) => failureAnswerProblems(answer, 507));

    // 1. The database fills the storage: one by one until the first 507 (bounded), then some at once.
    for (let n = 0; n < 2_000; n++) {
      const answer = await createSchedule(base, bigItems());
      answers.push(answer);
      if (answer.status !== 201) break;
    }
    expect(answers[answers.length - 1].status).toBe(507);
    const burst = await Promise.all(Array.from({ length: 8 }, () => createSchedule(base, bigItems())));
    answers.push(...burst);
    expect(burst.some((answer) => answer.status === 507)).toBe(true);
    // Read before /health/ready, whose probe write may succeed in the room a failed transaction left in the WAL.
    expect((await metrics(base)).get('platform_database_storage_full')).toBe(1);
    // SCIM while full (a small user may still fit in that room: bounded, until the first refusal).
    for (let n = 0; n < 50; n++) {
      const scim = await createScimUser(base);
      answers.push(scim);
      if (scim.status !== 201) {
        expect(scim.status).toBe(507);
        expect(scim.contentType).toMatch(/^application\/scim\+json/);
        break;
      }
    }
    expect(answers[answers.length - 1].status).toBe(507);
    expect(onlyCreatedOrFull()).toEqual([]);
    expect(documented507()).toEqual([]);

    // 2. Space comes back: writes succeed again (no restart) and readiness follows.
    fs.rmSync(filler);
    expect(
      await waitFor(async () => {
        const answer = await createSchedule(base, bigItems());
        answers.push(answer);
        return answer.status === 201;
      }, 10_000),
    ).toBe(true);
    const after = await Promise.all([
      ...Array.from({ length: 4 }, () => createSchedule(base, bigItems())),
      createScimUser(base),
    ]);
    answers.push(...after);
    expect(after.map((answer) => answer.status)).toEqual([201, 201, 201, 201, 201]);
    expect(await waitFor(async () => (await readyStatus(base)) === 200, 5_000)).toBe(true);
    expect((await metrics(base)).get('platform_database_storage_full')).toBe(0);

    // 3. Another process takes every byte left (the WAL has no room a failed write left behind now): no write
    // fits, not even the readiness probe's.
    const topUp = path.join(dir, 'top-up.bin');
    fillUp(topUp);
    const whileFull = await Promise.all([
      ...Array.from({ length: 4 }, () => createSchedule(base, bigItems())),
      createScimUser(base),
    ]);
    answers.push(...whileFull);
    expect(whileFull.map((answer) => answer.status)).toEqual([507, 507, 507, 507, 507]);
    expect(whileFull[4].contentType).toMatch(/^application\/scim\+json/);
    expect(await readyStatus(base)).toBe(503);
    await sleep(300);
    expect(await readyStatus(base)).toBe(503);
    expect((await metrics(base)).get('platform_database_storage_full')).toBe(1);
    expect(onlyCreatedOrFull()).toEqual([]);
    expect(documented507()).toEqual([]);

    fs.rmSync(topUp);
    expect(await waitFor(async () => (await readyStatus(base)) === 200, 5_000)).toBe(true);
    const last = await Promise.all([createSchedule(base, bigItems()), createScimUser(base)]);
    answers.push(...last);
    expect(last.map((answer) => answer.status)).toEqual([201, 201]);
    expect(onlyCreatedOrFull()).toEqual([]);

    // The process dies; what was acknowledged is there after a restart on the same files.
    await kill9(server);
    const restarted = await startServer(env);
    servers.push(restarted);
    const acknowledged = answers.filter((answer) => answer.status === 201);
    expect(acknowledged.length).toBeGreaterThan(10);
    expect(await readBackProblems(`http://127.0.0.1:${restarted.port}`, acknowledged)).toEqual([]);
    process.stdout.write(
      `[fault suite] full disk: ${JSON.stringify(statusCounts(answers))}, all 2xx read back\n`,
    );
  }, 80_000);
});
