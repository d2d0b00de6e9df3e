// totalResults of GET /Users without a filter comes from scim_user_stats, a count kept by triggers (migration
// 1763780000900): it must equal COUNT(*) after concurrent creates, deletes, deletes that match nothing, a multi-row
// INSERT straight into the table and (PostgreSQL) TRUNCATE. SQLite and PostgreSQL.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ScimUserEntity } from '../../src/scim/entities/scim-user.entity.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { CORE_USER, scimClient } from './scim-client.js';

describe('the user count behind GET /Users', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  const listed = async (): Promise<number> => {
    const response = await scimClient(t).get('/Users?count=1');
    expect(response.statusCode).toBe(200);
    return response.json<{ totalResults: number }>().totalResults;
  };
  const counted = async (): Promise<number> => {
    const rows = await t.dataSource.query<Array<{ n: number | string }>>(
      'SELECT COUNT(*) AS n FROM scim_users',
    );
    return Number(rows[0]?.n);
  };
  const create = async (index: number): Promise<string> => {
    const response = await scimClient(t).post('/Users', {
      schemas: [CORE_USER],
      userName: `count.${String(index)}.${randomUUID()}@example.com`,
    });
    expect(response.statusCode).toBe(201);
    return response.json<{ id: string }>().id;
  };

  it('stays equal to COUNT(*) through every kind of write', async () => {
    expect(await listed()).toBe(0);
    const ids = await Promise.all(Array.from({ length: 12 }, (_, index) => create(index)));
    expect(await listed()).toBe(12);

    // Concurrent: on SQLite the transactions queue (database/transaction.ts) instead of nesting (a 500 before).
    const deleted = await Promise.all(ids.slice(0, 4).map((id) => scimClient(t).delete(`/Users/${id}`)));
    expect(deleted.map((response) => response.statusCode)).toEqual([204, 204, 204, 204]);
    expect(await counted()).toBe(8);
    // Deleting again matches nothing; a wrong If-Match deletes nothing either.
    expect((await scimClient(t).delete(`/Users/${ids[0] ?? ''}`)).statusCode).toBe(404);
    expect((await scimClient(t).delete(`/Users/${ids[5] ?? ''}`, { 'if-match': 'W/"7"' })).statusCode).toBe(
      412,
    );
    expect(await listed()).toBe(8);

    // A bulk INSERT that bypasses the service (as the benchmarks and a data import do).
    const now = new Date();
    await t.dataSource.getRepository(ScimUserEntity).insert(
      Array.from({ length: 25 }, (_, index) =>
        Object.assign(new ScimUserEntity(), {
          id: randomUUID(),
          userName: `bulk.${String(index)}`,
          userNameLower: `bulk.${String(index)}`,
          externalId: null,
          attributes: {},
          version: 1,
          createdAt: now,
          lastModified: now,
        }),
      ),
    );
    expect(await listed()).toBe(33);
    // A failed insert (duplicate userName) rolls its count back with it.
    const duplicate = await scimClient(t).post('/Users', { schemas: [CORE_USER], userName: 'BULK.1' });
    expect(duplicate.statusCode).toBe(409);
    expect(await listed()).toBe(33);
    expect(await listed()).toBe(await counted());

    await t.dataSource.query("DELETE FROM scim_users WHERE user_name LIKE 'bulk.%'");
    expect(await listed()).toBe(8);
    if (t.dataSource.options.type === 'postgres') {
      await t.dataSource.query('TRUNCATE scim_users CASCADE');
      expect(await listed()).toBe(0);
    }
    expect(await listed()).toBe(await counted());
  });
});
