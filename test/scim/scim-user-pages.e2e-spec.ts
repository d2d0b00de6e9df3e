// Deep pages of GET /Users (no filter, no sort) are read from their first key (created_at, id), found by an
// index-only subquery walked from the nearer end, instead of OFFSET over full rows: the pages must be exactly those
// of the plain OFFSET query around the offset where that path starts (1,000), around the middle where it turns to
// walking from the end, and past the end, with ties on created_at broken by id.
// On PostgreSQL the page's first key comes from the position directory once it is built and current, and never
// from a stale one: after users are inserted in the middle of the order and others deleted, pages are still exactly
// OFFSET's. SQLite and PostgreSQL.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { ScimUserEntity } from '../../src/scim/entities/scim-user.entity.js';
import { ScimUsersRepository } from '../../src/scim/scim-users.repository.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { isPostgresRun } from '../support/test-database.js';
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

  // Last: it changes the users.
  it('reads deep pages from the PostgreSQL position directory once built, and never from a stale one', async () => {
    const positions = t.app.get(ScimUsersRepository).positions;
    if (!isPostgresRun()) {
      expect(positions).toBeUndefined(); // SQLite walks the index (a build would block the event loop)
      return;
    }
    if (positions === undefined) throw new Error('PostgreSQL runs keep a position directory');
    // The page statement takes its start from current() and checks the generation itself; the general path asks
    // startOf, which answers undefined (and starts a rebuild) when the directory is stale.
    const current = jest.spyOn(positions, 'current');
    const startOf = jest.spyOn(positions, 'startOf');
    const servedFromDirectory = async (run: () => Promise<void>) => {
      const [currentCalls, startOfCalls] = [current.mock.calls.length, startOf.mock.calls.length];
      await run();
      return {
        fromDirectory: current.mock.results.slice(currentCalls).every((result) => result.value !== undefined),
        askedCurrent: current.mock.calls.length > currentCalls,
        generalPath: startOf.mock.calls.length - startOfCalls,
      };
    };
    const pagesMatch = async (total: number) => {
      for (const [startIndex, count] of [
        [151, 7], // from the directory's second key on (below the general path's keyset offset too)
        [1_000, 3],
        [1_001, 1],
        [1_250, 7],
        [1_999, 3],
        [2_001, 100],
        [total, 1],
        [total + 5, 1], // past the end: no users, the exact total
      ]) {
        const response = await scimClient(t).get(
          `/Users?startIndex=${String(startIndex)}&count=${String(count)}`,
        );
        const body = response.json<{ totalResults: number; Resources?: Array<{ id: string }> }>();
        expect({ startIndex, total: body.totalResults }).toEqual({ startIndex, total });
        expect((body.Resources ?? []).map((user) => user.id.toLowerCase())).toEqual(
          await expected(startIndex - 1, count),
        );
      }
    };

    await scimClient(t).get('/Users?startIndex=1500&count=1'); // finds no directory: starts building one
    await positions.idle();
    expect(await servedFromDirectory(() => pagesMatch(USERS))).toEqual({
      fromDirectory: true,
      askedCurrent: true,
      generalPath: 0,
    });

    // Three users sorted into the middle of the order, two deleted: every position after them moves.
    const middle = new Date(Date.parse('2026-01-01T00:00:00Z') + 1_200 * 1_000);
    await t.dataSource.getRepository(ScimUserEntity).insert(
      [0, 1, 2].map((index) =>
        Object.assign(new ScimUserEntity(), {
          id: randomUUID(),
          userName: `inserted.${String(index)}`,
          userNameLower: `inserted.${String(index)}`,
          externalId: null,
          attributes: {},
          version: 1,
          createdAt: middle,
          lastModified: middle,
        }),
      ),
    );
    for (const offset of [1_100, 1_800]) {
      const [gone] = await expected(offset, 1);
      expect((await scimClient(t).delete(`/Users/${gone}`)).statusCode).toBe(204);
    }
    const total = USERS + 3 - 2;
    const before = startOf.mock.results.length;
    await pagesMatch(total);
    // The first deep page after the change found the directory stale (its statement saw another generation) and
    // took the general path (a rebuild may finish during the later ones).
    expect(startOf.mock.results[before]?.type).toBe('return');
    expect(startOf.mock.results[before]?.value).toBeUndefined();

    await new Promise((resolve) => setTimeout(resolve, 1_100)); // one rebuild a second at most
    await scimClient(t).get('/Users?startIndex=1500&count=1');
    await positions.idle();
    expect(await servedFromDirectory(() => pagesMatch(total))).toEqual({
      fromDirectory: true,
      askedCurrent: true,
      generalPath: 0,
    });
  });

  // After the others: it alters a column.
  it('keeps answering when a migration changes a column under the named page statement (PostgreSQL)', async () => {
    if (!isPostgresRun()) return;
    const page = async () => {
      const response = await scimClient(t).get('/Users?startIndex=1&count=3');
      expect(response.statusCode).toBe(200);
      return response
        .json<{ Resources: Array<{ userName: string }> }>()
        .Resources.map((user) => user.userName);
    };
    const before = await page();
    await page(); // the pooled connection (the most recently used is reused) has the statement prepared
    await t.dataSource.query(
      'ALTER TABLE scim_users ALTER COLUMN user_name_lower TYPE varchar(300) COLLATE "C"',
    );
    // PostgreSQL now refuses the prepared statement ("cached plan must not change result type", 0A000): the
    // connection is closed and the page read unnamed, then prepared afresh on the next connection.
    expect(await page()).toEqual(before);
    expect(await page()).toEqual(before);
  });
});
