// iCalendar import, what lenient readers take, on the real app and database: a feed of several
// concatenated VCALENDARs (Mozilla's Austrian holiday calendar), VTIMEZONE observances written as lists of onsets,
// and malformed lines of properties the service does not store (left out and listed in `Skipped`, the event kept).
// Fixtures and their sources: test/fixtures/ical/SOURCES.md.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expandWithIcalJs } from './support/ical-import-oracle.js';
import { ADMIN_KEY, startTestApp, type TestApp } from './support/test-app.js';

const AUTH = { authorization: `Bearer ${ADMIN_KEY}` };
const FIXTURES = new URL('./fixtures/ical/', import.meta.url);
const fixture = (name: string) => readFileSync(new URL(name, FIXTURES), 'utf8');
const iso = (list: Array<{ start: number; end: number }>) =>
  list.map(({ start, end }) => `${new Date(start).toISOString()} – ${new Date(end).toISOString()}`);

interface Answer {
  Schedules: Array<{ Id: string; Uid: string; Status: 'Created' | 'Updated' }>;
  Skipped: Array<{ Line: number; Component: string; Uid: string | null; Reason: string }>;
}

describe('iCalendar import: what lenient readers take', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  async function importIcal(
    body: string,
  ): Promise<{ status: number; body: Answer & Record<string, unknown> }> {
    const response = await t.request({
      method: 'POST',
      url: '/api/v1/Schedule/import',
      headers: { ...AUTH, 'content-type': 'text/calendar; charset=utf-8' },
      payload: body,
    });
    return { status: response.statusCode, body: response.json() };
  }

  async function listed(ids: string[], from: number, until: number) {
    const occurrences: Array<{ start: number; end: number }> = [];
    // The listing takes up to 100 schedule ids at a time.
    for (let at = 0; at < ids.length; at += 100) {
      const response = await t.request({
        method: 'GET',
        url:
          `/api/v1/Occurrence?ScheduleIds=${ids.slice(at, at + 100).join(',')}` +
          `&Start=${new Date(from).toISOString()}&End=${new Date(until).toISOString()}`,
        headers: AUTH,
      });
      expect(response.statusCode).toBe(200);
      for (const { Start, End } of response.json().Result as Array<{ Start: string; End: string }>) {
        occurrences.push({ start: Date.parse(Start), end: Date.parse(End) });
      }
    }
    return occurrences.sort((a, b) => a.start - b.start || a.end - b.end);
  }

  it('mozilla-holidays-concatenated-vcalendars.ics: the events of all 32 VCALENDARs, as ical.js reads each', async () => {
    const text = fixture('mozilla-holidays-concatenated-vcalendars.ics');
    const { status, body } = await importIcal(text);
    expect(status).toBe(201);
    // One event pairs an all-day DTSTART with a UTC date-time DTEND (`20020106T235900Z`): imported all-day (the
    // day DTEND falls on ends it), the lenient reading reported.
    const lenient = '981687214';
    expect(body.Skipped).toEqual([
      {
        Line: 1273,
        Component: 'DTEND',
        Uid: lenient,
        Reason:
          'line 1273: DTEND: a date-time where DTSTART is a date (RFC 5545 §3.8.2.2: the same value type): read as ' +
          'DTEND;VALUE=DATE:20020107, the end of the day it falls on; the event is imported all-day',
      },
    ]);
    const uids = new Set([...text.matchAll(/\r\nUID\r\n :([^\r]+)/g)].map((match) => match[1]));
    expect(body.Schedules).toHaveLength(uids.size);
    expect(new Set(body.Schedules.map((schedule) => schedule.Uid))).toEqual(uids);
    // ical.js reads one VCALENDAR at a time: each is expanded on its own and the occurrences put together.
    const from = Date.parse('2001-01-01T00:00:00Z');
    const until = Date.parse('2016-01-01T00:00:00Z');
    const calendars = text.match(/BEGIN:VCALENDAR[\s\S]*?END:VCALENDAR\r\n/g) ?? [];
    expect(calendars).toHaveLength(32);
    // ical.js gives that event DTEND − DTSTART as a duration (23 h 59 min); here it is the whole day, every 6 January.
    const wholeDays = Array.from({ length: 14 }, (_, i) => ({
      start: Date.UTC(2002 + i, 0, 6),
      end: Date.UTC(2002 + i, 0, 7),
    }));
    const expected = calendars
      .filter((calendar) => !calendar.includes(` :${lenient}\r\n`))
      .flatMap((calendar) => expandWithIcalJs(calendar, until))
      .concat(wholeDays)
      .filter((occurrence) => occurrence.end > from)
      .sort((a, b) => a.start - b.start || a.end - b.end);
    const actual = await listed(
      body.Schedules.map((schedule) => schedule.Id),
      from,
      until,
    );
    expect(actual.length).toBeGreaterThan(80);
    expect(iso(actual)).toEqual(iso(expected));
    // A re-import of the feed updates the same schedules.
    const again = await importIcal(text);
    expect(again.status).toBe(201);
    expect(again.body.Schedules.map((s) => [s.Id, s.Status])).toEqual(
      body.Schedules.map((s) => [s.Id, 'Updated']),
    );
  });

  it('python-icalendar’s timezone_rdate.ics: observances as DTSTART + RDATE onsets, a malformed `SUMMARY=` left out', async () => {
    const text = fixture('python-icalendar-rdate-observances-bad-summary.ics');
    const { status, body } = await importIcal(text);
    expect(status).toBe(201);
    expect(body.Skipped).toEqual([
      {
        Line: 53,
        Component: 'SUMMARY',
        Uid: '123',
        Reason: expect.stringMatching(/^line 53: SUMMARY: .*left out, the VEVENT is imported without it$/),
      },
    ]);
    const stored = await t.request({
      method: 'GET',
      url: `/api/v1/Schedule/${body.Schedules[0].Id}`,
      headers: AUTH,
    });
    expect(stored.json().Result.ScheduleItems).toMatchObject([
      { Name: null, Start: '2012-02-13T10:00:00+01:00', StartTimeZone: 'Europe/Vaduz' },
    ]);
  });

  it('a VTIMEZONE under an unknown name whose observances list their onsets: offsets follow the listed dates', async () => {
    // The shape of iCalcreator's and tzurl's zones (DTSTART and `RDATE:d1,d2`, no RRULE) under a name no zone
    // database knows, so the file's own onsets decide (no real file of this kind was found; see SOURCES.md).
    const zone = [
      'BEGIN:VTIMEZONE',
      'TZID:Club time',
      'BEGIN:STANDARD',
      'DTSTART:20251026T030000',
      'TZOFFSETFROM:+0200',
      'TZOFFSETTO:+0100',
      'RDATE:20261025T030000,20271031T030000',
      'END:STANDARD',
      'BEGIN:DAYLIGHT',
      'DTSTART:20250330T020000',
      'TZOFFSETFROM:+0100',
      'TZOFFSETTO:+0200',
      'RDATE:20260329T020000,20270328T020000',
      'END:DAYLIGHT',
      'END:VTIMEZONE',
    ];
    const body = [
      'BEGIN:VCALENDAR',
      'VERSION:2.0',
      'PRODID:-//test//EN',
      ...zone,
      'BEGIN:VEVENT',
      'UID:club-weekly@test',
      'DTSTART;TZID=Club time:20260322T190000',
      'DTEND;TZID=Club time:20260322T210000',
      'RRULE:FREQ=WEEKLY;COUNT=3',
      'END:VEVENT',
      'END:VCALENDAR',
      '',
    ].join('\r\n');
    const { status, body: answer } = await importIcal(body);
    expect(status).toBe(201);
    expect(answer.Skipped).toEqual([]);
    const occurrences = await listed(
      [answer.Schedules[0].Id],
      Date.parse('2026-03-01T00:00:00Z'),
      Date.parse('2026-05-01T00:00:00Z'),
    );
    // 19:00 local: +01:00 before the listed 29 March 2026 onset, +02:00 after it.
    expect(occurrences.map(({ start }) => new Date(start).toISOString())).toEqual([
      '2026-03-22T18:00:00.000Z',
      '2026-03-29T17:00:00.000Z',
      '2026-04-05T17:00:00.000Z',
    ]);
  });

  it('a feed with a stray iTIP cancellation among its VCALENDARs: that one is left out and listed, the rest imported', async () => {
    const calendar = (...lines: string[]) => [
      'BEGIN:VCALENDAR',
      'VERSION:2.0',
      'PRODID:-//test//EN',
      ...lines,
      'END:VCALENDAR',
    ];
    const event = (uid: string, start: string) => [
      'BEGIN:VEVENT',
      `UID:${uid}`,
      `DTSTART:${start}`,
      'END:VEVENT',
    ];
    const body = [
      ...calendar(...event('feed-a@test', '20260105T090000Z')),
      ...calendar('METHOD:CANCEL', ...event('feed-a@test', '20260105T090000Z')),
      ...calendar(...event('feed-b@test', '20260106T090000Z')),
      '',
    ].join('\r\n');
    const { status, body: answer } = await importIcal(body);
    expect(status).toBe(201);
    expect(answer.Schedules.map((schedule) => [schedule.Uid, schedule.Status])).toEqual([
      ['feed-a@test', 'Created'],
      ['feed-b@test', 'Created'],
    ]);
    expect(answer.Skipped).toEqual([
      {
        Line: 9,
        Component: 'VCALENDAR',
        Uid: null,
        Reason: expect.stringMatching(/^line 12: METHOD: METHOD:CANCEL is a scheduling message about events/),
      },
    ]);
    // Alone, the cancellation is still refused.
    const alone = await importIcal(
      [...calendar('METHOD:CANCEL', ...event('feed-a@test', '20260105T090000Z')), ''].join('\r\n'),
    );
    expect(alone.status).toBe(400);
  });
});
