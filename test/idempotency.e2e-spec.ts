// Idempotency-Key (draft-ietf-httpapi-idempotency-key-header) on the creating POSTs, on the real app and database:
// a repeat answers the first answer and creates nothing, another request under the key is 422, a concurrent one is
// 409; keys belong to the API key; the key and its answer are part of the resource's transaction; old keys go.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { LightMyRequestResponse } from 'fastify';
import { ApiKeysService } from '../src/auth/api-keys.service.js';
import { IdempotencyKeyRecord } from '../src/http/entities/idempotency-key.entity.js';
import { IdempotentWrite } from '../src/http/idempotency.js';
import { IDEMPOTENCY_RETENTION_JOB, IdempotencyStore } from '../src/http/idempotency-store.js';
import { Job } from '../src/jobs/entities/job.entity.js';
import { JobsService } from '../src/jobs/jobs.service.js';
import { ScheduleInput } from '../src/schedules/dto/schedule.dto.js';
import { Schedule } from '../src/schedules/entities/schedule.entity.js';
import { SchedulesService, type WriteResult } from '../src/schedules/schedules.service.js';
import { systemSource } from '../src/audit/audit-source.js';
import { ScimGroupEntity } from '../src/scim/entities/scim-group.entity.js';
import { ScimUserEntity } from '../src/scim/entities/scim-user.entity.js';
import { scheduleBody, scheduleItem } from './factories/schedule.factory.js';
import { compileDtoCached } from '../src/validation/compile-dto.js';
import { ERROR_SCHEMA } from './scim/scim-client.js';
import { scimUserBody } from './scim/scim-user.factory.js';
import { isPostgresRun } from './support/test-database.js';
import { ADMIN_KEY, startTestApp, type TestApp } from './support/test-app.js';

const SCHEDULE = '/api/v1/Schedule';
const IMPORT = '/api/v1/Schedule/import';
const USERS = '/api/v1/scim/Users';
const GROUPS = '/api/v1/scim/Groups';
const CORE_GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const HOUR_MS = 3_600_000;

const quoted = (key: string) => `"${key}"`;

function calendar(summary: string): string {
  return [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//test//EN',
    'BEGIN:VEVENT',
    `UID:${randomUUID()}@test`,
    `SUMMARY:${summary}`,
    'DTSTART:20260105T090000Z',
    'DTEND:20260105T091500Z',
    'RRULE:FREQ=WEEKLY;BYDAY=MO',
    'END:VEVENT',
    'END:VCALENDAR',
    '',
  ].join('\r\n');
}

/** What a replay must repeat. */
function answerOf(response: LightMyRequestResponse) {
  return {
    status: response.statusCode,
    body: response.body,
    contentType: response.headers['content-type'],
    location: response.headers.location,
    etag: response.headers.etag,
  };
}

describe('Idempotency-Key', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  const post = (url: string, body: unknown, headers: Record<string, string> = {}, key = ADMIN_KEY) =>
    t.request({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const schedules = () => t.dataSource.getRepository(Schedule).count();
  const records = () => t.dataSource.getRepository(IdempotencyKeyRecord);

  describe('POST /api/v1/Schedule', () => {
    it('answers a repeat with the first answer and creates nothing', async () => {
      const before = await schedules();
      const key = quoted(randomUUID());
      const body = scheduleBody(scheduleItem({ Name: 'idempotent' }));
      const first = await post(SCHEDULE, body, { 'idempotency-key': key });
      expect(first.statusCode).toBe(201);
      const second = await post(SCHEDULE, body, { 'idempotency-key': key });
      expect(answerOf(second)).toEqual(answerOf(first));
      expect(second.headers['idempotent-replayed']).toBe('true');
      expect(second.json().Result.Id).toBe(first.json().Result.Id);
      expect(await schedules()).toBe(before + 1);
      // The same JSON with its properties in another order is the same request.
      const item = (body.ScheduleItems as Array<Record<string, unknown>>)[0];
      const reordered = { ScheduleItems: [Object.fromEntries(Object.entries(item).reverse())] };
      expect((await post(SCHEDULE, reordered, { 'idempotency-key': key })).json().Result.Id).toBe(
        first.json().Result.Id,
      );
      expect(await schedules()).toBe(before + 1);
    });

    it('accepts a bare token (an unquoted UUID) and keeps it apart from the quoted one only by value', async () => {
      const id = randomUUID();
      const first = await post(SCHEDULE, scheduleBody(), { 'idempotency-key': id });
      expect(first.statusCode).toBe(201);
      const again = await post(SCHEDULE, scheduleBody(), { 'idempotency-key': quoted(id) });
      expect(again.json().Result.Id).toBe(first.json().Result.Id);
    });

    it('is 422 IdempotencyKeyMismatch for the same key with another body, and creates nothing', async () => {
      const key = quoted(randomUUID());
      expect((await post(SCHEDULE, scheduleBody(), { 'idempotency-key': key })).statusCode).toBe(201);
      const before = await schedules();
      const other = await post(SCHEDULE, scheduleBody(scheduleItem({ Name: 'other' })), {
        'idempotency-key': key,
        'x-correlation-id': 'idem-mismatch',
      });
      expect(other.statusCode).toBe(422);
      expect(other.json()).toEqual({
        Succeeded: false,
        Message: expect.stringContaining('Idempotency-Key'),
        Code: 'IdempotencyKeyMismatch',
        CorrelationId: 'idem-mismatch',
      });
      expect(await schedules()).toBe(before);
    });

    it.each([
      ['an empty string', '""'],
      ['an unterminated string', '"abc'],
      ['two values', '"a", "b"'],
      ['a key longer than 255 characters', quoted('k'.repeat(256))],
      ['a non-ASCII character', quoted('clé')],
    ])('is 400 ValidationFailed naming Idempotency-Key for %s', async (_what, value) => {
      const before = await schedules();
      const response = await post(SCHEDULE, scheduleBody(), { 'idempotency-key': value });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({
        Code: 'ValidationFailed',
        Errors: [{ Field: 'Idempotency-Key', Message: expect.any(String) }],
      });
      expect(await schedules()).toBe(before);
    });

    it('takes a key of 255 characters', async () => {
      const response = await post(SCHEDULE, scheduleBody(), { 'idempotency-key': quoted('k'.repeat(255)) });
      expect(response.statusCode).toBe(201);
    });

    it('changes nothing without the header', async () => {
      const before = await schedules();
      const first = await post(SCHEDULE, scheduleBody());
      const second = await post(SCHEDULE, scheduleBody());
      expect([first.statusCode, second.statusCode]).toEqual([201, 201]);
      expect(first.json().Result.Id).not.toBe(second.json().Result.Id);
      expect(second.headers['idempotent-replayed']).toBeUndefined();
      expect(await schedules()).toBe(before + 2);
    });

    it('stores nothing for a 400: the same key may be sent again, corrected', async () => {
      const key = quoted(randomUUID());
      const bad = await post(
        SCHEDULE,
        { ScheduleItems: [scheduleItem({ Start: 'soon' })] },
        { 'idempotency-key': key },
      );
      expect(bad.statusCode).toBe(400);
      expect(await records().countBy({ key: key.slice(1, -1) })).toBe(0);
      // The same bad request runs again (and fails again); another body under the key is no mismatch.
      expect(
        (
          await post(
            SCHEDULE,
            { ScheduleItems: [scheduleItem({ Start: 'soon' })] },
            { 'idempotency-key': key },
          )
        ).statusCode,
      ).toBe(400);
      expect((await post(SCHEDULE, scheduleBody(), { 'idempotency-key': key })).statusCode).toBe(201);
    });

    it('creates one schedule for 10 concurrent requests with one key; the others replay it or get 409', async () => {
      const before = await schedules();
      const key = quoted(randomUUID());
      const body = scheduleBody(scheduleItem({ Name: 'concurrent' }));
      const responses = await Promise.all(
        Array.from({ length: 10 }, () => post(SCHEDULE, body, { 'idempotency-key': key })),
      );
      expect(await schedules()).toBe(before + 1);
      const created = responses.filter((response) => response.statusCode === 201);
      const busy = responses.filter((response) => response.statusCode === 409);
      expect(created.length + busy.length).toBe(10);
      expect(created.length).toBeGreaterThanOrEqual(1);
      expect(new Set(created.map((response) => response.json().Result.Id)).size).toBe(1);
      for (const response of busy) {
        expect(response.json()).toMatchObject({ Succeeded: false, Code: 'IdempotencyKeyInUse' });
        expect(response.headers['retry-after']).toBeDefined();
      }
      // Once the first has answered, every repeat gets its answer.
      const later = await post(SCHEDULE, body, { 'idempotency-key': key });
      expect(later.json().Result.Id).toBe(created[0].json().Result.Id);
      expect(await schedules()).toBe(before + 1);
    });

    it('keeps the keys of another API key apart', async () => {
      const other = (await t.app.get(ApiKeysService).create('idempotency other', ['schedules'])).key;
      const key = quoted(randomUUID());
      const mine = await post(SCHEDULE, scheduleBody(), { 'idempotency-key': key });
      const theirs = await post(
        SCHEDULE,
        scheduleBody(scheduleItem({ Name: 'theirs' })),
        { 'idempotency-key': key },
        other,
      );
      expect([mine.statusCode, theirs.statusCode]).toEqual([201, 201]);
      expect(theirs.json().Result.Id).not.toBe(mine.json().Result.Id);
      const theirsAgain = await post(
        SCHEDULE,
        scheduleBody(scheduleItem({ Name: 'theirs' })),
        { 'idempotency-key': key },
        other,
      );
      expect(theirsAgain.json().Result.Id).toBe(theirs.json().Result.Id);
    });

    it('answers a committed pending key (an earlier version lost its answer) at once, and creates nothing', async () => {
      const key = randomUUID();
      const body = scheduleBody(scheduleItem({ Name: 'lost answer' }));
      const first = await post(SCHEDULE, body, { 'idempotency-key': key });
      expect(first.statusCode).toBe(201);
      const before = await schedules();
      // What the previous version left when it died between its commit and storing the answer: a record `pending`
      // that committed, written just now (no request time-out to wait for).
      await records().update(
        { key },
        {
          state: 'pending',
          statusCode: null,
          responseBody: null,
          responseHeaders: null,
          createdAt: new Date(),
        },
      );
      // Decided without waiting for the record to age (src/http/idempotency.spec.ts: however young it is).
      const lost = await post(SCHEDULE, body, { 'idempotency-key': key, 'x-correlation-id': 'idem-lost' });
      expect(lost.statusCode).toBe(409);
      expect(lost.json()).toEqual({
        Succeeded: false,
        Message: expect.stringContaining('carried out'),
        Code: 'IdempotencyKeyAnswerLost',
        CorrelationId: 'idem-lost',
      });
      // Waiting does not help: no Retry-After.
      expect(lost.headers['retry-after']).toBeUndefined();
      expect(await schedules()).toBe(before);
    });

    it('commits the answer in the schedule’s transaction; a key taken meanwhile stores no schedule', async () => {
      const before = await schedules();
      const id = { caller: 'env:0', route: `POST ${SCHEDULE}`, key: randomUUID() };
      const service = t.app.get(SchedulesService);
      const checked = compileDtoCached(ScheduleInput, { source: 'body' }).validate(scheduleBody());
      if (!checked.ok) throw new Error('the factory body is invalid');
      const input = checked.value;
      const render = (result: WriteResult) => ({
        statusCode: 201,
        headers: { location: `/x/${result.schedule.Id}` },
        body: { Result: result.schedule },
      });
      const write = new IdempotentWrite(id, 'a'.repeat(64));
      const created = await service.create(input, systemSource('test'), write.answeredBy(render));
      expect(await schedules()).toBe(before + 1);
      // Stored by the service's own transaction: no HTTP answer (onSend) was involved.
      const stored = await records().findOneByOrFail(id);
      expect(stored).toMatchObject({ state: 'done', statusCode: 201, completedAt: expect.any(Date) });
      expect(JSON.parse(stored.responseBody!)).toEqual({ Result: created.schedule });
      expect(JSON.parse(stored.responseHeaders!)).toEqual({
        'content-type': 'application/json; charset=utf-8',
        location: `/x/${created.schedule.Id}`,
      });
      expect(write.answer?.body).toBe(stored.responseBody);
      await expect(
        service.create(
          input,
          systemSource('test'),
          new IdempotentWrite(id, 'a'.repeat(64)).answeredBy(render),
        ),
      ).rejects.toMatchObject({ code: 'IdempotencyKeyInUse', status: 409 });
      expect(await schedules()).toBe(before + 1);
    });

    it('stores neither the schedule nor the key when the answer cannot be stored', async () => {
      const before = await schedules();
      const id = { caller: 'env:0', route: `POST ${SCHEDULE}`, key: randomUUID() };
      const checked = compileDtoCached(ScheduleInput, { source: 'body' }).validate(scheduleBody());
      if (!checked.ok) throw new Error('the factory body is invalid');
      const failing = new IdempotentWrite(id, 'b'.repeat(64)).answeredBy((): never => {
        throw new Error('rendering failed');
      });
      await expect(
        t.app.get(SchedulesService).create(checked.value, systemSource('test'), failing),
      ).rejects.toThrow('rendering failed');
      expect(await schedules()).toBe(before);
      expect(await records().countBy(id)).toBe(0);
    });
  });

  describe('POST /api/v1/Schedule/import (text/calendar)', () => {
    const importIcal = (body: string, key: string) =>
      t.request({
        method: 'POST',
        url: IMPORT,
        headers: {
          authorization: `Bearer ${ADMIN_KEY}`,
          'content-type': 'text/calendar; charset=utf-8',
          'idempotency-key': key,
        },
        payload: body,
      });

    it('replays the import for the same file, and is 422 for another file', async () => {
      const key = quoted(randomUUID());
      const file = calendar('Stand-up');
      const first = await importIcal(file, key);
      expect(first.statusCode).toBe(201);
      const before = await schedules();
      const second = await importIcal(file, key);
      expect(answerOf(second)).toEqual(answerOf(first));
      expect(await schedules()).toBe(before);
      const other = await importIcal(calendar('Retro'), key);
      expect(other.statusCode).toBe(422);
      expect(other.json()).toMatchObject({ Code: 'IdempotencyKeyMismatch' });
      expect(await schedules()).toBe(before);
    });

    it('keeps the keys of the import apart from those of POST /api/v1/Schedule', async () => {
      const key = quoted(randomUUID());
      expect((await post(SCHEDULE, scheduleBody(), { 'idempotency-key': key })).statusCode).toBe(201);
      expect((await importIcal(calendar('Planning'), key)).statusCode).toBe(201);
    });
  });

  describe('SCIM', () => {
    const scim = (url: string, body: unknown, key: string) =>
      post(url, body, { 'content-type': 'application/scim+json', 'idempotency-key': key });

    it('replays a user creation (Location, ETag, SCIM media type) and answers another body in SCIM’s schema', async () => {
      const users = () => t.dataSource.getRepository(ScimUserEntity).count();
      const key = quoted(randomUUID());
      const body = scimUserBody();
      const first = await scim(USERS, body, key);
      expect(first.statusCode).toBe(201);
      expect(first.headers.location).toContain(first.json().id);
      const before = await users();
      const second = await scim(USERS, body, key);
      expect(answerOf(second)).toEqual(answerOf(first));
      expect(second.headers['content-type']).toMatch(/^application\/scim\+json/);
      expect(await users()).toBe(before);
      const other = await scim(USERS, scimUserBody(), key);
      expect(other.statusCode).toBe(422);
      expect(other.headers['content-type']).toMatch(/^application\/scim\+json/);
      expect(other.json()).toEqual({
        schemas: [ERROR_SCHEMA],
        status: '422',
        detail: expect.stringContaining('Idempotency-Key'),
      });
      expect(await users()).toBe(before);
    });

    it('answers a malformed key in SCIM’s schema', async () => {
      const response = await scim(USERS, scimUserBody(), '"');
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ schemas: [ERROR_SCHEMA], status: '400' });
      expect(response.json().detail).toContain('Idempotency-Key');
    });

    it('answers a user key an earlier version left pending at once, in SCIM’s schema, without Retry-After', async () => {
      const key = randomUUID();
      const body = scimUserBody();
      expect((await scim(USERS, body, key)).statusCode).toBe(201);
      await records().update(
        { key },
        { state: 'pending', statusCode: null, responseBody: null, responseHeaders: null },
      );
      const lost = await scim(USERS, body, key);
      expect(lost.statusCode).toBe(409);
      expect(lost.json()).toEqual({ schemas: [ERROR_SCHEMA], status: '409', detail: expect.any(String) });
      expect(lost.json().detail).toContain('carried out');
      expect(lost.headers['retry-after']).toBeUndefined();
    });

    it('stores a group’s answer with its members’ display names, read inside the transaction', async () => {
      const member = await scim(USERS, scimUserBody(), quoted(randomUUID()));
      const key = quoted(randomUUID());
      const body = {
        schemas: [CORE_GROUP],
        displayName: `Members ${randomUUID()}`,
        members: [{ value: member.json().id }],
      };
      const first = await scim(GROUPS, body, key);
      expect(first.statusCode).toBe(201);
      expect(first.json().members).toEqual([
        expect.objectContaining({ value: member.json().id, display: expect.any(String) }),
      ]);
      const replay = await scim(GROUPS, body, key);
      expect(answerOf(replay)).toEqual(answerOf(first));
      expect(replay.headers['idempotent-replayed']).toBe('true');
    });

    it('leaves the key free after a 409 uniqueness (nothing was created)', async () => {
      const body = scimUserBody();
      expect((await scim(USERS, body, quoted(randomUUID()))).statusCode).toBe(201);
      const key = quoted(randomUUID());
      const taken = await scim(USERS, body, key);
      expect(taken.statusCode).toBe(409);
      expect(taken.json()).toMatchObject({ scimType: 'uniqueness' });
      expect(await records().countBy({ key: key.slice(1, -1) })).toBe(0);
    });

    it('replays a group creation, and 10 concurrent ones create one group', async () => {
      const groups = () => t.dataSource.getRepository(ScimGroupEntity).count();
      const key = quoted(randomUUID());
      const body = { schemas: [CORE_GROUP], displayName: `Sales ${randomUUID()}` };
      const first = await scim(GROUPS, body, key);
      expect(first.statusCode).toBe(201);
      const before = await groups();
      const second = await scim(GROUPS, body, key);
      expect(answerOf(second)).toEqual(answerOf(first));
      const other = await scim(GROUPS, { ...body, displayName: 'Other' }, key);
      expect(other.statusCode).toBe(422);
      expect(other.json()).toMatchObject({ schemas: [ERROR_SCHEMA], status: '422' });
      expect(await groups()).toBe(before);

      const concurrentKey = quoted(randomUUID());
      const concurrentBody = { schemas: [CORE_GROUP], displayName: `Support ${randomUUID()}` };
      const responses = await Promise.all(
        Array.from({ length: 10 }, () => scim(GROUPS, concurrentBody, concurrentKey)),
      );
      expect(responses.every((response) => [201, 409].includes(response.statusCode))).toBe(true);
      const ids = new Set(responses.filter((r) => r.statusCode === 201).map((r) => r.json().id as string));
      expect(ids.size).toBe(1);
      for (const response of responses.filter((r) => r.statusCode === 409)) {
        expect(response.json()).toMatchObject({ schemas: [ERROR_SCHEMA], status: '409' });
        expect(response.json().scimType).toBeUndefined();
      }
      expect(await groups()).toBe(before + 1);
    });
  });

  it('deletes keys older than 24 h in the retention job', async () => {
    const oldKey = randomUUID();
    const newKey = randomUUID();
    expect((await post(SCHEDULE, scheduleBody(), { 'idempotency-key': oldKey })).statusCode).toBe(201);
    expect((await post(SCHEDULE, scheduleBody(), { 'idempotency-key': newKey })).statusCode).toBe(201);
    await records().update({ key: oldKey }, { createdAt: new Date(Date.now() - 25 * HOUR_MS) });
    await records().update({ key: newKey }, { createdAt: new Date(Date.now() - 23 * HOUR_MS) });
    const job = await t.dataSource
      .getRepository(Job)
      .findOneBy({ uniqueKey: `periodic:${IDEMPOTENCY_RETENTION_JOB}` });
    expect(job).toBeDefined();
    // A periodic job's first run is due 5 s after start: make it due now, whenever this test runs.
    await t.dataSource.getRepository(Job).update({ id: job!.id }, { runAt: Date.now() - 1 });
    expect(await t.app.get(JobsService).runNow(job!.id, 5_000)).toBe('completed');
    expect(await records().countBy({ key: oldKey })).toBe(0);
    expect(await records().countBy({ key: newKey })).toBe(1);
    // The store's own pass finds nothing more.
    expect(await t.app.get(IdempotencyStore).prune(24 * HOUR_MS)).toBe(0);
  });

  it("measures a key's age on the database's clock: a key claimed while this process's clock was a day behind is kept", async () => {
    const key = randomUUID();
    // Only Date is moved (timers, the event loop and the database run on): what a wall-clock step looks like.
    jest.useFakeTimers({
      now: Date.now() - 25 * HOUR_MS,
      doNotFake: [
        'hrtime',
        'nextTick',
        'performance',
        'queueMicrotask',
        'setImmediate',
        'clearImmediate',
        'setInterval',
        'clearInterval',
        'setTimeout',
        'clearTimeout',
      ],
    });
    let status: number;
    try {
      status = (await post(SCHEDULE, scheduleBody(), { 'idempotency-key': key })).statusCode;
    } finally {
      jest.useRealTimers();
    }
    expect(status).toBe(201);
    await t.app.get(IdempotencyStore).prune(24 * HOUR_MS);
    expect(await records().countBy({ key })).toBe(1);
  });

  (isPostgresRun() ? it : it.skip)(
    'shares keys between two instances on one PostgreSQL database',
    async () => {
      const second = await startTestApp({ database: t.database });
      try {
        const key = quoted(randomUUID());
        const body = scheduleBody(scheduleItem({ Name: 'fleet' }));
        const first = await post(SCHEDULE, body, { 'idempotency-key': key });
        expect(first.statusCode).toBe(201);
        const before = await schedules();
        const replay = await second.post(SCHEDULE, body, { 'idempotency-key': key });
        expect(answerOf(replay)).toEqual(answerOf(first));
        const other = await second.post(SCHEDULE, scheduleBody(), { 'idempotency-key': key });
        expect(other.statusCode).toBe(422);
        // Concurrent requests spread over both instances still create one schedule.
        const concurrentKey = quoted(randomUUID());
        const responses = await Promise.all(
          Array.from({ length: 10 }, (_, index) =>
            (index % 2 === 0 ? t : second).post(SCHEDULE, body, { 'idempotency-key': concurrentKey }),
          ),
        );
        expect(responses.every((response) => [201, 409].includes(response.statusCode))).toBe(true);
        expect(await schedules()).toBe(before + 1);
      } finally {
        await second.close();
      }
    },
  );
});
