// iCalendar import of real producers' calendars the service once refused or misread, on the real app and database:
// Lotus Notes' `RDATE;VALUE=PERIOD`, Mozilla Calendar 1.x's floating DTEND beside a zoned DTSTART, RFC 5545's own
// `METHOD:xyz`, Google's all-day `DURATION:PT86400S` and a conference feed giving parallel talks one UID. Fixtures and
// their sources: test/fixtures/ical/SOURCES.md.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN_KEY, startTestApp, type TestApp } from './support/test-app.js';

const AUTH = { authorization: `Bearer ${ADMIN_KEY}` };
const FIXTURES = new URL('./fixtures/ical/', import.meta.url);
const fixture = (name: string) => readFileSync(new URL(name, FIXTURES), 'utf8');

interface Answer {
  Schedules: Array<{ Id: string; Uid: string; Status: 'Created' | 'Updated' }>;
  Skipped: Array<{ Line: number; Component: string; Uid: string | null; Reason: string }>;
}

describe('iCalendar import: real producers’ calendars', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  async function importIcal(body: string): Promise<Answer> {
    const response = await t.request({
      method: 'POST',
      url: '/api/v1/Schedule/import',
      headers: { ...AUTH, 'content-type': 'text/calendar; charset=utf-8' },
      payload: body,
    });
    expect([response.statusCode, response.body]).toEqual([201, expect.any(String)]);
    return response.json<Answer>();
  }

  /** Each occurrence as `start/end` in UTC, over the schedules given. */
  async function listed(ids: string[], from: string, until: string): Promise<string[]> {
    const response = await t.request({
      method: 'GET',
      url: `/api/v1/Occurrence?ScheduleIds=${ids.join(',')}&Start=${from}&End=${until}`,
      headers: AUTH,
    });
    expect(response.statusCode).toBe(200);
    return (response.json().Result as Array<{ Start: string; End: string }>).map(
      ({ Start, End }) => `${new Date(Start).toISOString()}/${new Date(End).toISOString()}`,
    );
  }

  it('lotus-notes-rdate-period.ics: each period is an occurrence, the 2-hour one keeps its length', async () => {
    const answer = await importIcal(fixture('lotus-notes-rdate-period.ics'));
    expect(answer.Skipped).toEqual([]);
    expect(answer.Schedules).toHaveLength(1);
    expect(await listed([answer.Schedules[0].Id], '2021-06-01T00:00:00Z', '2022-01-01T00:00:00Z')).toEqual([
      '2021-06-30T10:00:00.000Z/2021-06-30T11:00:00.000Z',
      '2021-08-25T10:00:00.000Z/2021-08-25T11:00:00.000Z',
      '2021-10-27T10:00:00.000Z/2021-10-27T11:00:00.000Z',
      '2021-12-15T11:00:00.000Z/2021-12-15T13:00:00.000Z',
    ]);
    // Its export imports back onto the same schedule with the same occurrences.
    const id = answer.Schedules[0].Id;
    const exported = await t.request({ method: 'GET', url: `/api/v1/Schedule/${id}/ical`, headers: AUTH });
    expect(exported.statusCode).toBe(200);
    const again = await importIcal(exported.body);
    expect(again.Schedules.map((schedule) => [schedule.Id, schedule.Status])).toEqual([[id, 'Updated']]);
    expect(await listed([id], '2021-06-01T00:00:00Z', '2022-01-01T00:00:00Z')).toEqual([
      '2021-06-30T10:00:00.000Z/2021-06-30T11:00:00.000Z',
      '2021-08-25T10:00:00.000Z/2021-08-25T11:00:00.000Z',
      '2021-10-27T10:00:00.000Z/2021-10-27T11:00:00.000Z',
      '2021-12-15T11:00:00.000Z/2021-12-15T13:00:00.000Z',
    ]);
  });

  it('mozilla-calendar1-floating-dtend.ics: the floating DTEND is read in DTSTART’s zone and reported', async () => {
    const answer = await importIcal(fixture('mozilla-calendar1-floating-dtend.ics'));
    expect(answer.Skipped).toEqual([
      {
        Line: 30,
        Component: 'DTEND',
        Uid: 'uuid1153170430406',
        Reason: expect.stringMatching(
          /^line 30: DTEND: a floating time beside a DTSTART with TZID .* read as 2006-07-18 10:00:00 in DTSTART's zone America\/New_York/,
        ),
      },
    ]);
    // 09:00 → 10:00 New York time (EDT, UTC−4), four Tuesdays.
    expect(await listed([answer.Schedules[0].Id], '2006-07-01T00:00:00Z', '2006-09-01T00:00:00Z')).toEqual([
      '2006-07-18T13:00:00.000Z/2006-07-18T14:00:00.000Z',
      '2006-07-25T13:00:00.000Z/2006-07-25T14:00:00.000Z',
      '2006-08-01T13:00:00.000Z/2006-08-01T14:00:00.000Z',
      '2006-08-08T13:00:00.000Z/2006-08-08T14:00:00.000Z',
    ]);
  });

  it('rfc5545-example3-method-xyz.ics: a METHOD iTIP does not define is a calendar', async () => {
    const answer = await importIcal(fixture('rfc5545-example3-method-xyz.ics'));
    expect(answer.Skipped).toEqual([]);
    expect(answer.Schedules).toEqual([
      { Id: expect.any(String), Uid: 'uid3@example.com', Line: 5, Status: 'Created' },
    ]);
    expect(await listed([answer.Schedules[0].Id], '1997-03-01T00:00:00Z', '1997-04-01T00:00:00Z')).toEqual([
      '1997-03-24T12:30:00.000Z/1997-03-24T21:00:00.000Z',
    ]);
  });

  it('google-allday-duration-seconds.ics: DURATION:PT86400S on a date is one whole day', async () => {
    const answer = await importIcal(fixture('google-allday-duration-seconds.ics'));
    expect(answer.Skipped).toEqual([]);
    const ids = answer.Schedules.map((schedule) => schedule.Id);
    const schedule = await t.request({ method: 'GET', url: `/api/v1/Schedule/${ids[0]}`, headers: AUTH });
    expect(schedule.json().Result.ScheduleItems[0]).toMatchObject({ AllDay: true });
    // Whole local days in Europe/Berlin (the calendar's X-WR-TIMEZONE).
    // Sorted: two occurrences start together, and the listing does not order schedules among themselves.
    expect((await listed(ids, '2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z')).sort()).toEqual([
      '2026-01-04T23:00:00.000Z/2026-01-05T23:00:00.000Z',
      '2026-01-11T23:00:00.000Z/2026-01-12T23:00:00.000Z',
      '2026-01-11T23:00:00.000Z/2026-01-14T23:00:00.000Z',
      '2026-01-18T23:00:00.000Z/2026-01-19T23:00:00.000Z',
    ]);
  });

  it('conference-feed-shared-uid.ics: parallel talks are series of their own, reported; importing again updates them', async () => {
    const text = fixture('conference-feed-shared-uid.ics');
    const first = await importIcal(text);
    expect(first.Schedules.map((schedule) => schedule.Status)).toEqual(Array(5).fill('Created'));
    expect(first.Skipped.map((skipped) => [skipped.Line, skipped.Component])).toEqual([
      [24, 'VEVENT'],
      [32, 'VEVENT'],
    ]);
    expect(first.Skipped[0].Reason).toMatch(/a parallel event, imported as a series of its own$/);
    const again = await importIcal(text);
    expect(again.Schedules.map((schedule) => [schedule.Id, schedule.Status])).toEqual(
      first.Schedules.map((schedule) => [schedule.Id, 'Updated']),
    );
  });
});
