// Operations 1 and 2, schedule CRUD and the occurrence listing, on the real database.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { oneOff, scheduleBody, scheduleItem } from './factories/schedule.factory.js';
import { ADMIN_KEY, startTestApp, type TestApp } from './support/test-app.js';

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
const BY_GROUP = '/api/v1/Occurrence/hasOccurrences/byGroup';

describe('schedules', () => {
  let t: TestApp;
  const create = async (body: unknown): Promise<string> => {
    const response = await t.post('/api/v1/Schedule', body);
    expect(response.statusCode).toBe(201);
    return response.json().Result.Id as string;
  };
  const byGroup = (body: unknown, headers: Record<string, string> = {}) =>
    t.request({
      method: 'POST',
      url: BY_GROUP,
      headers: { 'content-type': 'application/json', ...headers },
      payload: JSON.stringify(body),
    });
  const has = async (ids: string[], start: string, end: string): Promise<boolean> => {
    const response = await byGroup({ Groups: [{ Key: 'g', ScheduleIds: ids }], Start: start, End: end });
    expect(response.statusCode).toBe(200);
    return response.json().Groups.g as boolean;
  };

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  describe('CRUD', () => {
    it('creates a schedule with ids assigned and every documented field present', async () => {
      const response = await t.post(
        '/api/v1/Schedule',
        scheduleBody(
          scheduleItem({
            Recurrence: {
              Pattern: 'FREQ=WEEKLY;BYDAY=MO',
              Exceptions: [{ OriginalTime: '2026-01-12T08:00:00Z', IsDeleted: true }],
            },
          }),
        ),
      );
      expect(response.statusCode).toBe(201);
      const body = response.json();
      expect(body).toMatchObject({ Succeeded: true, Message: null, Code: null });
      const item = body.Result.ScheduleItems[0];
      expect(Object.keys(item)).toEqual([
        'Id',
        'Name',
        'Start',
        'End',
        'StartTimeZone',
        'AllDay',
        'Recurrence',
      ]);
      expect(Object.keys(item.Recurrence)).toEqual([
        'Id',
        'StartTime',
        'EndTime',
        'Offset',
        'EndCount',
        'RecurrenceType',
        'Interval',
        'Duration',
        'Pattern',
        'Exceptions',
        'RecurrenceDates',
        'ExceptionDates',
      ]);
      expect(item.Recurrence).toMatchObject({ RecurrenceDates: [], ExceptionDates: [] });
      expect(item.Recurrence.Exceptions[0]).toEqual({
        Id: expect.any(String),
        RecurrenceId: item.Recurrence.Id,
        OriginalTime: '2026-01-12T08:00:00Z',
        IsDeleted: true,
        NewStart: null,
        NewEnd: null,
        NewStartTime: null,
        NewEndTime: null,
      });
      const fetched = await t.request({
        method: 'GET',
        url: `/api/v1/schedule/${body.Result.Id}`,
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      });
      expect(fetched.json().Result).toEqual(body.Result);
    });

    it('takes back what GET answered: read-only ids are accepted and ignored (PUT of a GET answer, a model with ids)', async () => {
      const auth = { authorization: `Bearer ${ADMIN_KEY}` };
      const id = await create(
        scheduleBody(
          scheduleItem({
            Recurrence: {
              Pattern: 'FREQ=WEEKLY;BYDAY=MO',
              Exceptions: [{ OriginalTime: '2026-01-12T08:00:00Z', IsDeleted: true }],
            },
          }),
        ),
      );
      const read = (await t.request({ method: 'GET', url: `/api/v1/Schedule/${id}`, headers: auth })).json()
        .Result;
      const put = await t.request({
        method: 'PUT',
        url: `/api/v1/Schedule/${id}`,
        headers: auth,
        payload: read,
      });
      expect(put.statusCode).toBe(200);
      const replaced = put.json().Result;
      expect(replaced.Id).toBe(id);
      // The same schedule, with new item ids (PUT replaces the items, docs/schedules.md).
      expect(replaced.ScheduleItems[0].Id).not.toBe(read.ScheduleItems[0].Id);
      const withoutIds = (schedule: { ScheduleItems: Array<Record<string, unknown>> }) =>
        JSON.parse(JSON.stringify(schedule), (key: string, value: unknown) =>
          key === 'Id' || key === 'RecurrenceId' ? undefined : value,
        ) as unknown;
      expect(withoutIds(replaced)).toEqual(withoutIds(read));
      // A client model with its ids unset (.NET: null or Guid.Empty) creates as without them; another id in the
      // body does not rename the schedule.
      const model = await t.post('/api/v1/Schedule', {
        Id: UNKNOWN_ID,
        ScheduleItems: [{ ...scheduleItem(), Id: '00000000-0000-0000-0000-000000000000', Recurrence: null }],
      });
      expect(model.statusCode).toBe(201);
      expect(model.json().Result.Id).not.toBe(UNKNOWN_ID);
      expect(model.json().Result.ScheduleItems[0].Id).not.toBe('00000000-0000-0000-0000-000000000000');
      const renamed = await t.request({
        method: 'PUT',
        url: `/api/v1/Schedule/${id}`,
        headers: auth,
        payload: { ...read, Id: UNKNOWN_ID },
      });
      expect(renamed.statusCode).toBe(200);
      expect(renamed.json().Result.Id).toBe(id);
      // Still typed: an id that is not a string is a 400 naming it.
      const bad = await t.post('/api/v1/Schedule', { ScheduleItems: [{ ...scheduleItem(), Id: 42 }] });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().Errors).toEqual([expect.objectContaining({ Field: 'ScheduleItems[0].Id' })]);
    });

    it('names every bad field by path and writes nothing', async () => {
      const before = (
        await t.request({
          method: 'GET',
          url: '/api/v1/Schedule?PageSize=500',
          headers: { authorization: `Bearer ${ADMIN_KEY}` },
        })
      ).json().Result.length;
      const response = await t.post(
        '/api/v1/Schedule',
        scheduleBody(
          scheduleItem(),
          scheduleItem({ StartTimeZone: 'Mars/Olympus_Mons' }),
          scheduleItem({ Recurrence: { Pattern: 'FREQ=FORTNIGHTLY' } }),
          scheduleItem({
            Recurrence: { Pattern: 'FREQ=DAILY', EndCount: 3, EndTime: '2026-02-01T00:00:00Z' },
          }),
          // An offset is not a zone on any runtime (Node 24's ICU would take it; time-zone.ts refuses it).
          scheduleItem({ StartTimeZone: '+05:00' }),
        ),
      );
      expect(response.statusCode).toBe(400);
      const fields = response.json().Errors.map((error: { Field: string }) => error.Field);
      expect(fields).toContain('ScheduleItems[1].StartTimeZone');
      expect(fields).toContain('ScheduleItems[4].StartTimeZone');
      expect(fields).toContain('ScheduleItems[2].Recurrence.Pattern');
      expect(fields.some((field: string) => field.startsWith('ScheduleItems[3].Recurrence.'))).toBe(true);
      const after = (
        await t.request({
          method: 'GET',
          url: '/api/v1/Schedule?PageSize=500',
          headers: { authorization: `Bearer ${ADMIN_KEY}` },
        })
      ).json().Result.length;
      expect(after).toBe(before);
    });

    it('says when an exception matches no occurrence', async () => {
      const response = await t.post(
        '/api/v1/Schedule',
        scheduleBody(
          scheduleItem({
            Recurrence: {
              Pattern: 'FREQ=WEEKLY;BYDAY=MO',
              Exceptions: [{ OriginalTime: '2026-01-13T08:00:00Z', IsDeleted: true }],
            },
          }),
        ),
      );
      expect(response.statusCode).toBe(201);
      expect(response.json().Message).toContain('ScheduleItems[0].Recurrence.Exceptions[0]');
    });

    it('answers 404 for an unknown id and 400 for a malformed one', async () => {
      const auth = { authorization: `Bearer ${ADMIN_KEY}` };
      const missing = await t.request({
        method: 'GET',
        url: `/api/v1/Schedule/${UNKNOWN_ID}`,
        headers: auth,
      });
      expect(missing.statusCode).toBe(404);
      expect(missing.json()).toMatchObject({ Succeeded: false, Code: 'ScheduleNotFound' });
      const malformed = await t.request({
        method: 'DELETE',
        url: '/api/v1/Schedule/not-a-guid',
        headers: auth,
      });
      expect(malformed.statusCode).toBe(400);
      expect(malformed.json().Errors[0].Field).toBe('id');
    });

    it('pages by creation with PageIndex/PageSize', async () => {
      const fresh = await startTestApp();
      try {
        const ids: string[] = [];
        for (let i = 0; i < 3; i++)
          ids.push((await fresh.post('/api/v1/Schedule', scheduleBody())).json().Result.Id);
        const get = (query: string) =>
          fresh.request({
            method: 'GET',
            url: `/api/v1/Schedule${query}`,
            headers: { authorization: `Bearer ${ADMIN_KEY}` },
          });
        const first = (await get('?PageIndex=1&PageSize=2')).json();
        expect(first).toMatchObject({
          Succeeded: true,
          PageIndex: 1,
          TotalPages: 2,
          HasPreviousPage: false,
          HasNextPage: true,
        });
        expect(first.Result.map((schedule: { Id: string }) => schedule.Id)).toEqual(ids.slice(0, 2));
        const second = (await get('?pageindex=2&pagesize=2')).json();
        expect(second).toMatchObject({
          PageIndex: 2,
          TotalPages: 2,
          HasPreviousPage: true,
          HasNextPage: false,
        });
        expect(second.Result.map((schedule: { Id: string }) => schedule.Id)).toEqual([ids[2]]);
        expect((await get('')).json().Result).toHaveLength(3);
        const bad = await get('?PageSize=501');
        expect(bad.statusCode).toBe(400);
        expect(bad.json().Errors[0].Field).toBe('PageSize');
      } finally {
        await fresh.close();
      }
    });

    // Pages are read from either end of the list (schedule-reader.ts) with a maintained count: every page at every
    // size must be exactly the schedules GET by id returns, in creation order, also after deletions and replaces.
    it('answers every page of every size exactly as GET by id, in creation order, after deletes and replaces', async () => {
      const fresh = await startTestApp();
      try {
        const get = (url: string) =>
          fresh.request({ method: 'GET', url, headers: { authorization: `Bearer ${ADMIN_KEY}` } });
        const bodies = [
          scheduleBody(),
          { ScheduleItems: [] },
          scheduleBody(scheduleItem({ Name: 'a' }), oneOff('2026-02-01T10:00:00Z', '2026-02-01T11:00:00Z')),
          scheduleBody(
            scheduleItem({
              Recurrence: {
                RecurrenceType: 'Weekly',
                Interval: '1',
                Pattern: 'FREQ=WEEKLY;BYDAY=MO',
                Exceptions: [
                  { OriginalTime: '2026-01-12T09:00:00+01:00', IsDeleted: true },
                  {
                    OriginalTime: '2026-01-19T09:00:00+01:00',
                    IsDeleted: false,
                    NewStartTime: '2026-01-20T09:00:00+01:00',
                    NewEndTime: '2026-01-20T09:15:00+01:00',
                  },
                ],
              },
            }),
          ),
        ];
        const ids: string[] = [];
        for (let i = 0; i < 11; i++)
          ids.push((await fresh.post('/api/v1/Schedule', bodies[i % bodies.length])).json().Result.Id);
        for (const gone of [ids[0], ids[5], ids[10]]) {
          expect(
            (
              await fresh.request({
                method: 'DELETE',
                url: `/api/v1/Schedule/${gone}`,
                headers: { authorization: `Bearer ${ADMIN_KEY}` },
              })
            ).statusCode,
          ).toBe(200);
        }
        const replaced = await fresh.request({
          method: 'PUT',
          url: `/api/v1/Schedule/${ids[7]}`,
          headers: { authorization: `Bearer ${ADMIN_KEY}` },
          payload: bodies[2],
        });
        expect(replaced.statusCode).toBe(200);
        const left = ids.filter((_, index) => ![0, 5, 10].includes(index));
        const expected = [];
        for (const id of left) expected.push((await get(`/api/v1/Schedule/${id}`)).json().Result);
        for (const size of [1, 2, 3, 5, 8, 20]) {
          const totalPages = Math.ceil(left.length / size);
          const seen = [];
          for (let index = 1; index <= totalPages + 1; index++) {
            const page = (await get(`/api/v1/Schedule?PageIndex=${index}&PageSize=${size}`)).json();
            expect(page).toMatchObject({
              Succeeded: true,
              PageIndex: index,
              TotalPages: totalPages,
              HasPreviousPage: index > 1,
              HasNextPage: index < totalPages,
            });
            if (index > totalPages) expect(page.Result).toEqual([]);
            seen.push(...page.Result);
          }
          expect(seen).toEqual(expected);
        }
      } finally {
        await fresh.close();
      }
    });

    // Past 100 schedules a PostgreSQL page starts from the position directory's nearest key (built in the
    // background, stale after an insert or delete until rebuilt, at most once a second); SQLite walks from the
    // nearer end. Every walk must give the creation order exactly, before, while and after the directory is current.
    it('pages deep lists exactly while the position directory is missing, current and stale', async () => {
      const fresh = await startTestApp();
      try {
        const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
        const ids: string[] = [];
        for (let i = 0; i < 230; i++) {
          // Two schedules created in one millisecond are ordered by id (docs/schedules.md), not by arrival.
          const before = Date.now();
          while (Date.now() === before) await pause(1);
          ids.push((await fresh.post('/api/v1/Schedule', { ScheduleItems: [] })).json().Result.Id);
        }
        const walk = async (): Promise<string[]> => {
          const seen: string[] = [];
          for (let index = 1; index <= 12; index++) {
            const response = await fresh.request({
              method: 'GET',
              url: `/api/v1/Schedule?PageIndex=${index}&PageSize=20`,
              headers: { authorization: `Bearer ${ADMIN_KEY}` },
            });
            expect(response.statusCode).toBe(200);
            seen.push(...response.json().Result.map((schedule: { Id: string }) => schedule.Id));
          }
          return seen;
        };
        expect(await walk()).toEqual(ids);
        await pause(300);
        expect(await walk()).toEqual(ids);
        const deleted = await fresh.request({
          method: 'DELETE',
          url: `/api/v1/Schedule/${ids[150]}`,
          headers: { authorization: `Bearer ${ADMIN_KEY}` },
        });
        expect(deleted.statusCode).toBe(200);
        const left = ids.filter((_, index) => index !== 150);
        expect(await walk()).toEqual(left);
        await pause(1_200);
        expect(await walk()).toEqual(left);
        await pause(300);
        expect(await walk()).toEqual(left);
      } finally {
        await fresh.close();
      }
    });
  });

  describe('operation 1', () => {
    let weekly: string;
    let longRunning: string;
    beforeAll(async () => {
      // Mon/Wed/Fri 09:00–09:15 Berlin; 2026-03-16 is a Monday (08:00Z, CET).
      weekly = await create(
        scheduleBody(
          scheduleItem({
            Recurrence: {
              Pattern: 'FREQ=WEEKLY;BYDAY=MO,WE,FR',
              Exceptions: [
                { OriginalTime: '2026-03-18T08:00:00Z', IsDeleted: true },
                {
                  OriginalTime: '2026-03-20T08:00:00Z',
                  NewStartTime: '2026-03-21T12:00:00Z',
                  NewEndTime: '2026-03-21T12:30:00Z',
                },
              ],
            },
          }),
        ),
      );
      longRunning = await create(scheduleBody(oneOff('2026-03-01T00:00:00Z', '2026-04-01T00:00:00Z')));
    });

    it('answers per group, true iff an occurrence overlaps the window', async () => {
      const response = await byGroup({
        Groups: [
          { Key: 'hit', ScheduleIds: [weekly] },
          { Key: 'miss', ScheduleIds: [weekly] },
          { Key: 'empty', ScheduleIds: [] },
        ],
        Start: '2026-03-16T08:05:00Z',
        End: '2026-03-16T08:06:00Z',
      });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({
        Succeeded: true,
        Message: null,
        Code: null,
        Groups: { hit: true, miss: true, empty: false },
      });
      expect(await has([weekly], '2026-03-16T08:15:00Z', '2026-03-16T09:00:00Z')).toBe(false);
    });

    it('counts an occurrence that began before the window and is still running', async () => {
      expect(await has([longRunning], '2026-03-15T00:00:00Z', '2026-03-15T01:00:00Z')).toBe(true);
      expect(await has([longRunning], '2026-04-01T00:00:00Z', '2026-04-02T00:00:00Z')).toBe(false);
    });

    it('applies deleted and moved exceptions', async () => {
      expect(await has([weekly], '2026-03-18T08:00:00Z', '2026-03-18T08:15:00Z')).toBe(false);
      expect(await has([weekly], '2026-03-20T08:00:00Z', '2026-03-20T08:15:00Z')).toBe(false);
      expect(await has([weekly], '2026-03-21T12:10:00Z', '2026-03-21T12:11:00Z')).toBe(true);
    });

    it('jumps to a far window', async () => {
      expect(await has([weekly], '2126-03-15T08:00:00Z', '2126-03-15T08:10:00Z')).toBe(true);
      expect(await has([weekly], '2126-03-14T08:00:00Z', '2126-03-14T08:10:00Z')).toBe(false);
    });

    it('names unknown ids with Code UnknownSchedules while Succeeded stays true', async () => {
      const response = await byGroup({
        Groups: [{ Key: 'g', ScheduleIds: [UNKNOWN_ID, weekly] }],
        Start: '2026-03-16T08:00:00Z',
        End: '2026-03-16T08:10:00Z',
      });
      expect(response.json()).toMatchObject({
        Succeeded: true,
        Code: 'UnknownSchedules',
        Groups: { g: true },
      });
      expect(response.json().Message).toContain(UNKNOWN_ID);
    });

    it('refuses an impossible calendar date in the window, as POST /Schedule does (not read as March 2)', async () => {
      const grouped = await byGroup({
        Groups: [{ Key: 'g', ScheduleIds: [weekly] }],
        Start: '2025-02-30T00:00:00Z',
        End: '2025-03-31',
      });
      expect(grouped.statusCode).toBe(400);
      expect(grouped.json().Errors).toEqual([
        { Field: 'Start', Message: 'Start must be an ISO 8601 date-time' },
      ]);
      const listed = await t.request({
        method: 'GET',
        url: `/api/v1/Occurrence?ScheduleIds=${weekly}&Start=2026-01-01&End=2026-02-29T00:00:00Z`,
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      });
      expect(listed.statusCode).toBe(400);
      expect(listed.json().Errors[0].Field).toBe('End');
    });

    it('accepts camelCase property names', async () => {
      const response = await byGroup({
        groups: [{ key: 'g', scheduleIds: [weekly] }],
        start: '2026-03-16T08:00:00Z',
        end: '2026-03-16T08:10:00Z',
      });
      expect(response.json().Groups).toEqual({ g: true });
    });

    it.each([
      [{ Groups: [], Start: '2026-01-01T00:00:00Z', End: '2026-01-02T00:00:00Z' }, 'Groups'],
      [{ Start: '2026-01-01T00:00:00Z', End: '2026-01-02T00:00:00Z' }, 'Groups'],
      [{ Groups: [{ Key: 'a', ScheduleIds: [] }], Start: '', End: '2026-01-02T00:00:00Z' }, 'Start'],
      [
        {
          Groups: [{ Key: 'a', ScheduleIds: [] }],
          Start: '2026-01-02T00:00:00Z',
          End: '2026-01-02T00:00:00Z',
        },
        'End',
      ],
      [
        { Groups: [{ Key: 'a' }, { Key: 'a' }], Start: '2026-01-01T00:00:00Z', End: '2026-01-02T00:00:00Z' },
        'Groups[1].Key',
      ],
      [
        {
          Groups: [{ Key: '', ScheduleIds: [] }],
          Start: '2026-01-01T00:00:00Z',
          End: '2026-01-02T00:00:00Z',
        },
        'Groups[0].Key',
      ],
      [
        {
          Groups: [{ Key: 'a', ScheduleIds: ['x'] }],
          Start: '2026-01-01T00:00:00Z',
          End: '2026-01-02T00:00:00Z',
        },
        'Groups[0].ScheduleIds[0]',
      ],
      [
        { Groups: [{ Key: 'a', Extra: 1 }], Start: '2026-01-01T00:00:00Z', End: '2026-01-02T00:00:00Z' },
        'Groups[0].Extra',
      ],
      [
        { Groups: [{ Key: 'a' }], Start: '2026-01-01T00:00:00Z', End: '2026-01-02T00:00:00Z', Other: true },
        'Other',
      ],
    ])('rejects %j naming %s', async (body, field) => {
      const response = await byGroup(body);
      expect(response.statusCode).toBe(400);
      expect(response.json().Code).toBe('ValidationFailed');
      expect(response.json().Errors.map((error: { Field: string }) => error.Field)).toContain(field);
    });

    it('follows a schedule change and deletion', async () => {
      const id = await create(scheduleBody(oneOff('2026-05-01T10:00:00Z', '2026-05-01T11:00:00Z')));
      expect(await has([id], '2026-05-01T10:30:00Z', '2026-05-01T10:31:00Z')).toBe(true);
      const put = await t.request({
        method: 'PUT',
        url: `/api/v1/Schedule/${id}`,
        headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
        payload: JSON.stringify(scheduleBody(oneOff('2026-06-01T10:00:00Z', '2026-06-01T11:00:00Z'))),
      });
      expect(put.statusCode).toBe(200);
      expect(await has([id], '2026-05-01T10:30:00Z', '2026-05-01T10:31:00Z')).toBe(false);
      expect(await has([id], '2026-06-01T10:30:00Z', '2026-06-01T10:31:00Z')).toBe(true);
      const deleted = await t.request({
        method: 'DELETE',
        url: `/api/v1/Schedule/${id}`,
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      });
      expect(deleted.json()).toEqual({ Succeeded: true, Message: null, Code: null });
      const after = await byGroup({
        Groups: [{ Key: 'g', ScheduleIds: [id] }],
        Start: '2026-06-01T10:30:00Z',
        End: '2026-06-01T10:31:00Z',
      });
      expect(after.json()).toMatchObject({ Code: 'UnknownSchedules', Groups: { g: false } });
    });

    it('sees a change made through another instance on the same database', async () => {
      const other = await startTestApp({ database: t.database });
      try {
        const id = await create(scheduleBody(oneOff('2026-07-01T10:00:00Z', '2026-07-01T11:00:00Z')));
        expect(await has([id], '2026-07-01T10:00:00Z', '2026-07-01T10:01:00Z')).toBe(true);
        await other.request({
          method: 'PUT',
          url: `/api/v1/Schedule/${id}`,
          headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
          payload: JSON.stringify(scheduleBody(oneOff('2026-08-01T10:00:00Z', '2026-08-01T11:00:00Z'))),
        });
        expect(await has([id], '2026-07-01T10:00:00Z', '2026-07-01T10:01:00Z')).toBe(false);
      } finally {
        await other.close();
      }
    });
  });

  describe('occurrence listing', () => {
    it('lists overlapping occurrences in UTC, ordered by Start, with IsMoved', async () => {
      const id = await create(
        scheduleBody(
          scheduleItem({
            StartTimeZone: 'W. Europe Standard Time',
            Recurrence: {
              Pattern: 'FREQ=DAILY;COUNT=3',
              Exceptions: [
                {
                  OriginalTime: '2026-01-06T08:00:00Z',
                  NewStartTime: '2026-01-06T06:00:00Z',
                  NewEndTime: '2026-01-06T06:15:00Z',
                },
              ],
            },
          }),
        ),
      );
      const response = await t.request({
        method: 'GET',
        url: `/api/v1/Occurrence?ScheduleIds=${id},${UNKNOWN_ID}&Start=2026-01-01T00:00:00Z&End=2026-02-01T00:00:00Z`,
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      });
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(body.Code).toBe('UnknownSchedules');
      expect(body.Result.map((o: { Start: string; IsMoved: boolean }) => [o.Start, o.IsMoved])).toEqual([
        ['2026-01-05T08:00:00.000Z', false],
        ['2026-01-06T06:00:00.000Z', true],
        ['2026-01-07T08:00:00.000Z', false],
      ]);
      expect(body.Result[0]).toEqual({
        ScheduleId: id,
        ScheduleItemId: expect.any(String),
        Start: '2026-01-05T08:00:00.000Z',
        End: '2026-01-05T08:15:00.000Z',
        IsMoved: false,
        AllDay: false, // Date/EndDate only on all-day occurrences
      });
    });

    it('honours RecurrenceDates (RDATE) and ExceptionDates (EXDATE), kept as sent', async () => {
      const recurrence = {
        Pattern: 'FREQ=DAILY;COUNT=3',
        RecurrenceDates: ['2026-01-20T09:00:00', '2026-01-21T08:00:00Z'],
        ExceptionDates: ['2026-01-06T09:00:00', '2026-01-21T08:00:00Z'],
      };
      const created = await t.post(
        '/api/v1/Schedule',
        scheduleBody(scheduleItem({ StartTimeZone: 'Europe/Berlin', Recurrence: recurrence })),
      );
      expect(created.statusCode).toBe(201);
      const id = created.json().Result.Id as string;
      expect(created.json().Result.ScheduleItems[0].Recurrence).toMatchObject({
        RecurrenceDates: recurrence.RecurrenceDates,
        ExceptionDates: recurrence.ExceptionDates,
      });
      const fetched = await t.request({
        method: 'GET',
        url: `/api/v1/Schedule/${id}`,
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      });
      expect(fetched.json().Result).toEqual(created.json().Result);
      const listed = await t.request({
        method: 'GET',
        url: `/api/v1/Occurrence?ScheduleIds=${id}&Start=2026-01-01T00:00:00Z&End=2026-02-01T00:00:00Z`,
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      });
      expect(listed.json().Result.map((o: { Start: string }) => o.Start)).toEqual([
        '2026-01-05T08:00:00.000Z',
        '2026-01-07T08:00:00.000Z',
        '2026-01-20T08:00:00.000Z',
      ]);
      expect(await has([id], '2026-01-20T08:05:00Z', '2026-01-20T08:06:00Z')).toBe(true);
      expect(await has([id], '2026-01-06T07:00:00Z', '2026-01-06T10:00:00Z')).toBe(false);
      expect(await has([id], '2026-01-21T07:00:00Z', '2026-01-21T10:00:00Z')).toBe(false);
    });

    it('names a bad RecurrenceDates or ExceptionDates entry by index', async () => {
      const fieldsOf = async (recurrence: Record<string, unknown>) => {
        const response = await t.post(
          '/api/v1/Schedule',
          scheduleBody(scheduleItem({ Recurrence: { Pattern: 'FREQ=DAILY', ...recurrence } })),
        );
        expect(response.statusCode).toBe(400);
        return response.json().Errors.map((error: { Field: string }) => error.Field) as string[];
      };
      expect(await fieldsOf({ RecurrenceDates: ['2026-01-20T09:00:00', 'soon'] })).toEqual([
        'ScheduleItems[0].Recurrence.RecurrenceDates[1]',
      ]);
      expect(await fieldsOf({ ExceptionDates: [42] })).toEqual([
        'ScheduleItems[0].Recurrence.ExceptionDates[0]',
      ]);
    });

    it('refuses a window with more than 10,000 occurrences', async () => {
      const id = await create(scheduleBody(scheduleItem({ Recurrence: { Pattern: 'FREQ=MINUTELY' } })));
      const response = await t.request({
        method: 'GET',
        url: `/api/v1/Occurrence?ScheduleIds=${id}&Start=2026-02-01T00:00:00Z&End=2026-03-01T00:00:00Z`,
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      });
      expect(response.statusCode).toBe(400);
      expect(response.json().Code).toBe('TooManyOccurrences');
    });
  });

  describe('access', () => {
    it('keeps operation 1 public by default and the rest behind the schedules scope', async () => {
      expect(
        (
          await byGroup({
            Groups: [{ Key: 'a' }],
            Start: '2026-01-01T00:00:00Z',
            End: '2026-01-02T00:00:00Z',
          })
        ).statusCode,
      ).toBe(200);
      expect((await t.request({ method: 'GET', url: '/api/v1/Schedule' })).statusCode).toBe(401);
    });

    it('requires a key for operation 1 when PUBLIC_OCCURRENCES=false', async () => {
      const closed = await startTestApp({ env: { PUBLIC_OCCURRENCES: 'false' } });
      try {
        const body = JSON.stringify({
          Groups: [{ Key: 'a' }],
          Start: '2026-01-01T00:00:00Z',
          End: '2026-01-02T00:00:00Z',
        });
        const anonymous = await closed.request({
          method: 'POST',
          url: BY_GROUP,
          headers: { 'content-type': 'application/json' },
          payload: body,
        });
        expect(anonymous.statusCode).toBe(401);
        const keyed = await closed.request({
          method: 'POST',
          url: BY_GROUP,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_KEY}` },
          payload: body,
        });
        expect(keyed.statusCode).toBe(200);
      } finally {
        await closed.close();
      }
    });

    it('documents operation 1 with an optional key (PUBLIC_OCCURRENCES)', async () => {
      const document = (await t.request({ method: 'GET', url: '/docs-json' })).json();
      const op = document.paths['/api/v1/Occurrence/hasOccurrences/byGroup'].post;
      expect(op.operationId).toBe('Occurrence_HasOccurrencesGrouped');
      expect(op.tags).toEqual(['Occurrence']);
      // The key or nothing: {} is the OpenAPI way to say "no credentials also satisfies the requirement".
      expect(op.security).toEqual([{ bearer: [] }, {}]);
      expect(document.paths['/api/v1/Schedule'].get.security).toEqual([{ bearer: [] }]);
    });
  });
});

describe('operation 1 limits', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  const ids = (count: number) =>
    Array.from({ length: count }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
  const post = (body: unknown) =>
    t.request({
      method: 'POST',
      url: BY_GROUP,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });

  it('takes 50,000 ids in one request (larger than the default body limit)', async () => {
    const groups = Array.from({ length: 10 }, (_, g) => ({
      Key: `g${g}`,
      ScheduleIds: ids(50_000).slice(g * 5000, (g + 1) * 5000),
    }));
    const response = await post({
      Groups: groups,
      Start: '2026-01-01T00:00:00Z',
      End: '2026-01-02T00:00:00Z',
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ Succeeded: true, Code: 'UnknownSchedules' });
    expect(Object.values(response.json().Groups)).toEqual(Array(10).fill(false));
  });

  it('refuses more than 50,000 ids and more than 1,000 groups', async () => {
    const tooMany = await post({
      Groups: [
        { Key: 'a', ScheduleIds: ids(30_000) },
        { Key: 'b', ScheduleIds: ids(20_001) },
      ],
      Start: '2026-01-01T00:00:00Z',
      End: '2026-01-02T00:00:00Z',
    });
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json().Errors[0].Field).toBe('Groups');
    const groups = await post({
      Groups: Array.from({ length: 1001 }, (_, i) => ({ Key: `k${i}` })),
      Start: '2026-01-01T00:00:00Z',
      End: '2026-01-02T00:00:00Z',
    });
    expect(groups.statusCode).toBe(400);
    expect(groups.json().Errors.map((error: { Field: string }) => error.Field)).toContain('Groups');
  });
});
