// iCalendar import on the real app and database: real-world files written by Google Calendar,
// Outlook/Exchange and Apple Calendar (test/fixtures/ical/SOURCES.md) are imported, and the service's occurrence
// listing over several years is compared with ical.js's own expansion of the same file. Components the service
// cannot represent or that are broken are skipped and listed in `Skipped`; a calendar with nothing
// importable left gets a 400 naming the lines.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expandWithIcalJs } from './support/ical-import-oracle.js';
import { ADMIN_KEY, startTestApp, type TestApp } from './support/test-app.js';

const FIXTURES = new URL('./fixtures/ical/', import.meta.url);
const IMPORT = '/api/v1/Schedule/import';
const YEAR_MS = 365.25 * 86_400_000;

function fixture(name: string): string {
  return readFileSync(new URL(name, FIXTURES), 'utf8');
}

/** A small calendar around the given VEVENT lines (CRLF, as RFC 5545 writes it). */
function calendar(...lines: string[]): string {
  return ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//test//EN', ...lines, 'END:VCALENDAR', ''].join('\r\n');
}

describe('POST /api/v1/Schedule/import (text/calendar)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  const postIcal = (body: string | Buffer, contentType = 'text/calendar; charset=utf-8') =>
    t.request({
      method: 'POST',
      url: IMPORT,
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': contentType },
      payload: body,
    });

  /**
   * POST, and on a 201 the calendar as one view: `Result` holds the items of every schedule the import made (one per
   * series, read back with GET) and `Id` their ids comma-separated, as the occurrence listing takes them; the
   * answer's own `Result` (the first series' schedule) is kept as `First`.
   */
  async function importIcal(body: string | Buffer, contentType?: string) {
    const response = await postIcal(body, contentType);
    if (response.statusCode !== 201) return response;
    const answer = response.json();
    const items: unknown[] = [];
    for (const { Id } of answer.Schedules as Array<{ Id: string }>) {
      const stored = await t.request({
        method: 'GET',
        url: `/api/v1/Schedule/${Id}`,
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      });
      expect(stored.statusCode).toBe(200);
      items.push(...(stored.json().Result.ScheduleItems as unknown[]));
    }
    const whole = {
      ...answer,
      Result: {
        Id: (answer.Schedules as Array<{ Id: string }>).map(({ Id }) => Id).join(','),
        ScheduleItems: items,
      },
      First: answer.Result,
    };
    return Object.assign(response, { json: () => whole });
  }

  /** Every occurrence the service lists for the schedule that starts before `until`, sorted. */
  async function listed(
    id: string,
    from: number,
    until: number,
  ): Promise<Array<{ start: number; end: number }>> {
    const response = await t.request({
      method: 'GET',
      url: `/api/v1/Occurrence?ScheduleIds=${id}&Start=${new Date(from).toISOString()}&End=${new Date(until).toISOString()}`,
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(response.statusCode).toBe(200);
    return (response.json().Result as Array<{ Start: string; End: string }>)
      .map((occurrence) => ({ start: Date.parse(occurrence.Start), end: Date.parse(occurrence.End) }))
      .sort((a, b) => a.start - b.start || a.end - b.end);
  }

  /**
   * Imports the file, then compares the listing from before its first event to `years` later with ical.js's
   * expansion of `oracleText` (the same file with a vendor quirk ical.js cannot parse written as RFC 5545 has it).
   */
  async function compareWithIcalJs(text: string, years: number, oracleText = text): Promise<number> {
    const response = await importIcal(text);
    expect({ status: response.statusCode, body: response.json() }).toMatchObject({ status: 201 });
    const body = response.json();
    expect(body).toMatchObject({ Succeeded: true, Code: null });
    const starts = (body.Result.ScheduleItems as Array<{ Start: string }>).map((item) =>
      Date.parse(item.Start),
    );
    const from = Math.min(...starts) - 400 * 86_400_000;
    const until = Math.min(...starts) + years * YEAR_MS;
    const expected = expandWithIcalJs(oracleText, until).filter((occurrence) => occurrence.end > from);
    const actual = await listed(body.Result.Id as string, from, until);
    const iso = (list: Array<{ start: number; end: number }>) =>
      list.map(({ start, end }) => `${new Date(start).toISOString()} – ${new Date(end).toISOString()}`);
    expect(iso(actual)).toEqual(iso(expected));
    return actual.length;
  }

  describe('real-world files agree with ical.js over several years', () => {
    it.each([
      ['google-monthly-lastfri-moved-override.ics', 6],
      ['google-weekly-until-allday-overrides.ics', 3],
      ['google-weekly-exdate-lines-utc.ics', 4],
      ['google-yearly-exdate-override-valarm.ics', 10],
      ['outlook-exchange-customized-tzid-weekly.ics', 3],
      ['apple-allday-yearly-holidays.ics', 8],
      ['apple-utc-daily-count-override.ics', 2],
    ])('%s', async (name, years) => {
      expect(await compareWithIcalJs(fixture(name), years)).toBeGreaterThan(0);
    });

    it('outlook-exchange-allday-biweekly-overrides.ics (RECURRENCE-ID date-times on an all-day series)', async () => {
      const text = fixture('outlook-exchange-allday-biweekly-overrides.ics');
      // The one deliberate difference: Exchange writes the RECURRENCE-ID of an all-day series as a local
      // date-time, which ical.js matches to no occurrence (it then lists the original and the moved one); the
      // service reads it as that calendar date. For ical.js the same overrides are written as RFC 5545 has them.
      const asDates = text.replace(
        /RECURRENCE-ID;TZID=GMT Standard Time:(\d{8})T000000/g,
        'RECURRENCE-ID;VALUE=DATE:$1',
      );
      expect(asDates).not.toEqual(text);
      const response = await importIcal(text);
      expect(response.statusCode).toBe(201);
      const id = response.json().Result.Id as string;
      const from = Date.parse('2019-01-01T00:00:00Z');
      const until = Date.parse('2023-01-01T00:00:00Z');
      const iso = (list: Array<{ start: number; end: number }>) =>
        list.map(({ start, end }) => `${new Date(start).toISOString()} – ${new Date(end).toISOString()}`);
      expect(iso(await listed(id, from, until))).toEqual(iso(expandWithIcalJs(asDates, until)));
    });

    it('eight Windows-named VTIMEZONEs and a folded six-value EXDATE (Exchange), its quoted TZID value read as meant', async () => {
      const text = fixture('outlook-exchange-windows-tzs-exdate-list.ics');
      const fixed = text.replace(
        'DTSTART;TZID="W. Europe Standard Time:20200609T090000"',
        'DTSTART;TZID="W. Europe Standard Time":20200609T090000',
      );
      expect(fixed).not.toEqual(text);
      expect(await compareWithIcalJs(text, 2, fixed)).toBeGreaterThan(100);
    });

    it('outlook-cdo-no-uid-byday-spaces.ics (CDO: no UID, `BYDAY=MO, TU, …`, a VTIMEZONE named by its offsets)', async () => {
      const text = fixture('outlook-cdo-no-uid-byday-spaces.ics');
      const fixed = text.replace('BYDAY=MO, TU, WE, TH, FR', 'BYDAY=MO,TU,WE,TH,FR');
      expect(fixed).not.toEqual(text);
      expect(await compareWithIcalJs(text, 1, fixed)).toBe(14);
    });

    it('apple-ical1-vtodo-vjournal-vfreebusy.ics: the three events, the to-do, journal and free/busy skipped', async () => {
      expect(await compareWithIcalJs(fixture('apple-ical1-vtodo-vjournal-vfreebusy.ics'), 1)).toBe(3);
    });
  });

  it('apple-ical1-floating-utc-date.ics: floating (X-WR-TIMEZONE US/Pacific), UTC, IANA TZID without VTIMEZONE, and a date without VALUE=DATE read as the all-day date it is', async () => {
    const text = fixture('apple-ical1-floating-utc-date.ics');
    // ical.js reads `DTSTART:20021028` as a date-time; the oracle gets the VALUE=DATE it means.
    const oracle = text
      .replace('DTSTART:20021028\n', 'DTSTART;VALUE=DATE:20021028\n')
      .replace('DTEND:20021029\n', 'DTEND;VALUE=DATE:20021029\n');
    expect(await compareWithIcalJs(text, 1, oracle)).toBe(5);
  });

  it('zapcalendar-date-without-value-date.ics: a yearly all-day feed event written `DTSTART:20080212`', async () => {
    const text = fixture('zapcalendar-date-without-value-date.ics');
    const oracle = text
      .replace('DTSTART:20080212\n', 'DTSTART;VALUE=DATE:20080212\n')
      .replace('DTEND:20080213\n', 'DTEND;VALUE=DATE:20080213\n');
    expect(await compareWithIcalJs(text, 10, oracle)).toBe(10);
    const response = await importIcal(text);
    expect(response.json().Result.ScheduleItems[0]).toMatchObject({
      AllDay: true,
      Start: '2008-02-12T00:00:00Z',
    });
    expect(response.json().Skipped).toEqual([]);
  });

  it('node-ical’s VALUE=DATE with a time (`DTSTART;VALUE=DATE:20110804T120000`) is that date', async () => {
    const text = fixture('node-ical-value-date-with-time.ics');
    const response = await importIcal(text);
    expect(response.statusCode).toBe(201);
    expect(response.json().Skipped).toEqual([]);
    // DTEND is DTSTART's date too: a DATE event that lasts no day, a zero-length item at midnight.
    expect(response.json().Result.ScheduleItems[0]).toMatchObject({
      Start: '2011-08-04T00:00:00Z',
      End: '2011-08-04T00:00:00Z',
      AllDay: false,
    });
  });

  describe('real-world files: what cannot be imported is skipped and reported', () => {
    it.each([
      [
        'apple-ical1-vtodo-vjournal-vfreebusy.ics',
        3,
        [
          { Line: 37, Component: 'VTODO', Uid: 'uid4@host1.com', Reason: expect.stringMatching(/to-dos/) },
          {
            Line: 55,
            Component: 'VJOURNAL',
            Uid: 'uid5@host1.com',
            Reason: expect.stringMatching(/journal/),
          },
          { Line: 74, Component: 'VFREEBUSY', Uid: null, Reason: expect.stringMatching(/free\/busy/) },
        ],
      ],
    ])('%s: %s events imported', async (name, count, skipped) => {
      const response = await importIcal(fixture(name));
      expect(response.statusCode).toBe(201);
      const body = response.json();
      expect(Object.keys(body)).toEqual([
        'Succeeded',
        'Message',
        'Code',
        'Result',
        'Schedules',
        'Skipped',
        'SkippedTotal',
        'SkippedCounts',
        'First',
      ]);
      expect(body.SkippedTotal).toBe(skipped.length);
      expect(body.Result.ScheduleItems).toHaveLength(count);
      expect(body.Skipped).toEqual(skipped);
      expect(body.Message).toMatch(
        new RegExp(`^Imported ${count} events; skipped ${skipped.length}: line 37: `),
      );
    });
  });

  describe('vendor shapes (hand-written fixtures, test/fixtures/ical/SOURCES.md)', () => {
    /** Imports the fixture: 201, its Skipped list, and every occurrence listed in [from, until) as `start – end`. */
    async function importAndList(
      name: string,
      from: string,
      until: string,
    ): Promise<{
      body: Record<string, unknown> & { Skipped: unknown[]; Message: string | null };
      occurrences: string[];
    }> {
      const response = await importIcal(fixture(name));
      expect(response.statusCode).toBe(201);
      const body = response.json();
      expect(body).toMatchObject({ Succeeded: true, Code: null });
      const list = await listed(body.Result.Id as string, Date.parse(from), Date.parse(until));
      return {
        body,
        occurrences: list.map(
          ({ start, end }) =>
            `${new Date(start).toISOString().slice(0, 16)} – ${new Date(end).toISOString().slice(0, 16)}`,
        ),
      };
    }

    it('Apple Calendar: a to-do and a cancelled event beside events are skipped and reported', async () => {
      const { body, occurrences } = await importAndList(
        'apple-ical-vtodo-cancelled.ics',
        '2023-01-01T00:00:00Z',
        '2023-03-01T00:00:00Z',
      );
      expect(body.Skipped).toEqual([
        {
          Line: 46,
          Component: 'VEVENT',
          Uid: '1A2B3C4D-0000-4111-8222-333344445555',
          Reason: 'line 56: STATUS: a cancelled event (STATUS:CANCELLED) has no occurrences to schedule',
        },
        {
          Line: 58,
          Component: 'VTODO',
          Uid: '6B7C8D9E-1111-4222-8333-444455556666',
          Reason: expect.stringMatching(/^line 58: VTODO: VTODO components \(to-dos\) cannot be represented/),
        },
      ]);
      expect(body.Message).toMatch(
        /^Imported 2 events; skipped 2: line 56: STATUS: a cancelled event .*; line 58: VTODO: /,
      );
      expect(occurrences).toEqual([
        '2023-01-16T08:00 – 2023-01-16T08:30',
        '2023-01-19T23:00 – 2023-01-20T23:00',
        '2023-01-23T08:00 – 2023-01-23T08:30',
        '2023-01-30T08:00 – 2023-01-30T08:30',
        '2023-02-06T08:00 – 2023-02-06T08:30',
        '2023-02-13T08:00 – 2023-02-13T08:30',
        '2023-02-20T08:00 – 2023-02-20T08:30',
      ]);
    });

    it('Google Birthdays: `RDATE:20131210Z` is that date', async () => {
      const { body, occurrences } = await importAndList(
        'google-birthdays-rdate-date-z.ics',
        '2013-01-01T00:00:00Z',
        '2016-01-01T00:00:00Z',
      );
      expect(body).toMatchObject({ Message: null, Skipped: [] });
      expect(occurrences).toEqual([
        '2013-12-09T23:00 – 2013-12-10T23:00',
        '2014-12-09T23:00 – 2014-12-10T23:00',
        '2015-12-09T23:00 – 2015-12-10T23:00',
      ]);
    });

    it('Outlook/Exchange: display-name TZIDs without VTIMEZONE, the quoted TZID value, a bare-date EXDATE, `UTC+01` on an all-day RECURRENCE-ID', async () => {
      const { body, occurrences } = await importAndList(
        'outlook-display-name-tzids.ics',
        '2020-01-01T00:00:00Z',
        '2020-07-01T00:00:00Z',
      );
      expect(body.Skipped).toEqual([]);
      expect(
        (body.Result as { ScheduleItems: Array<{ StartTimeZone: string }> }).ScheduleItems.map(
          (item) => item.StartTimeZone,
        ),
      ).toEqual(['America/New_York', 'Europe/Berlin', 'Europe/Berlin', 'UTC']);
      expect(occurrences).toEqual([
        // Weekly review, Thursdays 09:30 New York; EXDATE:20200116 removes the 16 January one.
        '2020-01-09T14:30 – 2020-01-09T15:30',
        '2020-01-23T14:30 – 2020-01-23T15:30',
        '2020-01-30T14:30 – 2020-01-30T15:30',
        '2020-02-06T14:30 – 2020-02-06T15:30',
        // Board meeting, "Amsterdam, Berlin, Bern, Rome, Stockholm, Vienna".
        '2020-03-02T09:00 – 2020-03-02T10:00',
        // Home office, all-day Thursdays; the 16 April one moved to Friday by RECURRENCE-ID;TZID=UTC+01.
        '2020-04-02T00:00 – 2020-04-03T00:00',
        '2020-04-09T00:00 – 2020-04-10T00:00',
        '2020-04-17T00:00 – 2020-04-18T00:00',
        '2020-04-23T00:00 – 2020-04-24T00:00',
        // Kick-off, `DTSTART;TZID="W. Europe Standard Time:20200609T090000"`.
        '2020-06-09T07:00 – 2020-06-09T07:30',
      ]);
    });

    it('Exchange OWA: events without UID are imported (a UID derived from their content)', async () => {
      const { body, occurrences } = await importAndList(
        'outlook-owa-no-uid.ics',
        '2021-03-01T00:00:00Z',
        '2021-04-01T00:00:00Z',
      );
      expect(body).toMatchObject({ Message: null, Skipped: [] });
      expect(occurrences).toEqual([
        '2021-03-15T11:00 – 2021-03-15T12:00',
        '2021-03-22T08:15 – 2021-03-22T08:30',
        '2021-03-23T08:15 – 2021-03-23T08:30',
        '2021-03-24T08:15 – 2021-03-24T08:30',
        '2021-03-25T08:15 – 2021-03-25T08:30',
        '2021-03-26T08:15 – 2021-03-26T08:30',
      ]);
    });

    it('ownCloud: to-dos beside events are skipped; `/Europe/Stockholm` without VTIMEZONE is Europe/Stockholm', async () => {
      const { body, occurrences } = await importAndList(
        'owncloud-todos-slash-tzid.ics',
        '2019-01-01T00:00:00Z',
        '2019-03-01T00:00:00Z',
      );
      expect(body.Skipped).toEqual([
        {
          Line: 19,
          Component: 'VTODO',
          Uid: '5SFV8UH3X3RG2U3TUX9QFS',
          Reason: expect.stringMatching(/^line 19: VTODO: /),
        },
        {
          Line: 27,
          Component: 'VTODO',
          Uid: '9HZ7WQ2E4R6T8Y0U1I3O5P',
          Reason: expect.stringMatching(/^line 27: VTODO: /),
        },
      ]);
      expect(occurrences).toEqual([
        '2019-01-09T17:00 – 2019-01-09T18:00',
        '2019-01-15T18:00 – 2019-01-15T20:00',
        '2019-01-16T17:00 – 2019-01-16T18:00',
        '2019-01-23T17:00 – 2019-01-23T18:00',
        '2019-01-30T17:00 – 2019-01-30T18:00',
      ]);
    });

    it('two updates of one moved occurrence (SEQUENCE 1 and 2): the higher SEQUENCE wins, the other is reported', async () => {
      const { body, occurrences } = await importAndList(
        'thunderbird-sequence-override-pair.ics',
        '2024-03-01T00:00:00Z',
        '2024-04-01T00:00:00Z',
      );
      expect(body.Skipped).toEqual([
        {
          Line: 33,
          Component: 'VEVENT',
          Uid: '7b0f6c62-3c1e-4f7a-9d53-2f6f0d1f8a11',
          Reason:
            'line 33: VEVENT: an older version (SEQUENCE 1) of the VEVENT at line 44 (SEQUENCE 2), which replaces it',
        },
      ]);
      expect(occurrences).toEqual([
        '2024-03-04T09:00 – 2024-03-04T10:00',
        '2024-03-12T08:00 – 2024-03-12T09:00',
        '2024-03-18T09:00 – 2024-03-18T10:00',
        '2024-03-25T09:00 – 2024-03-25T10:00',
      ]);
    });

    it('a feed repeating one UID for different events imports each; an event with an impossible date is skipped', async () => {
      const response = await importIcal(
        calendar(
          'BEGIN:VEVENT',
          'UID:event@feed.example',
          'DTSTART:20260105T090000Z',
          'DTEND:20260105T100000Z',
          'END:VEVENT',
          'BEGIN:VEVENT',
          'UID:event@feed.example',
          'DTSTART:20260107T090000Z',
          'DTEND:20260107T100000Z',
          'END:VEVENT',
          'BEGIN:VEVENT',
          'UID:bad@feed.example',
          'DTSTART:20260230T090000Z',
          'END:VEVENT',
        ),
      );
      expect(response.statusCode).toBe(201);
      const body = response.json();
      expect(body.Result.ScheduleItems).toHaveLength(2);
      expect(body.Skipped).toEqual([
        {
          Line: 14,
          Component: 'VEVENT',
          Uid: 'bad@feed.example',
          Reason: expect.stringMatching(/^line 16: DTSTART: "20260230T090000Z" is not a date-time/),
        },
      ]);
      expect(body.Message).toMatch(/^Imported 2 events; skipped 1: line 16: DTSTART: /);
    });

    it('an event the engine refuses is skipped too, the others are stored', async () => {
      const response = await importIcal(
        calendar(
          'BEGIN:VEVENT',
          'UID:ok',
          'DTSTART:20260105T090000Z',
          'END:VEVENT',
          'BEGIN:VEVENT',
          'UID:engine',
          'DTSTART:20260105T090000Z',
          'RRULE:FREQ=WEEKLY;BYMONTHDAY=3',
          'END:VEVENT',
        ),
      );
      expect(response.statusCode).toBe(201);
      const body = response.json();
      expect(body.Result.ScheduleItems).toHaveLength(1);
      expect(body.Skipped).toEqual([
        {
          Line: 8,
          Component: 'VEVENT',
          Uid: 'engine',
          Reason: expect.stringMatching(/^line 11: RRULE: .*\(ScheduleItems\[1\]\.Recurrence\.Pattern\)$/),
        },
      ]);
    });
  });

  describe('nothing importable left: 400 naming the line', () => {
    it.each([
      [
        'khal-rdate-period.ics',
        'line 10',
        /^line 10: RECURRENCE-ID: RANGE=THISANDFUTURE cannot be represented/,
      ],
    ])('%s → %s', async (name, field, message) => {
      const response = await importIcal(fixture(name));
      expect(response.statusCode).toBe(400);
      const body = response.json();
      expect(body).toMatchObject({ Succeeded: false, Code: 'ValidationFailed' });
      expect(body.Errors[0].Field).toBe(field);
      expect(body.Errors[0].Message).toMatch(message);
    });

    it('refuses the khal file’s RANGE=THISANDFUTURE once the event has a UID', async () => {
      const text = fixture('khal-rdate-period.ics').replace(
        'BEGIN:VEVENT\r\n',
        'BEGIN:VEVENT\r\nUID:khal-1\r\n',
      );
      const response = await importIcal(text);
      expect(response.statusCode).toBe(400);
      expect(response.json().Errors[0].Message).toMatch(
        /^line 11: RECURRENCE-ID: RANGE=THISANDFUTURE cannot be represented/,
      );
    });

    it.each([
      [
        'EXDATE;VALUE=PERIOD:20260106T090000Z/20260106T100000Z',
        /^line 8: EXDATE: VALUE=PERIOD cannot be represented/,
      ],
      [
        'EXRULE:FREQ=WEEKLY;BYDAY=FR',
        /^line 8: EXRULE: EXRULE \(deprecated by RFC 5545\) cannot be represented/,
      ],
      ['RRULE:FREQ=DAILY', /^line 8: RRULE: more than one RRULE in a VEVENT \(first at line 7\)/],
      ['DTEND:20261301T100000Z', /^line 8: DTEND: "20261301T100000Z" is not a date-time/],
    ])('refuses %s naming its line', async (line, message) => {
      const response = await importIcal(
        calendar(
          'BEGIN:VEVENT',
          'UID:x',
          'DTSTART:20260105T090000Z',
          'RRULE:FREQ=WEEKLY',
          line,
          'END:VEVENT',
        ),
      );
      expect(response.statusCode).toBe(400);
      expect(response.json().Errors[0]).toMatchObject({ Field: 'line 8' });
      expect(response.json().Errors[0].Message).toMatch(message);
    });
  });

  describe('mapping', () => {
    it('answers like POST /api/v1/Schedule: 201, the envelope and the stored schedule', async () => {
      const response = await importIcal(
        calendar(
          'BEGIN:VEVENT',
          'UID:standup@example.com',
          'SUMMARY:Stand-up',
          'DTSTART;TZID=W. Europe Standard Time:20260105T090000',
          'DTEND;TZID=W. Europe Standard Time:20260105T091500',
          'RRULE:FREQ=WEEKLY;BYDAY=MO,WE,FR',
          'EXDATE;TZID=Europe/Berlin:20260107T090000,20260109T090000',
          'EXDATE:20260112T080000Z',
          'RDATE;TZID=Europe/Berlin:20260110T090000',
          'END:VEVENT',
          'BEGIN:VEVENT',
          'UID:standup@example.com',
          'RECURRENCE-ID;TZID=Europe/Berlin:20260114T090000',
          'DTSTART;TZID=Europe/Berlin:20260114T110000',
          'DTEND;TZID=Europe/Berlin:20260114T111500',
          'END:VEVENT',
          'BEGIN:VEVENT',
          'UID:standup@example.com',
          'RECURRENCE-ID;TZID=Europe/Berlin:20260116T090000',
          'STATUS:CANCELLED',
          'DTSTART;TZID=Europe/Berlin:20260116T090000',
          'END:VEVENT',
        ),
      );
      expect(response.statusCode).toBe(201);
      const body = response.json();
      expect(body).toMatchObject({ Succeeded: true, Message: null, Code: null });
      const item = body.Result.ScheduleItems[0];
      expect(item).toMatchObject({
        Name: 'Stand-up',
        Start: '2026-01-05T09:00:00+01:00',
        End: '2026-01-05T09:15:00+01:00',
        StartTimeZone: 'Europe/Berlin',
      });
      expect(item.Recurrence).toMatchObject({
        Pattern: 'FREQ=WEEKLY;BYDAY=MO,WE,FR',
        RecurrenceType: 'Weekly',
        RecurrenceDates: ['2026-01-10T09:00:00+01:00'],
        ExceptionDates: [
          '2026-01-07T09:00:00+01:00',
          '2026-01-09T09:00:00+01:00',
          '2026-01-12T09:00:00+01:00',
        ],
      });
      expect(item.Recurrence.Exceptions).toMatchObject([
        {
          OriginalTime: '2026-01-14T09:00:00+01:00',
          IsDeleted: false,
          NewStartTime: '2026-01-14T11:00:00+01:00',
          NewEndTime: '2026-01-14T11:15:00+01:00',
        },
        { OriginalTime: '2026-01-16T09:00:00+01:00', IsDeleted: true },
      ]);
      const stored = await t.request({
        method: 'GET',
        url: `/api/v1/Schedule/${body.Result.Id}`,
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      });
      expect(stored.json().Result).toEqual(body.Result);
      const starts = (
        await listed(body.Result.Id, Date.parse('2026-01-05T00:00:00Z'), Date.parse('2026-01-19T00:00:00Z'))
      ).map(({ start }) => new Date(start).toISOString());
      expect(starts).toEqual([
        '2026-01-05T08:00:00.000Z',
        '2026-01-10T08:00:00.000Z',
        '2026-01-14T10:00:00.000Z',
      ]);
    });

    it('reads floating times in X-WR-TIMEZONE and all-day events as local midnights', async () => {
      const response = await importIcal(
        [
          'BEGIN:VCALENDAR',
          'VERSION:2.0',
          'X-WR-TIMEZONE:America/New_York',
          'BEGIN:VEVENT',
          'UID:a',
          'DTSTART:20260310T090000',
          'DURATION:PT30M',
          'END:VEVENT',
          'BEGIN:VEVENT',
          'UID:b',
          'DTSTART;VALUE=DATE:20260704',
          'END:VEVENT',
          'END:VCALENDAR',
        ].join('\n'),
      );
      expect(response.statusCode).toBe(201);
      expect(response.json().Result.ScheduleItems).toMatchObject([
        {
          Start: '2026-03-10T09:00:00-04:00',
          End: '2026-03-10T09:30:00-04:00',
          StartTimeZone: 'America/New_York',
        },
        {
          Start: '2026-07-04T00:00:00-04:00',
          End: '2026-07-05T00:00:00-04:00',
          StartTimeZone: 'America/New_York',
        },
      ]);
    });

    it('stores an event whose SUMMARY is over 500 characters with its Name cut, and reports the cut', async () => {
      const long = 'Quarterly planning '.repeat(30); // 570 characters
      const text = [
        'BEGIN:VCALENDAR',
        'VERSION:2.0',
        'PRODID:-//test//EN',
        'BEGIN:VEVENT',
        'UID:long-summary@test',
        `SUMMARY:${long}`,
        'DTSTART:20260105T090000Z',
        'END:VEVENT',
        'END:VCALENDAR',
        '',
      ].join('\r\n');
      const response = await importIcal(text);
      expect(response.statusCode).toBe(201);
      const body = response.json();
      expect(body.Result.ScheduleItems[0].Name).toBe(`${long.slice(0, 499)}…`);
      expect(body.Skipped).toEqual([
        {
          Line: 6,
          Component: 'SUMMARY',
          Uid: 'long-summary@test',
          Reason: expect.stringMatching(/^line 6: SUMMARY: 570 characters, .* cut to 500/),
        },
      ]);
    });

    it('maps an engine error to the line of the property that produced it', async () => {
      const response = await importIcal(
        calendar(
          'BEGIN:VEVENT',
          'UID:x',
          'DTSTART:20260105T090000Z',
          'RRULE:FREQ=WEEKLY;BYMONTHDAY=3',
          'END:VEVENT',
        ),
      );
      expect(response.statusCode).toBe(400);
      const error = response.json().Errors[0];
      expect(error.Field).toBe('line 7');
      expect(error.Message).toMatch(/^line 7: RRULE: .*\(ScheduleItems\[0\]\.Recurrence\.Pattern\)$/);
    });

    it('names the first override over the 1,000 a schedule item may have', async () => {
      const overrides = Array.from({ length: 1_001 }, (_, day) => [
        'BEGIN:VEVENT',
        'UID:x',
        `RECURRENCE-ID:${new Date(Date.UTC(2026, 0, 5 + day, 9)).toISOString().replace(/[-:]|\.000/g, '')}`,
        'STATUS:CANCELLED',
        'END:VEVENT',
      ]).flat();
      const response = await importIcal(
        calendar(
          'BEGIN:VEVENT',
          'UID:x',
          'DTSTART:20260105T090000Z',
          'RRULE:FREQ=DAILY',
          'END:VEVENT',
          ...overrides,
        ),
      );
      expect(response.statusCode).toBe(400);
      // Lines 4–8 are the master, then five lines per override: the 1,001st begins at 9 + 5,000.
      expect(response.json().Errors[0]).toMatchObject({ Field: 'line 5009' });
      expect(response.json().Errors[0].Message).toMatch(
        /^line 5009: VEVENT: .*\(ScheduleItems\[0\]\.Recurrence\.Exceptions\)$/,
      );
    });

    it('names the line of an unmatched override in Message', async () => {
      const response = await importIcal(
        calendar(
          'BEGIN:VEVENT',
          'UID:x',
          'DTSTART:20260105T090000Z',
          'RRULE:FREQ=DAILY;COUNT=3',
          'END:VEVENT',
          'BEGIN:VEVENT',
          'UID:x',
          'RECURRENCE-ID:20260205T090000Z',
          'DTSTART:20260205T100000Z',
          'END:VEVENT',
        ),
      );
      expect(response.statusCode).toBe(201);
      expect(response.json().Message).toContain('ScheduleItems[0].Recurrence.Exceptions[0] (line 9)');
    });
  });

  it('imports what the export writes: the same occurrences over five years (round trip)', async () => {
    const items = [
      {
        Name: 'Stand-up',
        Start: '2026-01-05T09:00:00+01:00',
        End: '2026-01-05T09:15:00+01:00',
        StartTimeZone: 'W. Europe Standard Time',
        Recurrence: {
          Pattern: 'FREQ=WEEKLY;BYDAY=MO,WE,FR',
          RecurrenceDates: ['2026-01-10T09:00:00'],
          ExceptionDates: ['2026-01-07T09:00:00'],
          Exceptions: [
            { OriginalTime: '2026-01-12T08:00:00Z', IsDeleted: true },
            {
              OriginalTime: '2026-01-14T08:00:00Z',
              NewStartTime: '2026-01-14T12:00:00Z',
              NewEndTime: '2026-01-14T12:30:00Z',
            },
          ],
        },
      },
      {
        Name: 'Across DST',
        Start: '2026-03-01T01:30:00',
        End: '2026-03-01T02:30:00',
        StartTimeZone: 'America/New_York',
        Recurrence: { Pattern: 'FREQ=DAILY;COUNT=400' },
      },
      {
        Name: 'Last Friday',
        Start: '2026-01-30T17:00:00Z',
        End: '2026-01-30T18:00:00Z',
        StartTimeZone: null,
        Recurrence: { Pattern: 'FREQ=MONTHLY;BYDAY=-1FR', EndTime: '2029-12-31T00:00:00Z' },
      },
      {
        Name: 'One-off',
        Start: '2026-06-01T10:00:00+10:00',
        End: '2026-06-01T11:00:00+10:00',
        StartTimeZone: 'Australia/Sydney',
        Recurrence: null,
      },
    ];
    const created = await t.post('/api/v1/Schedule', { ScheduleItems: items });
    expect(created.statusCode).toBe(201);
    const originalId = created.json().Result.Id as string;
    const exported = await t.request({
      method: 'GET',
      url: `/api/v1/Schedule/${originalId}/ical`,
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(exported.statusCode).toBe(200);
    const imported = await importIcal(exported.body);
    expect(imported.statusCode).toBe(201);
    const from = Date.parse('2025-12-01T00:00:00Z');
    const until = Date.parse('2031-01-01T00:00:00Z');
    const original = await listed(originalId, from, until);
    expect(original.length).toBeGreaterThan(500);
    expect(await listed(imported.json().Result.Id as string, from, until)).toEqual(original);
  });

  it('takes the direct-route fast path (not Nest’s pipeline)', () => {
    const started = t.logs.find((line) => String(line.message).includes('routes are called directly'));
    expect(started?.viaNest).toEqual(expect.any(Array));
    expect((started?.viaNest as string[]).filter((route) => route.toLowerCase().includes('import'))).toEqual(
      [],
    );
    expect(Number(started?.direct)).toBeGreaterThan(0);
  });

  describe('content type and body', () => {
    it('answers 415 for JSON and for no content type, 400 for an empty calendar body', async () => {
      const json = await importIcal('{"ScheduleItems":[]}', 'application/json');
      expect(json.statusCode).toBe(415);
      expect(json.json()).toMatchObject({ Succeeded: false, Code: 'UnsupportedMediaType' });
      expect(json.json().Message).toBe('Content type application/json is not supported; send text/calendar.');
      // Not even read: a malformed JSON body is the same 415, not a JSON syntax error.
      expect((await importIcal('{', 'application/json')).statusCode).toBe(415);
      expect((await importIcal('BEGIN:VCALENDAR', 'text/plain')).statusCode).toBe(415);
      const none = await t.request({
        method: 'POST',
        url: IMPORT,
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      });
      expect(none.statusCode).toBe(415);
      const empty = await importIcal('');
      expect(empty.statusCode).toBe(400);
      expect(empty.json().Errors[0].Message).toMatch(/^line 1: the body is empty/);
    });

    it('joins a UTF-8 character split by a fold before decoding it (RFC 5545 §3.1), and honours the charset', async () => {
      const event = (summary: Buffer) =>
        Buffer.concat([
          Buffer.from(
            calendar(
              'BEGIN:VEVENT',
              'UID:utf8@test',
              'DTSTART:20260105T090000Z',
              'DTEND:20260105T100000Z',
              '#',
            ).split('#')[0],
          ),
          summary,
          Buffer.from('\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n'),
        ]);
      // "SUMMARY:" and 40 × "é" (2 octets each), folded after octet 75: between 0xC3 and 0xA9.
      const line = Buffer.from(`SUMMARY:${'é'.repeat(40)}`);
      const split = Buffer.concat([line.subarray(0, 75), Buffer.from('\r\n '), line.subarray(75)]);
      expect(split[74]).toBe(0xc3);
      const folded = await importIcal(event(split));
      expect(folded.statusCode).toBe(201);
      expect(folded.json().Result.ScheduleItems[0].Name).toBe('é'.repeat(40));

      const latin1 = event(Buffer.from('SUMMARY:Caf\xe9', 'latin1'));
      const declared = await importIcal(latin1, 'text/calendar; charset=iso-8859-1');
      expect(declared.statusCode).toBe(201);
      expect(declared.json().Result.ScheduleItems[0].Name).toBe('Café');
      // Not UTF-8, declared as UTF-8 (or not declared): a 400 naming the line, never U+FFFD stored.
      for (const type of ['text/calendar; charset=utf-8', 'text/calendar']) {
        const refused = await importIcal(latin1, type);
        expect(refused.statusCode).toBe(400);
        expect(refused.json().Errors[0]).toMatchObject({
          Field: 'line 8',
          Message: expect.stringMatching(/^line 8: SUMMARY: is not valid UTF-8/),
        });
      }
      expect((await importIcal(latin1, 'text/calendar; charset=x-no-such')).statusCode).toBe(415);
      const nul = await importIcal(event(Buffer.from('SUMMARY:a\u0000b')));
      expect(nul.statusCode).toBe(400);
      expect(nul.json().Errors[0].Message).toMatch(/^line 8: SUMMARY: contains a NUL character/);
    });

    it('answers 415 for text/calendar on routes that do not take it', async () => {
      const response = await importIcal(calendar(), 'text/calendar').then(() =>
        t.request({
          method: 'POST',
          url: '/api/v1/Schedule',
          headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'text/calendar' },
          payload: calendar(),
        }),
      );
      expect(response.statusCode).toBe(415);
    });

    it('takes bodies above BODY_LIMIT (1 MiB) up to its own 32 MiB, and answers 413 above', async () => {
      const event = ['BEGIN:VEVENT', 'UID:x', 'DTSTART:20260105T090000Z', 'END:VEVENT'];
      // Lines of 64 KiB: one line may be at most 1 MiB, the body 32 MiB.
      const pad = (mib: number) => Array<string>(mib * 16).fill(`X-PAD:${'x'.repeat(64 * 1024 - 8)}`);
      const large = await importIcal(calendar(...pad(20), ...event));
      expect(large.statusCode).toBe(201);
      const tooLarge = await importIcal(calendar(...pad(33), ...event));
      expect(tooLarge.statusCode).toBe(413);
      expect(tooLarge.json()).toMatchObject({ Code: 'PayloadTooLarge' });
    });
  });
});
