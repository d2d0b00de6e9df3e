// No request can hold the event loop: the worst recurrence rules a caller can send are refused at write
// time with a 400 naming the field, or evaluated at a bounded cost, while the service's own longest event-loop delay
// stays under 100 ms (scaled by the load per core) and a /health/live probe over real HTTP keeps answering. The
// service runs as built (dist/, its own process): the recurrence engine's speed is
// that of the product, not of jest's module wrapper (which makes its inner loops ~15× slower).
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startServer, type RunningServer } from './support/spawn.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';

const ADMIN_KEY = 'bounded-admin-key-0123456789abcdef';
let database: TestDatabase;
let server: RunningServer;
let base: string;
const headers = { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' };
const loadPerCore = () => Math.max(1, os.loadavg()[0] / os.cpus().length);
const LOAD = loadPerCore();

/** A schedule with one item whose recurrence follows `pattern`. */
function schedule(pattern: string, start = '2026-01-01T00:00:00Z') {
  return {
    ScheduleItems: [
      {
        Start: start,
        End: new Date(Date.parse(start) + 500).toISOString(),
        StartTimeZone: 'Europe/Berlin',
        Recurrence: { Pattern: pattern },
      },
    ],
  };
}

async function post(path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

/**
 * Probes /health/live every 10 ms until stopped, from a worker thread (so building the big request bodies in this
 * thread does not delay the probe). `stop()` checks that the probe was answered and that the service's own longest
 * event-loop delay meanwhile stayed under 100 ms — what a request held it for — scaled by the load per core (the
 * higher of its value at the spec's start and now: on a loaded machine the process also waits for a core). The
 * probe's latencies are the test machine's as much as the service's: printed, not asserted (a 2-core CI host saw
 * 102.7 ms while the service's loop never waited 100 ms).
 */
async function probe(): Promise<{ stop: () => Promise<void> }> {
  await serverEventLoopDelayMax();
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     let running = true;
     const latencies = [];
     parentPort.on('message', () => { running = false; });
     (async () => {
       // The first fetch of a thread loads its HTTP client: not a measure of the service.
       await (await fetch(workerData + '/health/live')).arrayBuffer();
       parentPort.postMessage('ready');
       while (running) {
         const began = performance.now();
         const response = await fetch(workerData + '/health/live');
         await response.arrayBuffer();
         latencies.push(performance.now() - began);
         await new Promise((resolve) => setTimeout(resolve, 10));
       }
       parentPort.postMessage(latencies);
     })();`,
    { eval: true, workerData: base },
  );
  await new Promise((resolve) => worker.once('message', resolve));
  return {
    stop: async () => {
      const answered = new Promise<number[]>((resolve) =>
        worker.once('message', (value: number[]) => resolve(value)),
      );
      worker.postMessage('stop');
      const latencies = (await answered).sort((a, b) => a - b);
      await worker.terminate();
      // The service's own longest event-loop delay meanwhile: what held it, whatever the load on this machine.
      const serverMax = await serverEventLoopDelayMax();
      const load = Math.max(LOAD, loadPerCore());
      const p95 = latencies[Math.floor((latencies.length - 1) * 0.95)];
      process.stdout.write(`${JSON.stringify({ serverMax, load, probes: latencies.length, p95 })}\n`);
      expect(serverMax).toBeLessThan(100 * load);
      expect(latencies.length).toBeGreaterThan(0);
    },
  };
}

/** The service's longest event-loop delay since the last scrape (prom-client resets it on each), in ms. */
async function serverEventLoopDelayMax(): Promise<number> {
  const text = await (await fetch(`${base}/metrics`, { headers })).text();
  const line = text.split('\n').find((l) => l.startsWith('nodejs_eventloop_lag_max_seconds '));
  return Number(line?.split(' ')[1]) * 1_000;
}

const fullList = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i).join(',');

beforeAll(async () => {
  database = await createTestDatabase();
  server = await startServer({
    DATA_DIR: database.dataDir,
    DATABASE_URL: database.url,
    API_KEYS: ADMIN_KEY,
    BODY_LIMIT: '2mb',
    RATE_LIMIT: '0',
  });
  base = `http://127.0.0.1:${server.port}`;
});

afterAll(async () => {
  await server.stop();
  await database.drop();
});

describe('recurrence rules that would hold the event loop', () => {
  it('refuses the worst rules at write time, naming Pattern, without holding the event loop', async () => {
    const worst = [
      [
        'a COUNT of 999,999,999 seconds',
        'FREQ=SECONDLY;COUNT=999999999',
        /COUNT 999999999 is more than 1,000,000/,
      ],
      ['a COUNT of 200,000,000 seconds', 'FREQ=SECONDLY;COUNT=200000000', /more than 1,000,000/],
      [
        'a yearly rule with BYSETPOS and every hour, minute and second',
        `FREQ=YEARLY;BYMONTH=${fullList(1, 12)};BYHOUR=${fullList(0, 23)};BYMINUTE=${fullList(0, 59)};` +
          `BYSECOND=${fullList(0, 59)};BYSETPOS=-1,1,2,3,-2,-3`,
        /occurrences in one YEARLY period/,
      ],
      ['a 980 KB Pattern', `FREQ=DAILY;X-PAD=${'A'.repeat(980_000)}`, /at most 1000 are allowed/],
      ['a rule that can never occur', 'FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30', /can never occur/],
      ['a secondly rule that can never occur', 'FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30', /can never occur/],
    ] as const;
    expect(worst[2][1].length).toBeGreaterThan(450);
    const probing = await probe();
    for (const [name, pattern, message] of worst) {
      const answer = await post('/api/v1/Schedule', schedule(pattern));
      expect({ name, status: answer.status }).toEqual({ name, status: 400 });
      const errors = answer.json.Errors as Array<{ Field: string; Message: string }>;
      expect(errors[0].Field).toBe('ScheduleItems[0].Recurrence.Pattern');
      expect(errors[0].Message).toMatch(message);
    }
    await probing.stop();
  });

  it('evaluates the costliest rules it accepts at a bounded cost, each distinct id once', async () => {
    const accepted = [
      'FREQ=SECONDLY;COUNT=1000000',
      `FREQ=YEARLY;BYHOUR=${fullList(0, 23)};BYMINUTE=0,15,30,45;BYSETPOS=-1`,
      'FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=29',
      'FREQ=MINUTELY;INTERVAL=7;BYDAY=SU;BYMONTH=10;BYMONTHDAY=25,26,27,28,29,30,31',
    ];
    const ids: string[] = [];
    for (const pattern of accepted) {
      const created = await post('/api/v1/Schedule', schedule(pattern));
      expect({ pattern, status: created.status, errors: created.json.Errors }).toEqual({
        pattern,
        status: 201,
        errors: undefined,
      });
      ids.push((created.json.Result as { Id: string }).Id);
    }
    const never = randomUUID();
    const probing = await probe();
    // The COUNT series ends on 2026-01-12 (1,000,000 s after its start): asking after that counts it once.
    for (const [start, end] of [
      ['2026-01-12T13:00:00Z', '2026-01-12T14:00:00Z'],
      ['2031-02-01T00:00:00Z', '2031-02-02T00:00:00Z'],
      ['2090-10-01T00:00:00Z', '2090-10-02T00:00:00Z'],
    ]) {
      const answer = await post('/api/v1/Occurrence/hasOccurrences/byGroup', {
        Groups: [
          { Key: 'costly', ScheduleIds: ids },
          { Key: 'copies', ScheduleIds: Array.from({ length: 1_000 }, () => ids[0]) },
          { Key: 'unknown', ScheduleIds: Array.from({ length: 5_000 }, () => never) },
        ],
        Start: start,
        End: end,
      });
      expect(answer.status).toBe(200);
      expect(answer.json.Groups).toMatchObject({ unknown: false });
      expect(String(answer.json.Message).length).toBeLessThan(2_000);
    }
    await probing.stop();
  });

  it('names at most 20 unknown ids in Message', async () => {
    const unknown = Array.from({ length: 50 }, () => randomUUID());
    const answer = await post('/api/v1/Occurrence/hasOccurrences/byGroup', {
      Groups: [{ Key: 'g', ScheduleIds: unknown }],
      Start: '2026-01-01T00:00:00Z',
      End: '2026-01-02T00:00:00Z',
    });
    const message = String(answer.json.Message);
    expect(unknown.filter((id) => message.includes(id))).toHaveLength(20);
    expect(message).toContain('and 30 more');
  });
});
