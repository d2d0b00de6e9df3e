// The wall clock steps under a running service (an NTP correction, a VM restored from a snapshot): libfaketime,
// preloaded into the spawned service, moves the process's wall clock by what a file says while its monotonic clock
// runs on. With both rate-limit stores (memory, database) on the pass's engine: buckets exhausted before a step
// back of 2 h and before a step forward of 2 days and back are answered 429 with a Retry-After within the window
// (60 s), and admitted again once it ends; a caller new after the step is admitted at once.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startServer, type RunningServer } from '../support/spawn.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { skipNotice, waitFor } from '../support/faults.js';

const FILE = 'test/faults/clock-steps.e2e-spec.ts';
const LIBFAKETIME = [
  '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/local/lib/faketime/libfaketime.so.1',
  '/usr/lib/faketime/libfaketime.so.1',
].find((candidate) => fs.existsSync(candidate));
const refusal = LIBFAKETIME === undefined ? 'libfaketime is not installed (apt-get install faketime)' : null;
if (refusal) skipNotice(FILE, refusal);
const describeIfPossible = refusal ? describe.skip : describe;

const LIMIT = 3;
const WINDOW_SECONDS = 60;
const KEYS = {
  beforeStepBack: 'clock-key-before-step-back-0001',
  beforeStepForward: 'clock-key-before-forward-0002',
  afterSteps: 'clock-key-after-the-steps-0003',
};

interface Instance {
  store: 'memory' | 'database';
  database: TestDatabase;
  clockFile: string;
  server: RunningServer;
  base: string;
}

interface Hit {
  status: number;
  retryAfter: number | undefined;
}

const instances: Instance[] = [];

async function hit(instance: Instance, key: string): Promise<Hit> {
  const response = await fetch(`${instance.base}/api/v1/Schedule`, {
    headers: { Authorization: `Bearer ${key}` },
    signal: AbortSignal.timeout(10_000),
  });
  await response.arrayBuffer();
  const retryAfter = response.headers.get('retry-after');
  return { status: response.status, retryAfter: retryAfter === null ? undefined : Number(retryAfter) };
}

async function exhaust(instance: Instance, key: string): Promise<Hit[]> {
  const hits: Hit[] = [];
  for (let i = 0; i <= LIMIT; i++) hits.push(await hit(instance, key));
  return hits;
}

/** Moves the service's wall clock: `+0`, `-2h`, `+2d` (libfaketime's relative offsets). */
function setClock(instance: Instance, offset: string): void {
  fs.writeFileSync(instance.clockFile, `${offset}\n`);
}

/** Whether the service's wall clock reads the offset now (it answers a Date header). */
async function clockApplied(instance: Instance, offsetMs: number): Promise<boolean> {
  const response = await fetch(`${instance.base}/health/live`);
  await response.arrayBuffer();
  const served = Date.parse(response.headers.get('date') ?? '');
  return Math.abs(served - (Date.now() + offsetMs)) < 30 * 60_000;
}

beforeAll(async () => {
  if (refusal) return;
  for (const store of ['memory', 'database'] as const) {
    const database = await createTestDatabase();
    const clockFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'platform-api-clock-')), 'offset');
    fs.writeFileSync(clockFile, '+0\n');
    const server = await startServer(
      {
        DATA_DIR: database.dataDir,
        DATABASE_URL: database.url,
        API_KEYS: Object.values(KEYS).join(','),
        RATE_LIMIT: String(LIMIT),
        RATE_LIMIT_STORE: store,
        LD_PRELOAD: LIBFAKETIME!,
        FAKETIME_TIMESTAMP_FILE: clockFile,
        FAKETIME_NO_CACHE: '1',
        FAKETIME_DONT_FAKE_MONOTONIC: '1',
      },
      60_000,
    );
    instances.push({ store, database, clockFile, server, base: `http://127.0.0.1:${server.port}` });
  }
}, 150_000);

afterAll(async () => {
  for (const instance of instances) {
    await instance.server.stop();
    await instance.database.drop();
    fs.rmSync(path.dirname(instance.clockFile), { recursive: true, force: true });
  }
});

describeIfPossible('rate limits across wall-clock steps', () => {
  it('with the memory and the database store: no Retry-After beyond the window, callers admitted again after it', async () => {
    const seen = new Map<string, Hit[]>();
    const record = (instance: Instance, label: string, hits: Hit[]) =>
      seen.set(`${instance.store} ${label}`, [...(seen.get(`${instance.store} ${label}`) ?? []), ...hits]);

    // The two instances at once, so both sequences fit well inside the first window.
    const sequence = async (instance: Instance): Promise<void> => {
      // A window opened on the right clock, then a step back of 2 h.
      const first = await exhaust(instance, KEYS.beforeStepBack);
      expect(first.map((h) => h.status)).toEqual([200, 200, 200, 429]);
      record(instance, 'exhausted', first);
      // A window opened 2 days ahead, then the clock back where it was.
      setClock(instance, '+2d');
      expect(await waitFor(() => clockApplied(instance, 2 * 86_400_000), 10_000)).toBe(true);
      const ahead = await exhaust(instance, KEYS.beforeStepForward);
      expect(ahead.map((h) => h.status)).toEqual([200, 200, 200, 429]);
      record(instance, 'exhausted', ahead);
      setClock(instance, '+0');
      expect(await waitFor(() => clockApplied(instance, 0), 10_000)).toBe(true);
      record(instance, 'back from +2d', [await hit(instance, KEYS.beforeStepForward)]);
      setClock(instance, '-2h');
      expect(await waitFor(() => clockApplied(instance, -2 * 3_600_000), 10_000)).toBe(true);
      record(instance, 'stepped back', [
        await hit(instance, KEYS.beforeStepBack),
        await hit(instance, KEYS.beforeStepForward),
      ]);
      // Nothing stalls: a caller new after the steps has its whole budget.
      const fresh = await exhaust(instance, KEYS.afterSteps);
      expect(fresh.map((h) => h.status)).toEqual([200, 200, 200, 429]);
      record(instance, 'new after the steps', fresh);
    };
    await Promise.all(instances.map(sequence));

    // Once the windows end (on the monotonic clock), the callers that were refused are admitted again.
    const admitted = await waitFor(
      async () => {
        let all = true;
        for (const instance of instances) {
          for (const key of [KEYS.beforeStepBack, KEYS.beforeStepForward]) {
            const answer = await hit(instance, key);
            record(instance, 'after the window', [answer]);
            if (answer.status !== 200) all = false;
          }
        }
        return all;
      },
      (WINDOW_SECONDS + 45) * 1_000,
      5_000,
    );

    const refusals = [...seen].flatMap(([label, hits]) =>
      hits.filter((h) => h.status === 429).map((h) => ({ label, retryAfter: h.retryAfter })),
    );
    expect(refusals.filter((r) => r.retryAfter === undefined || r.retryAfter > WINDOW_SECONDS)).toEqual([]);
    expect(
      [...seen].flatMap(([label, hits]) =>
        hits.filter((h) => h.status !== 200 && h.status !== 429).map(() => label),
      ),
    ).toEqual([]);
    for (const instance of instances) {
      expect(seen.get(`${instance.store} back from +2d`)?.map((h) => h.status)).toEqual([429]);
      expect(seen.get(`${instance.store} stepped back`)?.map((h) => h.status)).toEqual([429, 429]);
    }
    expect(admitted).toBe(true);
  }, 240_000);
});
