// One lock or one caller cannot take the instance down. Another connection holds the schedules table (PostgreSQL:
// LOCK TABLE … ACCESS EXCLUSIVE inside a transaction, as a migration or a maintenance transaction does; SQLite:
// another connection's open write transaction): schedule writes are answered 503 busy with Retry-After and none
// of them is stored once the lock goes; readiness and the other areas keep answering (on PostgreSQL the blocked
// schedule requests hold at most AREA_CONCURRENCY pooled connections, so a SCIM read and write find one). And imports beyond
// LONG_WORK_CONCURRENCY are refused at once with 503 Overloaded and Retry-After, while reads and readiness answer.
import http from 'node:http';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { isPostgresRun } from './support/test-database.js';
import { ADMIN_KEY, startTestApp, type TestApp } from './support/test-app.js';

const IMPORT = '/api/v1/Schedule/import';
const auth = { authorization: `Bearer ${ADMIN_KEY}` };

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ env: { LONG_WORK_CONCURRENCY: '2', DATABASE_LOCK_TIMEOUT_MS: '1000' } });
});

afterAll(async () => {
  await t?.close();
});

function item(name: string) {
  return { ScheduleItems: [{ Name: name, Start: '2026-03-01T09:00:00Z', End: '2026-03-01T10:00:00Z' }] };
}

/** Another session holding the schedules table until `release`. */
async function holdSchedules(): Promise<() => Promise<void>> {
  if (isPostgresRun()) {
    const client = new pg.Client({ connectionString: t.database.url });
    await client.connect();
    await client.query('BEGIN');
    await client.query('LOCK TABLE schedules IN ACCESS EXCLUSIVE MODE');
    return async () => {
      await client.query('ROLLBACK');
      await client.end();
    };
  }
  const other = new Database(String(t.dataSource.options.database));
  other.prepare('BEGIN IMMEDIATE').run();
  return () => {
    other.prepare('ROLLBACK').run();
    other.close();
    return Promise.resolve();
  };
}

async function storedNamed(prefix: string): Promise<number> {
  const rows = await t.dataSource.query<Array<{ n: number | string }>>(
    `SELECT COUNT(*) AS n FROM schedule_items WHERE name LIKE '${prefix}%'`,
  );
  return Number(rows[0].n);
}

function calendar(uid: string): string {
  return [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//test//EN',
    'BEGIN:VEVENT',
    `UID:${uid}`,
    'DTSTAMP:20260101T000000Z',
    'DTSTART:20260105T090000Z',
    'DTEND:20260105T091500Z',
    `SUMMARY:${uid}`,
    'END:VEVENT',
    'END:VCALENDAR',
    '',
  ].join('\r\n');
}

describe('another session holding the schedules table', () => {
  it('answers schedule writes 503 busy with Retry-After and stores none; other reads and readiness answer', async () => {
    const release = await holdSchedules();
    let writes: Array<{ statusCode: number; headers: Record<string, unknown>; body: string }>;
    try {
      // On PostgreSQL more writes than the pool has connections, all at once; SQLite waits one at a time.
      const count = isPostgresRun() ? 12 : 2;
      const pending = Array.from({ length: count }, (_, index) =>
        t.post('/api/v1/Schedule', item(`locked-${index}`)),
      );
      const [scim, scimWrite, ready] = await Promise.all([
        t.request({ method: 'GET', url: '/api/v1/scim/Users', headers: auth }),
        t.request({
          method: 'POST',
          url: '/api/v1/scim/Users',
          headers: { ...auth, 'content-type': 'application/scim+json' },
          payload: JSON.stringify({
            schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
            userName: 'written-while-locked',
          }),
        }),
        t.request({ method: 'GET', url: '/health/ready' }),
      ]);
      expect(scim.statusCode).toBe(200);
      // SQLite has one writer per file: another connection's write transaction holds every table.
      expect(scimWrite.statusCode).toBe(isPostgresRun() ? 201 : 503);
      expect(ready.statusCode).toBe(200);
      writes = await Promise.all(pending);
      // Still held: readiness is about the instance, not one table.
      expect((await t.request({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200);
    } finally {
      await release();
    }
    for (const answer of writes) {
      expect(answer.statusCode).toBe(503);
      expect(answer.headers['retry-after']).toBeDefined();
      const body = JSON.parse(answer.body) as { Code: string; Message: string };
      expect(body.Code).toBe('DatabaseUnavailable');
    }
    expect(writes.some((answer) => /busy with another write/.test(answer.body))).toBe(true);
    // A write after the lock is stored, and none of the refused ones ever is.
    expect((await t.post('/api/v1/Schedule', item('after-lock'))).statusCode).toBe(201);
    expect(await storedNamed('locked-')).toBe(0);
    expect(await storedNamed('after-lock')).toBe(1);
  }, 60_000);
});

describe('imports beyond LONG_WORK_CONCURRENCY', () => {
  it('are refused 503 Overloaded with Retry-After while reads and readiness answer', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.getHttpServer().address() as { port: number };
    // Two imports whose bodies are still arriving hold both places.
    const slow = ['slow-a', 'slow-b'].map((uid) => {
      const body = Buffer.from(calendar(uid));
      const request = http.request({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: IMPORT,
        headers: { ...auth, 'content-type': 'text/calendar', 'content-length': String(body.length) },
      });
      const answered = new Promise<number>((resolve, reject) => {
        request.on('response', (response) => {
          response.resume();
          response.on('end', () => resolve(response.statusCode ?? 0));
        });
        request.on('error', reject);
      });
      request.write(body.subarray(0, 20));
      return { finish: () => request.end(body.subarray(20)), answered };
    });
    try {
      let running = 0;
      while (running < 2) {
        const metrics = await t.request({ method: 'GET', url: '/metrics', headers: auth });
        running = Number(/^platform_long_work_running (\d+)/m.exec(metrics.body)?.[1] ?? 0);
        if (running < 2) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const [refused, scim, schedules, ready] = await Promise.all([
        t.request({
          method: 'POST',
          url: IMPORT,
          headers: { ...auth, 'content-type': 'text/calendar' },
          payload: calendar('refused'),
        }),
        t.request({ method: 'GET', url: '/api/v1/scim/Users', headers: auth }),
        t.request({ method: 'GET', url: '/api/v1/Schedule', headers: auth }),
        t.request({ method: 'GET', url: '/health/ready' }),
      ]);
      expect(refused.statusCode).toBe(503);
      expect(refused.headers['retry-after']).toBeDefined();
      expect(refused.json()).toMatchObject({ Succeeded: false, Code: 'Overloaded' });
      expect(scim.statusCode).toBe(200);
      expect(schedules.statusCode).toBe(200);
      expect(ready.statusCode).toBe(200);
    } finally {
      for (const request of slow) request.finish();
    }
    expect(await Promise.all(slow.map((request) => request.answered))).toEqual([201, 201]);
    // The places are free again; the refused import stored nothing.
    const again = await t.request({
      method: 'POST',
      url: IMPORT,
      headers: { ...auth, 'content-type': 'text/calendar' },
      payload: calendar('after'),
    });
    expect(again.statusCode).toBe(201);
    expect(await storedNamed('refused')).toBe(0);
  }, 60_000);
});
