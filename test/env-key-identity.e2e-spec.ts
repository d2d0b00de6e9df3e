// A key from API_KEYS is identified by its own hash, not by its position in the list. Replacing
// the key at position 0 must give the new key neither the old key's stored Idempotency-Key answers nor its
// rate-limit budget.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { hashKey } from '../src/auth/api-keys.service.js';
import { IdempotencyKeyRecord } from '../src/http/entities/idempotency-key.entity.js';
import { Schedule } from '../src/schedules/entities/schedule.entity.js';
import { scheduleBody, scheduleItem } from './factories/schedule.factory.js';
import { startTestApp, type TestApp } from './support/test-app.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';

const SCHEDULE = '/api/v1/Schedule';
const OLD_KEY = 'env-key-old-0123456789abcdef';
const NEW_KEY = 'env-key-new-0123456789abcdef';

describe('API_KEYS identities follow the key, not its position', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => database.drop());

  /** Boots the app on the shared database with API_KEYS = `keys` (the first at position 0). */
  async function withKey<T>(keys: string, env: Record<string, string>, run: (t: TestApp) => Promise<T>) {
    const t = await startTestApp({ database, env: { API_KEYS: keys, ...env } });
    try {
      return await run(t);
    } finally {
      await t.close();
    }
  }
  const post = (t: TestApp, key: string, body: unknown, headers: Record<string, string> = {}) =>
    t.request({
      method: 'POST',
      url: SCHEDULE,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      payload: JSON.stringify(body),
    });

  it('does not replay the old key’s stored answer to the key that replaced it', async () => {
    const idempotencyKey = `"${randomUUID()}"`;
    const body = scheduleBody(scheduleItem({ Name: 'made by the old key' }));
    const first = await withKey(`${OLD_KEY},another-key-0123456789`, {}, async (t) => {
      const created = await post(t, OLD_KEY, body, { 'idempotency-key': idempotencyKey });
      expect(created.statusCode).toBe(201);
      return created;
    });
    await withKey(`${NEW_KEY},another-key-0123456789`, {}, async (t) => {
      const before = await t.dataSource.getRepository(Schedule).count();
      const second = await post(t, NEW_KEY, body, { 'idempotency-key': idempotencyKey });
      expect(second.statusCode).toBe(201);
      expect(second.headers['idempotent-replayed']).toBeUndefined();
      expect(second.json<{ Result: { Id: string } }>().Result.Id).not.toBe(
        first.json<{ Result: { Id: string } }>().Result.Id,
      );
      expect(await t.dataSource.getRepository(Schedule).count()).toBe(before + 1);
      // Each key's record is under its own id, derived from the key and revealing nothing of it.
      const callers = (await t.dataSource.getRepository(IdempotencyKeyRecord).find()).map((r) => r.caller);
      expect(callers.sort()).toEqual(
        [`env:${hashKey(OLD_KEY).slice(0, 16)}`, `env:${hashKey(NEW_KEY).slice(0, 16)}`].sort(),
      );
      expect(callers.join()).not.toContain('0123456789abcdef');
    });
  });

  it('starts the replacing key with a fresh rate-limit budget (shared store)', async () => {
    const env = { RATE_LIMIT: '3', RATE_LIMIT_STORE: 'database' };
    const get = (t: TestApp, key: string) =>
      t.request({ method: 'GET', url: SCHEDULE, headers: { authorization: `Bearer ${key}` } });
    await withKey(OLD_KEY, env, async (t) => {
      const statuses = [];
      for (let i = 0; i < 4; i += 1) statuses.push((await get(t, OLD_KEY)).statusCode);
      expect(statuses).toEqual([200, 200, 200, 429]);
    });
    // The new key takes position 0; the old one moves to position 1 and keeps its spent budget.
    await withKey(`${NEW_KEY},${OLD_KEY}`, env, async (t) => {
      expect((await get(t, NEW_KEY)).statusCode).toBe(200);
      expect((await get(t, OLD_KEY)).statusCode).toBe(429);
    });
  });
});
