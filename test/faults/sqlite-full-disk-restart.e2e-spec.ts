// Starting on a storage that takes no writes: the first start on a full, empty DATA_DIR,
// restarts on a full disk after a clean stop and after kill -9, and a restart on a read-only mount. Every time the
// process stays up, /health/live is 200, /health/ready 503 with the reason, writes 507 StorageFull (503
// DatabaseUnavailable when read-only) with Retry-After; once space (or write access) returns it becomes ready by
// itself and a write succeeds — after the first start with the admin key it created only then. Needs root
// (mount); skipped with a notice otherwise and on the PostgreSQL pass.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startServer, type RunningServer } from '../support/spawn.js';
import { isPostgresRun } from '../support/test-database.js';
import {
  createSchedule,
  createScimUser,
  failureAnswerProblems,
  fillUp,
  kill9,
  mountTmpfs,
  readBackProblems,
  readyStatus,
  skipNotice,
  sleep,
  tmpfsRefusal,
  unmountTmpfs,
  waitFor,
  type Answer,
} from '../support/faults.js';

const FILE = 'test/faults/sqlite-full-disk-restart.e2e-spec.ts';
const refusal = isPostgresRun() ? 'DATABASE_URL is PostgreSQL (this file is for SQLite)' : tmpfsRefusal();
if (refusal) skipNotice(FILE, refusal);
const describeIfPossible = refusal ? describe.skip : describe;

const TMPFS_MIB = 8;
/** The service retries a deferred start every 2 s: staying up this long means it survived several attempts. */
const SURVIVE_MS = 5_000;
const START_MS = 60_000;
const READY_MS = 30_000;

let mount: string | undefined;
const servers: RunningServer[] = [];

beforeAll(() => {
  if (!refusal) mount = mountTmpfs(TMPFS_MIB);
});

afterAll(async () => {
  for (const server of servers) await kill9(server);
  if (mount) {
    execFileSync('mount', ['-o', 'remount,rw', mount], { timeout: 10_000 });
    unmountTmpfs(mount);
  }
});

const readiness = async (base: string): Promise<{ status: number; message: string }> => {
  const response = await fetch(`${base}/health/ready`, { signal: AbortSignal.timeout(5_000) });
  const body = (await response.json()) as { Message?: string };
  return { status: response.status, message: body.Message ?? '' };
};

const liveStatus = async (base: string): Promise<number> =>
  (await fetch(`${base}/health/live`, { signal: AbortSignal.timeout(5_000) })).status;

const authOf = (key: string) => ({ Authorization: `Bearer ${key}` });

describeIfPossible('SQLite start-up on a storage that takes no writes', () => {
  it('comes up not ready every time, and ready once space or write access returns', async () => {
    const dataDir = path.join(mount!, 'data');
    const env = {
      DATA_DIR: dataDir,
      DATABASE_URL: `sqlite:${path.join(dataDir, 'platform.sqlite')}`,
      RATE_LIMIT: '0',
      SHUTDOWN_DELAY_MS: '0',
    };
    const filler = path.join(mount!, 'filler.bin');
    const acknowledged: Answer[] = [];
    let key = '';

    /** Starts on the storage as it is; checks the instance is up, unready and refusing writes as `expected`. */
    const startUnready = async (expected: 503 | 507, reason: RegExp): Promise<string> => {
      const server = await startServer(env, START_MS, '/health/live');
      servers.push(server);
      const base = `http://127.0.0.1:${server.port}`;
      const ready = await readiness(base);
      expect(ready).toEqual({ status: 503, message: expect.stringMatching(reason) });
      const headers = key === '' ? {} : authOf(key);
      const refused = [
        await createSchedule(base, undefined, headers),
        await createScimUser(base, undefined, headers),
      ];
      expect(refused.flatMap((answer) => failureAnswerProblems(answer, expected))).toEqual([]);
      // Still up and unready after several start-up attempts: no exit, no crash loop.
      await sleep(SURVIVE_MS);
      expect(server.child.exitCode).toBeNull();
      expect(await liveStatus(base)).toBe(200);
      expect((await readiness(base)).status).toBe(503);
      return base;
    };

    /**
     * Readiness 200 by itself (the port is handed from the waiting listener to the app: a connection may be
     * refused or reset for that moment, which readyStatus counts as not ready), then a schedule and a SCIM user are created and what was stored reads back. */
    const recovers = async (base: string): Promise<void> => {
      expect(await waitFor(async () => (await readyStatus(base)) === 200, READY_MS, 250)).toBe(true);
      const written = [
        await createSchedule(base, undefined, authOf(key)),
        await createScimUser(base, undefined, authOf(key)),
      ];
      expect(written.map((answer) => answer.status)).toEqual([201, 201]);
      acknowledged.push(...written);
      expect(await readBackProblems(base, acknowledged, 2, authOf(key))).toEqual([]);
    };

    // 1. The first start ever, on a full storage: no database file, no encryption.key, no admin key yet.
    fillUp(filler);
    let base = await startUnready(507, /storage is full/);
    expect(fs.existsSync(path.join(dataDir, 'initial-admin-key'))).toBe(false);
    fs.rmSync(filler);
    expect(await waitFor(async () => (await readyStatus(base)) === 200, READY_MS, 250)).toBe(true);
    // The admin key was made once the start could be completed, and handed over in its file.
    key = fs.readFileSync(path.join(dataDir, 'initial-admin-key'), 'utf8').trim();
    expect(fs.existsSync(path.join(dataDir, 'encryption.key'))).toBe(true);
    await recovers(base);

    // 2. Restarts on a full storage: after a clean stop (no -wal file left), after kill -9 (one left), again.
    for (const stop of ['sigterm', 'kill-9', 'sigterm'] as const) {
      const running = servers[servers.length - 1];
      if (stop === 'sigterm') await running.stop();
      else await kill9(running);
      fillUp(filler);
      base = await startUnready(507, /storage is full/);
      fs.rmSync(filler);
      await recovers(base);
    }

    // 3. A restart on a read-only mount: 503 DatabaseUnavailable, ready once it is writable again.
    await servers[servers.length - 1].stop();
    execFileSync('mount', ['-o', 'remount,ro', mount!], { timeout: 10_000 });
    base = await startUnready(503, /read-only/);
    execFileSync('mount', ['-o', 'remount,rw', mount!], { timeout: 10_000 });
    await recovers(base);
    process.stdout.write(
      `[fault suite] full-disk restarts: 1 first start + 3 restarts full, 1 read-only; ${acknowledged.length} writes read back\n`,
    );
  }, 300_000);
});
