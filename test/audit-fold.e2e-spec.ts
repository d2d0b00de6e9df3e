// The audit trail's tail and fold (src/audit/audit-fold.ts, migration 1763780001800): a change's
// event is written into the unindexed `audit_events_tail` in the change's transaction and moved into `audit_events`
// by a background fold. Every filter finds an event from its commit on, before and after the fold, and paging
// never skips or repeats one across the two tables; two instances folding at once move each event exactly once;
// a tail left unfolded by a stopped process (as after kill -9: the tail is a table, a fold one transaction) is
// folded by the next start; the tail is append-only like the trail. SQLite by default, PostgreSQL with DATABASE_URL.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { AuditFold } from '../src/audit/audit-fold.js';
import { MigrationRunner } from '../src/database/migration-runner.js';
import { scheduleBody } from './factories/schedule.factory.js';
import { ADMIN_KEY, startTestApp, type TestApp } from './support/test-app.js';
import { createTestDatabase, isPostgresRun, type TestDatabase } from './support/test-database.js';

interface AuditPage {
  Result: Array<{ Id: string; Action: string; ResourceId: string | null; ActorId: string | null }>;
  NextCursor: string | null;
}

const count = async (dataSource: DataSource, table: string): Promise<number> => {
  const [row] = await dataSource.query<Array<{ n: string | number }>>(`SELECT COUNT(*) AS n FROM ${table}`);
  return Number(row.n);
};

const trail = async (t: TestApp, query: Record<string, string>): Promise<AuditPage> => {
  const response = await t.request({
    method: 'GET',
    url: `/api/v1/audit-events?${new URLSearchParams(query).toString()}`,
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
  });
  expect(response.statusCode).toBe(200);
  return response.json<AuditPage>();
};

/** Every event id, newest first, paging by cursor `pageSize` at a time. */
const allIds = async (t: TestApp, pageSize: number): Promise<string[]> => {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const page = await trail(t, {
      PageSize: String(pageSize),
      ...(cursor === null ? {} : { Cursor: cursor }),
    });
    ids.push(...page.Result.map((event) => event.Id));
    cursor = page.NextCursor;
  } while (cursor !== null);
  return ids;
};

const createSchedule = async (t: TestApp): Promise<string> => {
  const response = await t.post('/api/v1/Schedule', scheduleBody());
  expect(response.statusCode).toBe(201);
  return response.json().Result.Id as string;
};

describe('audit trail tail and fold: every event found once, before and after the fold', () => {
  let database: TestDatabase;
  let t: TestApp;
  let fold: AuditFold;

  beforeAll(async () => {
    database = await createTestDatabase();
    t = await startTestApp({ database });
    fold = t.app.get(AuditFold);
    // The tests fold when they choose; the timer would fold at random points in between.
    await fold.folder.stop();
    await fold.folder.fold();
  });
  afterAll(async () => {
    await t?.close();
    await database?.drop();
  });

  it('writes a change event into the tail, and every filter finds it before and after the fold', async () => {
    const since = new Date(Date.now() - 1_000).toISOString();
    const id = await createSchedule(t);
    expect(await count(t.dataSource, 'audit_events_tail')).toBe(1);
    const [written] = (await trail(t, { ResourceId: id })).Result;
    expect(written.ActorId).toMatch(/^env:/);
    const filters: Array<Record<string, string>> = [
      { ResourceId: id },
      { Action: 'schedule.create' },
      { ResourceType: 'Schedule' },
      { Actor: written.ActorId! },
      { Since: since },
      { Until: new Date(Date.now() + 60_000).toISOString() },
      { ResourceId: id, Action: 'schedule.create', Since: since },
    ];
    const found = async () =>
      Promise.all(
        filters.map(async (filter) =>
          (await trail(t, filter)).Result.find((event) => event.ResourceId === id),
        ),
      );
    const before = await found();
    for (const event of before) expect(event?.Action).toBe('schedule.create');
    expect(await fold.folder.fold()).toBe(1);
    expect(await count(t.dataSource, 'audit_events_tail')).toBe(0);
    expect(await found()).toEqual(before);
    expect((await trail(t, { ResourceId: id, Action: 'schedule.delete' })).Result).toEqual([]);
  });

  it('pages across folded and unfolded events without skipping or repeating one', async () => {
    for (let i = 0; i < 5; i++) await createSchedule(t);
    await fold.folder.fold();
    for (let i = 0; i < 4; i++) await createSchedule(t);
    expect(await count(t.dataSource, 'audit_events_tail')).toBe(4);
    const everyId = async () => {
      const rows = await t.dataSource.query<Array<{ id: string | number }>>(
        'SELECT id FROM audit_events UNION ALL SELECT id FROM audit_events_tail',
      );
      return rows.map((row) => String(row.id)).sort((a, b) => Number(b) - Number(a));
    };
    const expected = await everyId();
    for (const pageSize of [1, 3, 500]) expect(await allIds(t, pageSize)).toEqual(expected);
    const filtered = await trail(t, { Action: 'schedule.create', PageSize: '7' });
    expect(filtered.Result).toHaveLength(7);
    const rest = await trail(t, { Action: 'schedule.create', PageSize: '500', Cursor: filtered.NextCursor! });
    expect(rest.Result.length).toBe(10 - 7);
    await fold.folder.fold();
    expect(await allIds(t, 3)).toEqual(expected);
  });

  it('keeps the tail append-only: UPDATE refused (and DELETE, TRUNCATE outside the fold on PostgreSQL)', async () => {
    await createSchedule(t);
    await expect(
      t.dataSource.query("UPDATE audit_events_tail SET actor_name = 'someone else'"),
    ).rejects.toThrow(/append-only/);
    if (isPostgresRun()) {
      await expect(t.dataSource.query('DELETE FROM audit_events_tail')).rejects.toThrow(/append-only/);
      await expect(t.dataSource.query('TRUNCATE audit_events_tail')).rejects.toThrow(/append-only/);
    }
    expect(await count(t.dataSource, 'audit_events_tail')).toBe(1);
    expect(await fold.folder.fold()).toBe(1);
  });

  it("on PostgreSQL, ids an instance still on the previous version writes into audit_events never meet the tail's", async () => {
    if (!isPostgresRun()) return;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      await createSchedule(t);
      // What the previous version does: an INSERT into audit_events, its id from that table's sequence.
      const [row] = await t.dataSource.query<Array<{ id: string }>>(
        `INSERT INTO audit_events (occurred_at, actor_type, action, resource_type, outcome)
         VALUES (now(), 'system', 'test.previous-version', 'Test', 'success') RETURNING id`,
      );
      ids.push(String(row.id));
    }
    expect(await fold.folder.fold()).toBe(3);
    const everyId = await allIds(t, 500);
    expect(new Set(everyId).size).toBe(everyId.length);
    for (const id of ids) expect(everyId).toContain(id);
  });

  it('two instances folding at once move every event exactly once', async () => {
    const other = await startTestApp({ database });
    try {
      const otherFold = other.app.get(AuditFold);
      await otherFold.folder.stop();
      const before = await count(t.dataSource, 'audit_events');
      const writes = Array.from({ length: 40 }, (_, i) => createSchedule(i % 2 === 0 ? t : other));
      let stop = false;
      const folding = [fold, otherFold].map(async (folder) => {
        let moved = 0;
        // A turn of the event loop between folds: SQLite's synchronous driver would otherwise starve the writes.
        while (!stop) {
          moved += await folder.folder.fold();
          await new Promise((resolve) => setImmediate(resolve));
        }
        return moved;
      });
      await Promise.all(writes);
      stop = true;
      const moved = (await Promise.all(folding)).reduce((a, b) => a + b, 0);
      const last = (await fold.folder.fold()) + (await otherFold.folder.fold());
      expect(moved + last).toBe(40);
      expect(await count(t.dataSource, 'audit_events_tail')).toBe(0);
      expect(await count(t.dataSource, 'audit_events')).toBe(before + 40);
      const [row] = await t.dataSource.query<Array<{ n: string | number }>>(
        'SELECT COUNT(DISTINCT id) AS n FROM audit_events',
      );
      expect(Number(row.n)).toBe(before + 40);
    } finally {
      await other.close();
    }
  });

  it('migration 1763780001800 reverts with an unfolded tail (moved into audit_events) and reapplies', async () => {
    await createSchedule(t);
    const before = await allIds(t, 500);
    expect(await count(t.dataSource, 'audit_events_tail')).toBe(1);
    const runner = new MigrationRunner(t.dataSource);
    expect(await runner.revertLast('cli')).toBe('AuditEventsTail1763780001800');
    const rows = await t.dataSource.query<Array<{ id: string | number }>>(
      'SELECT id FROM audit_events ORDER BY id DESC',
    );
    // Every event kept its id; the revert's own event is the newest.
    expect(rows.slice(1).map((row) => String(row.id))).toEqual(before);
    await runner.runPending('cli');
    const id = await createSchedule(t);
    const after = await allIds(t, 500);
    // The reapply's event and the new change's come after every earlier id.
    expect(after.slice(3)).toEqual(before);
    expect(Number(after[0])).toBeGreaterThan(Number(after[1]));
    expect((await trail(t, { ResourceId: id })).Result[0].Id).toBe(after[0]);
    expect(await fold.folder.fold()).toBe(2);
  });

  it('folds a tail a stopped instance left behind at the next start, and serves it until then', async () => {
    const ids = [await createSchedule(t), await createSchedule(t), await createSchedule(t)];
    expect(await count(t.dataSource, 'audit_events_tail')).toBe(3);
    const expected = await allIds(t, 500);
    // The fold's timer is stopped and closing does not fold: the tail stays as a kill -9 would leave it.
    await t.close();
    t = await startTestApp({ database });
    fold = t.app.get(AuditFold);
    for (const id of ids) expect((await trail(t, { ResourceId: id })).Result).toHaveLength(1);
    // The restarted instance's own timer folds it (every second).
    const deadline = Date.now() + 15_000;
    while ((await count(t.dataSource, 'audit_events_tail')) > 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await count(t.dataSource, 'audit_events_tail')).toBe(0);
    const folded = await t.dataSource.query<Array<{ resource_id: string }>>(
      `SELECT resource_id FROM audit_events WHERE action = 'schedule.create' ORDER BY id DESC LIMIT 3`,
    );
    expect(folded.map((row) => row.resource_id).reverse()).toEqual(ids);
    // Same events, same ids (the restart's own migration events, if any, are newer).
    expect((await allIds(t, 500)).slice(-expected.length)).toEqual(expected);
  });
});
