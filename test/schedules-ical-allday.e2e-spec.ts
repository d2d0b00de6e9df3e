// All-day events stay all-day on the real app and database: calendars hand-written in the shapes
// Apple Calendar, Google Calendar and Exchange/Outlook write all-day events (test/fixtures/ical/SOURCES.md) are
// imported; the schedules read back with AllDay (GET and operation 2's page), the listing names the local days, the
// export writes DATE values that ical.js reads as dates (`isDate`) and expands to the occurrences the service
// lists, and importing the export again gives the same items. JSON writes keep the flag and check it.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import ICAL from 'ical.js';
import { expandWithIcalJs } from './support/ical-import-oracle.js';
import { ADMIN_KEY, startTestApp, type TestApp } from './support/test-app.js';

const FIXTURES = new URL('./fixtures/ical/', import.meta.url);
const auth = { authorization: `Bearer ${ADMIN_KEY}` };

/** Apple Calendar's shape: X-WR-TIMEZONE Europe/Berlin, DATE UNTIL, EXDATE;VALUE=DATE, RECURRENCE-ID;VALUE=DATE. */
const APPLE = 'apple-allday-multiday-weekly-exdate-moved.ics';
/** Google Calendar's shape: X-WR-TIMEZONE America/New_York, a cancelled and a timed override of an all-day series. */
const GOOGLE = 'google-allday-weekly-cancelled-timed-override.ics';
/** Exchange 2010's shape: no X-WR-TIMEZONE (UTC days), EXDATE and RECURRENCE-ID as local date-times with TZID. */
const EXCHANGE = 'outlook-exchange-allday-datetime-exdate-recurrence-id.ics';

interface Item {
  Id: string;
  Name: string | null;
  Start: string;
  End: string | null;
  StartTimeZone: string | null;
  AllDay: boolean;
  Recurrence: Record<string, unknown> | null;
}

interface Listed {
  ScheduleId: string;
  Start: string;
  End: string;
  IsMoved: boolean;
  AllDay: boolean;
  Date?: string;
  EndDate?: string;
}

const FROM = '2025-06-01T00:00:00Z';
const UNTIL = '2027-06-01T00:00:00Z';

describe('all-day events stay all-day through import, listing and export', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  async function importCalendar(text: string): Promise<string[]> {
    const response = await t.request({
      method: 'POST',
      url: '/api/v1/Schedule/import',
      headers: { ...auth, 'content-type': 'text/calendar; charset=utf-8' },
      payload: text,
    });
    expect({ status: response.statusCode, body: response.json() }).toMatchObject({
      status: 201,
      body: { Succeeded: true, Skipped: [] },
    });
    return (response.json().Schedules as Array<{ Id: string }>).map(({ Id }) => Id);
  }

  async function itemsOf(ids: readonly string[]): Promise<Item[]> {
    const items: Item[] = [];
    for (const id of ids) {
      const response = await t.request({ method: 'GET', url: `/api/v1/Schedule/${id}`, headers: auth });
      expect(response.statusCode).toBe(200);
      items.push(...(response.json().Result.ScheduleItems as Item[]));
    }
    return items;
  }

  async function listing(ids: readonly string[]): Promise<Listed[]> {
    const response = await t.request({
      method: 'GET',
      url: `/api/v1/Occurrence?ScheduleIds=${ids.join(',')}&Start=${FROM}&End=${UNTIL}`,
      headers: auth,
    });
    expect(response.statusCode).toBe(200);
    return response.json().Result as Listed[];
  }

  async function exported(ids: readonly string[]): Promise<string> {
    const response = await t.request({
      method: 'GET',
      url: `/api/v1/Schedule/ical?ids=${ids.join(',')}`,
      headers: auth,
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/calendar; charset=utf-8');
    return response.body;
  }

  const days = (list: readonly Listed[]) =>
    list.map((o) => (o.AllDay ? `${o.Date}..${o.EndDate}` : `${o.Start}–${o.End}`));
  const spans = (list: ReadonlyArray<{ start: number; end: number }>) =>
    list.map(({ start, end }) => `${new Date(start).toISOString()} – ${new Date(end).toISOString()}`);
  const sameItem = ({ Start, End, StartTimeZone, AllDay, Name }: Item) => ({
    Name,
    Start,
    End,
    StartTimeZone,
    AllDay,
  });

  /**
   * The whole round trip for one fixture: the listing's days, the export read by ical.js (every VEVENT but the
   * timed override a DATE event; ical.js's expansion equal to the listing), and the export imported again (same
   * items, same occurrences).
   */
  async function roundTrip(file: string, expectedDays: string[], timedOverrides = 0) {
    const ids = await importCalendar(readFileSync(new URL(file, FIXTURES), 'utf8'));
    const items = await itemsOf(ids);
    expect(items.every((item) => item.AllDay)).toBe(true);

    const listed = await listing(ids);
    expect(days(listed)).toEqual(expectedDays);

    const text = await exported(ids);
    const calendar = new ICAL.Component(ICAL.parse(text) as unknown[]);
    const vevents = calendar.getAllSubcomponents('vevent');
    const timed = vevents.filter((vevent) => !(vevent.getFirstPropertyValue('dtstart') as ICAL.Time).isDate);
    expect(timed).toHaveLength(timedOverrides);
    for (const vevent of vevents) {
      for (const name of ['recurrence-id', 'rdate', 'exdate']) {
        for (const property of vevent.getAllProperties(name)) {
          for (const value of property.getValues() as ICAL.Time[]) expect(value.isDate).toBe(true);
        }
      }
      const until = (vevent.getFirstPropertyValue('rrule') as ICAL.Recur | null)?.until;
      if (until) expect(until.isDate).toBe(true);
    }
    expect(calendar.getAllSubcomponents('vtimezone')).toHaveLength(timedOverrides > 0 ? 1 : 0);
    const fromMs = Date.parse(FROM);
    const oracle = expandWithIcalJs(text, Date.parse(UNTIL)).filter((o) => o.end > fromMs);
    expect(spans(oracle)).toEqual(
      spans(listed.map((o) => ({ start: Date.parse(o.Start), end: Date.parse(o.End) }))),
    );

    // The export imported again: new schedules (its UIDs are the item ids), the same items and occurrences.
    const again = await importCalendar(text);
    expect((await itemsOf(again)).map(sameItem)).toEqual(items.map(sameItem));
    expect(days(await listing(again))).toEqual(expectedDays);
    return { ids, items, listed, text };
  }

  it('Apple: a three-day event over the DST change and a weekly series with EXDATE and a moved day', async () => {
    const { items, listed, text } = await roundTrip(APPLE, [
      '2026-01-05..2026-01-06',
      '2026-01-12..2026-01-13',
      '2026-01-27..2026-01-29', // 26 January moved to the 27th and 28th
      '2026-02-02..2026-02-03',
      '2026-02-09..2026-02-10',
      '2026-02-16..2026-02-17',
      '2026-02-23..2026-02-24',
      '2026-03-02..2026-03-03',
      '2026-03-09..2026-03-10',
      '2026-03-16..2026-03-17',
      '2026-03-23..2026-03-24',
      '2026-03-27..2026-03-30',
      '2026-03-30..2026-03-31',
    ]);
    expect(items.map(sameItem)).toEqual([
      {
        Name: 'Ostsee (Fr–So)',
        Start: '2026-03-27T00:00:00+01:00',
        End: '2026-03-30T00:00:00+02:00',
        StartTimeZone: 'Europe/Berlin',
        AllDay: true,
      },
      {
        Name: 'Homeoffice',
        Start: '2026-01-05T00:00:00+01:00',
        End: '2026-01-06T00:00:00+01:00',
        StartTimeZone: 'Europe/Berlin',
        AllDay: true,
      },
    ]);
    // Listed as the local days, Start/End the UTC instants of Berlin's midnights (71 hours over the change).
    expect(listed.find((o) => o.Date === '2026-03-27')).toMatchObject({
      AllDay: true,
      Start: '2026-03-26T23:00:00.000Z',
      End: '2026-03-29T22:00:00.000Z',
      EndDate: '2026-03-30',
      IsMoved: false,
    });
    expect(listed.find((o) => o.Date === '2026-01-27')).toMatchObject({ IsMoved: true, AllDay: true });
    const lines = text.split('\r\n');
    expect(lines).toContain('X-WR-TIMEZONE:Europe/Berlin');
    expect(lines).toContain('DTSTART;VALUE=DATE:20260327');
    expect(lines).toContain('DTEND;VALUE=DATE:20260330');
    expect(lines).toContain('RRULE:FREQ=WEEKLY;UNTIL=20260330');
    expect(lines).toContain('EXDATE;VALUE=DATE:20260119');
    expect(lines).toContain('RECURRENCE-ID;VALUE=DATE:20260126');
    expect(lines).toContain('DTSTART;VALUE=DATE:20260127');
  });

  it('Google: over the November change in New York, with cancelled, moved and timed occurrences', async () => {
    const { listed, text } = await roundTrip(
      GOOGLE,
      [
        '2026-10-05..2026-10-06',
        '2026-10-07..2026-10-08',
        '2026-10-14..2026-10-15', // 12 October excluded
        '2026-10-19..2026-10-20',
        '2026-10-23..2026-10-24', // 21 October moved to the 23rd
        '2026-10-26..2026-10-27',
        '2026-10-28..2026-10-29',
        '2026-10-30..2026-11-03',
        '2026-11-02..2026-11-03', // 4 November cancelled
        '2026-11-09..2026-11-10',
        '2026-11-11T14:00:00.000Z–2026-11-11T15:30:00.000Z', // 11 November a timed meeting
        '2026-11-16..2026-11-17',
        '2026-11-18..2026-11-19',
        '2026-11-23..2026-11-24',
        '2026-11-25..2026-11-26',
        '2026-11-30..2026-12-01',
      ],
      1,
    );
    expect(listed.find((o) => o.Date === '2026-10-30')).toMatchObject({
      Start: '2026-10-30T04:00:00.000Z',
      End: '2026-11-03T05:00:00.000Z',
    });
    expect(listed.find((o) => o.Start === '2026-11-11T14:00:00.000Z')).toMatchObject({
      AllDay: false,
      IsMoved: true,
    });
    expect(listed.find((o) => o.Start === '2026-11-11T14:00:00.000Z')).not.toHaveProperty('Date');
    const lines = text.split('\r\n');
    expect(lines).toContain('X-WR-TIMEZONE:America/New_York');
    expect(lines).toContain('EXDATE;VALUE=DATE:20261012,20261104');
    expect(lines).toContain('RECURRENCE-ID;VALUE=DATE:20261111');
    expect(lines).toContain('DTSTART;TZID=America/New_York:20261111T090000');
  });

  it('Exchange: EXDATE and RECURRENCE-ID as local date-times, days in UTC without X-WR-TIMEZONE', async () => {
    const { items, listed, text } = await roundTrip(EXCHANGE, [
      '2026-02-27..2026-02-28',
      '2026-03-06..2026-03-07',
      '2026-03-19..2026-03-20', // 20 March moved to Thursday the 19th; 13 March excluded
      '2026-03-27..2026-03-28',
      '2026-04-03..2026-04-04',
      '2026-04-06..2026-04-11',
      '2026-04-10..2026-04-11',
      '2026-04-17..2026-04-18',
      '2026-04-24..2026-04-25',
      '2026-05-01..2026-05-02',
    ]);
    expect(items.map(({ Start, StartTimeZone }) => [Start, StartTimeZone])).toEqual([
      ['2026-02-27T00:00:00Z', 'UTC'],
      ['2026-04-06T00:00:00Z', 'UTC'],
    ]);
    expect(listed[0]).toMatchObject({ Start: '2026-02-27T00:00:00.000Z', End: '2026-02-28T00:00:00.000Z' });
    const lines = text.split('\r\n');
    expect(lines.some((line) => line.startsWith('X-WR-TIMEZONE'))).toBe(false);
    expect(lines).toContain('RRULE:FREQ=WEEKLY;COUNT=10;BYDAY=FR;WKST=MO');
    expect(lines).toContain('EXDATE;VALUE=DATE:20260313');
    expect(lines).toContain('RECURRENCE-ID;VALUE=DATE:20260320');
  });

  it("shows AllDay in operation 2's page as in GET", async () => {
    const ids = await importCalendar(readFileSync(new URL(APPLE, FIXTURES), 'utf8'));
    const created = await t.request({
      method: 'POST',
      url: '/api/v1/Schedule',
      headers: auth,
      payload: {
        ScheduleItems: [{ Name: 'timed', Start: '2026-01-05T09:00:00Z', End: '2026-01-05T10:00:00Z' }],
      },
    });
    expect(created.statusCode).toBe(201);
    expect(created.json().Result.ScheduleItems[0].AllDay).toBe(false);
    const page = await t.request({
      method: 'GET',
      url: '/api/v1/Schedule?PageIndex=1&PageSize=500',
      headers: auth,
    });
    expect(page.statusCode).toBe(200);
    const all = page.json().Result as Array<{ Id: string; ScheduleItems: Item[] }>;
    for (const id of [...ids, created.json().Result.Id as string]) {
      const single = await t.request({ method: 'GET', url: `/api/v1/Schedule/${id}`, headers: auth });
      expect(all.find((schedule) => schedule.Id === id)).toEqual(single.json().Result);
    }
    const fromPage = all.find((schedule) => schedule.Id === ids[0])!.ScheduleItems[0];
    expect(fromPage).toMatchObject({ AllDay: true });
    // The documented key order, also where PostgreSQL builds the page's JSON itself.
    expect(Object.keys(fromPage)).toEqual([
      'Id',
      'Name',
      'Start',
      'End',
      'StartTimeZone',
      'AllDay',
      'Recurrence',
    ]);
  });

  describe('JSON writes', () => {
    const weekly = (overrides: Record<string, unknown> = {}, recurrence: Record<string, unknown> = {}) => ({
      ScheduleItems: [
        {
          Name: 'Inventory',
          Start: '2026-03-27T00:00:00+01:00',
          End: '2026-03-28T00:00:00+01:00',
          StartTimeZone: 'Europe/Berlin',
          AllDay: true,
          Recurrence: { Pattern: 'FREQ=WEEKLY;COUNT=3', ...recurrence },
          ...overrides,
        },
      ],
    });
    const post = (payload: object) =>
      t.request({ method: 'POST', url: '/api/v1/Schedule', headers: auth, payload });

    it('keeps AllDay through POST, GET and a PUT of what GET returned; whole days across DST', async () => {
      const created = await post(weekly());
      expect(created.statusCode).toBe(201);
      const id = created.json().Result.Id as string;
      const got = (await t.request({ method: 'GET', url: `/api/v1/Schedule/${id}`, headers: auth })).json();
      expect(got.Result.ScheduleItems[0]).toMatchObject({ AllDay: true });
      // What GET answered, less the ids the request DTO does not take.
      const { Id: _id, Recurrence, ...readBack } = got.Result.ScheduleItems[0] as Item;
      const { Id: _recurrenceId, ...recurrence } = Recurrence!;
      const put = await t.request({
        method: 'PUT',
        url: `/api/v1/Schedule/${id}`,
        headers: auth,
        payload: { ScheduleItems: [{ ...readBack, Recurrence: recurrence }] },
      });
      expect({ status: put.statusCode, body: put.json() }).toMatchObject({ status: 200 });
      const again = (await t.request({ method: 'GET', url: `/api/v1/Schedule/${id}`, headers: auth })).json();
      const strip = (item: Item) => ({
        ...item,
        Id: undefined,
        Recurrence: { ...item.Recurrence, Id: undefined },
      });
      expect(strip(again.Result.ScheduleItems[0])).toEqual(strip(got.Result.ScheduleItems[0]));
      // No Duration given: each occurrence is one local day, 23 hours on 29 March in Berlin.
      expect(days(await listing([id]))).toEqual([
        '2026-03-27..2026-03-28',
        '2026-04-03..2026-04-04',
        '2026-04-10..2026-04-11',
      ]);
      const listed = await listing([id]);
      expect(listed[1]).toMatchObject({ Start: '2026-04-02T22:00:00.000Z', End: '2026-04-03T22:00:00.000Z' });
    });

    it('defaults AllDay to false', async () => {
      const { AllDay: _omitted, ...item } = weekly().ScheduleItems[0];
      const created = await post({ ScheduleItems: [item] });
      expect(created.statusCode).toBe(201);
      expect(created.json().Result.ScheduleItems[0].AllDay).toBe(false);
      expect((await listing([created.json().Result.Id as string]))[0]).toMatchObject({ AllDay: false });
      expect((await listing([created.json().Result.Id as string]))[0]).not.toHaveProperty('Date');
    });

    it.each<[string, Record<string, unknown>, Record<string, unknown>, string]>([
      ['a Start at 09:00', { Start: '2026-03-27T09:00:00+01:00' }, {}, 'ScheduleItems[0].Start'],
      ['an End at noon', { End: '2026-03-27T12:00:00+01:00' }, {}, 'ScheduleItems[0].End'],
      ['no End', { End: null }, {}, 'ScheduleItems[0].End'],
      ['a Duration of hours', {}, { Duration: 'PT12H' }, 'ScheduleItems[0].Recurrence.Duration'],
      ['an hourly rule', {}, { Pattern: 'FREQ=HOURLY;COUNT=3' }, 'ScheduleItems[0].Recurrence.Pattern'],
      ['AllDay as text', { AllDay: 'yes' }, {}, 'ScheduleItems[0].AllDay'],
    ])('refuses %s with a 400 naming the field', async (_name, overrides, recurrence, field) => {
      const response = await post(weekly(overrides, recurrence));
      expect(response.statusCode).toBe(400);
      const body = response.json();
      expect(body).toMatchObject({ Succeeded: false, Code: 'ValidationFailed' });
      expect((body.Errors as Array<{ Field: string }>).map((error) => error.Field)).toContain(field);
    });
  });
});
