// A lock wait past its limit: another process holds SQLite's write lock (as a second large
// import or a CLI migrating would) longer than the serving busy timeout; the write is answered 503
// DatabaseUnavailable with Retry-After and a message saying the database is busy with another write — not that it
// is unreachable — and readiness stays 200, since the database is up. SQLite only here; PostgreSQL's lock_timeout
// behind another session's LOCK TABLE is in lock-isolation.e2e-spec.ts.
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { isPostgresRun } from './support/test-database.js';
import { startTestApp, type TestApp } from './support/test-app.js';

const describeOnSqlite = isPostgresRun() ? describe.skip : describe;
if (isPostgresRun()) {
  process.stdout.write('\n[database-busy] SKIPPED on PostgreSQL: the lock wait is SQLite’s busy timeout\n');
}

let t: TestApp;

beforeAll(async () => {
  if (!isPostgresRun()) t = await startTestApp();
});

afterAll(async () => {
  await t?.close();
});

describeOnSqlite('a write that waits for another writer past the limit', () => {
  it('is answered 503 DatabaseUnavailable saying the database is busy with another write', async () => {
    const other = new Database(String(t.dataSource.options.database));
    try {
      other.prepare('BEGIN IMMEDIATE').run();
      const answer = await t.post('/api/v1/Schedule', {
        ScheduleItems: [{ Name: 'busy', Start: '2026-03-01T09:00:00Z', End: '2026-03-01T10:00:00Z' }],
      });
      expect(answer.statusCode).toBe(503);
      expect(answer.headers['retry-after']).toBeDefined();
      const body = answer.json<{ Code: string; Message: string }>();
      expect(body.Code).toBe('DatabaseUnavailable');
      expect(body.Message).toMatch(/busy with another write/);
      expect(body.Message).not.toMatch(/unreachable/);
    } finally {
      other.prepare('ROLLBACK').run();
      other.close();
    }
    // The database did not go away: ready, and the next write is stored.
    expect((await t.request({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200);
    const stored = await t.post('/api/v1/Schedule', {
      ScheduleItems: [{ Name: 'after', Start: '2026-03-01T09:00:00Z', End: '2026-03-01T10:00:00Z' }],
    });
    expect(stored.statusCode).toBe(201);
  }, 30_000);
});
