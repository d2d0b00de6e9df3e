// Deep pages of GET /Users (no filter, no sort) are read from their first key (created_at, id), found by an
// index-only subquery walked from the nearer end, instead of OFFSET over full rows: the pages must be exactly those
// of the plain OFFSET query around the offset where that path starts (1,000), around the middle where it turns to
// walking from the end, and past the end, with ties on created_at broken by id.
// SQLite and PostgreSQL.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ScimUserEntity } from '../../src/scim/entities/scim-user.entity.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { scimClient } from './scim-client.js';

const USERS = 2_500;

describe('deep pages of GET /Users', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
    const base = Date.parse('2026-01-01T00:00:00Z');
    // Every third user shares its created_at with the one before, so the order needs the id as well.
    const rows = Array.from({ length: USERS }, (_, index) => {
      const createdAt = new Date(
        base + Math.floor(index / 3) * 2 * 1_000 + (index % 3 === 2 ? 0 : index % 3),
      );
      return Object.assign(new ScimUserEntity(), {
        id: randomUUID(),
        userName: `page.${String(index)}`,
        userNameLower: `page.${String(index)}`,
        externalId: null,
        attributes: {},
        version: 1,
        createdAt,
        lastModified: createdAt,
      });
    });
    const repository = t.dataSource.getRepository(ScimUserEntity);
    for (let offset = 0; offset < rows.length; offset += 250)
      await repository.insert(rows.slice(offset, offset + 250));
  });
  afterAll(async () => t.close());

  const expected = async (offset: number, count: number): Promise<string[]> => {
    const rows = await t.dataSource.query<Array<{ id: string }>>(
      `SELECT id FROM scim_users ORDER BY created_at, id LIMIT ${String(count)} OFFSET ${String(offset)}`,
    );
    return rows.map((row) => String(row.id).toLowerCase());
  };

  it.each([
    [1, 100],
    [999, 5],
    [1_000, 1],
    [1_001, 1],
    [1_002, 7],
    [1_249, 3],
    [1_250, 1],
    [1_251, 2],
    [1_252, 100],
    [2_000, 100],
    [2_499, 3],
    [2_500, 1],
    [2_501, 10],
    [2_600, 1],
  ])('startIndex=%i&count=%i lists what OFFSET lists, with the exact total', async (startIndex, count) => {
    const response = await scimClient(t).get(
      `/Users?startIndex=${String(startIndex)}&count=${String(count)}`,
    );
    expect(response.statusCode).toBe(200);
    const body = response.json<{ totalResults: number; Resources?: Array<{ id: string }> }>();
    expect(body.totalResults).toBe(USERS);
    expect((body.Resources ?? []).map((user) => user.id.toLowerCase())).toEqual(
      await expected(startIndex - 1, count),
    );
  });
});
