// A VTIMEZONE that matches no IANA zone keeps working through its own rules. An Outlook-shaped
// calendar with a made-up "Customized Time Zone" (standard -03:30, daylight -02:30 from the first Sunday of October
// to the third Sunday of February, both at local midnight: a southern-hemisphere rule no real zone has) is imported;
// the zone is stored as the POSIX TZ string of those rules, and operation 1, the occurrence listing (at hand-computed
// UTC instants on both sides of the changes, in the repeated and the skipped hour) and the export (expanded again by
// ical.js, and imported again) all agree. JSON writes take the same string.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expandWithIcalJs } from './support/ical-import-oracle.js';
import { ADMIN_KEY, startTestApp, type TestApp } from './support/test-app.js';

const AUTH = { authorization: `Bearer ${ADMIN_KEY}` };
const POSIX = '<-0330>3:30<-0230>,M10.1.0/0,M2.3.0/0';

/** The zone as Outlook writes a custom one: DTSTART in 1601, yearly rules with INTERVAL=1, BYDAY before BYMONTH. */
const VTIMEZONE = [
  'BEGIN:VTIMEZONE',
  'TZID:Customized Time Zone',
  'BEGIN:STANDARD',
  'DTSTART:16010101T000000',
  'TZOFFSETFROM:-0230',
  'TZOFFSETTO:-0330',
  'RRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=3SU;BYMONTH=2',
  'END:STANDARD',
  'BEGIN:DAYLIGHT',
  'DTSTART:16010101T000000',
  'TZOFFSETFROM:-0330',
  'TZOFFSETTO:-0230',
  'RRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=1SU;BYMONTH=10',
  'END:DAYLIGHT',
  'END:VTIMEZONE',
];

/** Mondays 09:00–10:00 through 2027, one moved and one cancelled occurrence: compared with ical.js. */
const WEEKLY = [
  'BEGIN:VEVENT',
  'UID:custom-zone-weekly',
  'SUMMARY:Weekly',
  'DTSTART;TZID=Customized Time Zone:20260105T090000',
  'DTEND;TZID=Customized Time Zone:20260105T100000',
  'RRULE:FREQ=WEEKLY;UNTIL=20271231T235959Z;INTERVAL=1;BYDAY=MO;WKST=SU',
  'EXDATE;TZID=Customized Time Zone:20260302T090000',
  'DTSTAMP:20260101T000000Z',
  'END:VEVENT',
  'BEGIN:VEVENT',
  'UID:custom-zone-weekly',
  'RECURRENCE-ID;TZID=Customized Time Zone:20261005T090000',
  'DTSTART;TZID=Customized Time Zone:20261006T140000',
  'DTEND;TZID=Customized Time Zone:20261006T150000',
  'DTSTAMP:20260101T000000Z',
  'END:VEVENT',
];

/** 23:30 on the nights around the February change: Saturday 23:00–24:00 happens twice. */
const OVERLAP = [
  'BEGIN:VEVENT',
  'UID:custom-zone-overlap',
  'DTSTART;TZID=Customized Time Zone:20260213T233000',
  'DTEND;TZID=Customized Time Zone:20260213T234500',
  'RRULE:FREQ=DAILY;COUNT=3',
  'DTSTAMP:20260101T000000Z',
  'END:VEVENT',
];

/** 00:30 on the days around the October change: Sunday 00:00–01:00 does not exist. */
const GAP = [
  'BEGIN:VEVENT',
  'UID:custom-zone-gap',
  'DTSTART;TZID=Customized Time Zone:20261003T003000',
  'DTEND;TZID=Customized Time Zone:20261003T004500',
  'RRULE:FREQ=DAILY;COUNT=3',
  'DTSTAMP:20260101T000000Z',
  'END:VEVENT',
];

function calendar(...lines: string[]): string {
  return [
    'BEGIN:VCALENDAR',
    'METHOD:PUBLISH',
    'PRODID:Microsoft Exchange Server 2010',
    'VERSION:2.0',
    ...lines,
    'END:VCALENDAR',
    '',
  ].join('\r\n');
}

const iso = (ms: number) => new Date(ms).toISOString();

describe('an imported VTIMEZONE that matches no IANA zone keeps its own rules', () => {
  let t: TestApp;
  const ids: Record<string, string> = {};

  const listing = async (id: string, from: string, to: string) => {
    const response = await t.request({
      method: 'GET',
      url: `/api/v1/Occurrence?ScheduleIds=${id}&Start=${from}&End=${to}`,
      headers: AUTH,
    });
    expect(response.statusCode).toBe(200);
    return (response.json().Result as Array<{ Start: string; End: string; IsMoved: boolean }>).map(
      ({ Start, End, IsMoved }) => ({ Start, End, IsMoved }),
    );
  };
  const hasOccurrence = async (id: string, start: string, end: string): Promise<boolean> => {
    const response = await t.request({
      method: 'POST',
      url: '/api/v1/Occurrence/hasOccurrences/byGroup',
      headers: { ...AUTH, 'content-type': 'application/json' },
      payload: JSON.stringify({ Groups: [{ Key: 'g', ScheduleIds: [id] }], Start: start, End: end }),
    });
    expect(response.statusCode).toBe(200);
    return response.json().Groups.g as boolean;
  };
  const importIcal = (body: string) =>
    t.request({
      method: 'POST',
      url: '/api/v1/Schedule/import',
      headers: { ...AUTH, 'content-type': 'text/calendar; charset=utf-8' },
      payload: body,
    });

  beforeAll(async () => {
    t = await startTestApp();
    const response = await importIcal(calendar(...VTIMEZONE, ...WEEKLY, ...OVERLAP, ...GAP));
    expect(response.statusCode).toBe(201);
    const answer = response.json();
    expect(answer.Skipped).toEqual([]);
    for (const { Id, Uid } of answer.Schedules as Array<{ Id: string; Uid: string }>) ids[Uid] = Id;
  });
  afterAll(async () => t.close());

  it('stores the zone as the POSIX TZ string of its rules, returned as stored', async () => {
    for (const id of Object.values(ids)) {
      const stored = await t.request({ method: 'GET', url: `/api/v1/Schedule/${id}`, headers: AUTH });
      expect(stored.statusCode).toBe(200);
      expect(stored.json().Result.ScheduleItems[0].StartTimeZone).toBe(POSIX);
    }
    const weekly = (
      await t.request({ method: 'GET', url: `/api/v1/Schedule/${ids['custom-zone-weekly']}`, headers: AUTH })
    ).json().Result.ScheduleItems[0];
    // January is summer time there (-02:30).
    expect(weekly.Start).toBe('2026-01-05T09:00:00-02:30');
  });

  it('lists occurrences at the right instants on both sides of each change', async () => {
    const weekly = await listing(ids['custom-zone-weekly'], '2026-02-08T00:00:00Z', '2026-02-18T00:00:00Z');
    expect(weekly.map(({ Start }) => Start)).toEqual([
      '2026-02-09T11:30:00.000Z', // 09:00 -02:30
      '2026-02-16T12:30:00.000Z', // 09:00 -03:30, the day after the change of Sunday 15 February
    ]);
    const october = await listing(ids['custom-zone-weekly'], '2026-09-27T00:00:00Z', '2026-10-14T00:00:00Z');
    expect(october).toEqual([
      { Start: '2026-09-28T12:30:00.000Z', End: '2026-09-28T13:30:00.000Z', IsMoved: false },
      // Moved from Monday 5 October to Tuesday 14:00 -02:30.
      { Start: '2026-10-06T16:30:00.000Z', End: '2026-10-06T17:30:00.000Z', IsMoved: true },
      { Start: '2026-10-12T11:30:00.000Z', End: '2026-10-12T12:30:00.000Z', IsMoved: false },
    ]);
    // The EXDATE of 2 March removes that Monday.
    expect(await listing(ids['custom-zone-weekly'], '2026-03-01T00:00:00Z', '2026-03-03T00:00:00Z')).toEqual(
      [],
    );
  });

  it('takes the first instant of a repeated wall time and moves a skipped one forward by the gap', async () => {
    expect(
      (await listing(ids['custom-zone-overlap'], '2026-02-01T00:00:00Z', '2026-03-01T00:00:00Z')).map(
        ({ Start }) => Start,
      ),
    ).toEqual([
      '2026-02-14T02:00:00.000Z', // Friday 23:30 -02:30
      '2026-02-15T02:00:00.000Z', // Saturday 23:30, first of the two (-02:30; the second is 03:00Z)
      '2026-02-16T03:00:00.000Z', // Sunday 23:30 -03:30
    ]);
    expect(
      (await listing(ids['custom-zone-gap'], '2026-10-01T00:00:00Z', '2026-10-10T00:00:00Z')).map(
        ({ Start }) => Start,
      ),
    ).toEqual([
      '2026-10-03T04:00:00.000Z', // Saturday 00:30 -03:30
      '2026-10-04T04:00:00.000Z', // Sunday 00:30 does not exist: 01:30 -02:30
      '2026-10-05T03:00:00.000Z', // Monday 00:30 -02:30
    ]);
  });

  it('answers operation 1 by the same instants', async () => {
    const weekly = ids['custom-zone-weekly'];
    expect(await hasOccurrence(weekly, '2026-02-16T12:29:00Z', '2026-02-16T12:30:00Z')).toBe(false);
    expect(await hasOccurrence(weekly, '2026-02-16T12:30:00Z', '2026-02-16T12:31:00Z')).toBe(true);
    // 5 October is moved; 12 October is 09:00–10:00 -02:30, i.e. 11:30–12:30Z (in standard time it would be an hour later).
    expect(await hasOccurrence(weekly, '2026-10-12T11:30:00Z', '2026-10-12T11:31:00Z')).toBe(true);
    expect(await hasOccurrence(weekly, '2026-10-12T12:29:59Z', '2026-10-12T12:30:00Z')).toBe(true);
    expect(await hasOccurrence(weekly, '2026-10-12T12:30:00Z', '2026-10-12T13:30:00Z')).toBe(false);
    // A far window (2027): jumped to, not expanded from 2026.
    expect(await hasOccurrence(weekly, '2027-02-22T12:30:00Z', '2027-02-22T12:31:00Z')).toBe(true);
    expect(await hasOccurrence(weekly, '2027-02-22T11:30:00Z', '2027-02-22T12:00:00Z')).toBe(false);
  });

  it('lists the same occurrences as ical.js expands from the imported calendar', async () => {
    const until = Date.UTC(2028, 0, 1);
    const expected = expandWithIcalJs(calendar(...VTIMEZONE, ...WEEKLY), until).map(({ start, end }) => ({
      Start: iso(start),
      End: iso(end),
    }));
    const listed = await listing(ids['custom-zone-weekly'], '2026-01-01T00:00:00Z', iso(until));
    expect(listed.map(({ Start, End }) => ({ Start, End }))).toEqual(expected);
    expect(listed.length).toBeGreaterThan(100);
  });

  it('exports a VTIMEZONE of the rules under the quoted POSIX TZID, which ical.js expands alike', async () => {
    const response = await t.request({
      method: 'GET',
      url: `/api/v1/Schedule/${ids['custom-zone-weekly']}/ical`,
      headers: AUTH,
    });
    expect(response.statusCode).toBe(200);
    const text = response.body;
    const lines = text.replace(/\r\n[ \t]/g, '').split('\r\n');
    expect(lines).toContain('TZID:<-0330>3:30<-0230>\\,M10.1.0/0\\,M2.3.0/0');
    expect(lines).toContain(`DTSTART;TZID="${POSIX}":20260105T090000`);
    expect(lines).toContain('RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=1SU');
    expect(lines).toContain('RRULE:FREQ=YEARLY;BYMONTH=2;BYDAY=3SU');
    const until = Date.UTC(2028, 0, 1);
    const fromExport = expandWithIcalJs(text, until).map(({ start, end }) => ({
      Start: iso(start),
      End: iso(end),
    }));
    const listed = await listing(ids['custom-zone-weekly'], '2026-01-01T00:00:00Z', iso(until));
    expect(fromExport).toEqual(listed.map(({ Start, End }) => ({ Start, End })));

    // Imported again (a re-import of the export): its UID is the imported one, so the same schedule is updated,
    // and the TZID names the same zone.
    const again = await importIcal(text);
    expect(again.statusCode).toBe(201);
    const [{ Id }] = again.json().Schedules as Array<{ Id: string }>;
    expect(Id).toBe(ids['custom-zone-weekly']);
    const stored = await t.request({ method: 'GET', url: `/api/v1/Schedule/${Id}`, headers: AUTH });
    expect(stored.json().Result.ScheduleItems[0].StartTimeZone).toBe(POSIX);
    expect(
      (await listing(Id, '2026-01-01T00:00:00Z', iso(until))).map(({ Start, End }) => ({ Start, End })),
    ).toEqual(listed.map(({ Start, End }) => ({ Start, End })));
  });

  it('accepts POSIX TZ strings in JSON writes, so GET → PUT round-trips, and refuses UTC+01', async () => {
    const id = ids['custom-zone-gap'];
    const stored = (await t.request({ method: 'GET', url: `/api/v1/Schedule/${id}`, headers: AUTH })).json()
      .Result;
    // Ids are the server's (a PUT does not take them); the rest goes back as read.
    const body = {
      ScheduleItems: (stored.ScheduleItems as Array<Record<string, unknown>>).map(
        ({ Id: _id, Recurrence, ...item }) => {
          const { Id: _recurrenceId, ...recurrence } = Recurrence as Record<string, unknown>;
          return { ...item, Recurrence: recurrence };
        },
      ),
    };
    const put = await t.request({
      method: 'PUT',
      url: `/api/v1/Schedule/${id}`,
      headers: { ...AUTH, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
    expect([put.statusCode, put.statusCode === 200 ? '' : put.body]).toEqual([200, '']);
    expect(put.json().Result.ScheduleItems[0].StartTimeZone).toBe(POSIX);

    const created = await t.post('/api/v1/Schedule', {
      ScheduleItems: [
        {
          Start: '2026-03-09T09:00:00',
          End: '2026-03-09T10:00:00',
          StartTimeZone: 'EST5EDT,M3.2.0,M11.1.0',
          Recurrence: { RecurrenceType: 'Daily', EndCount: 2 },
        },
      ],
    });
    expect(created.statusCode).toBe(201);
    expect(created.json().Result.ScheduleItems[0].StartTimeZone).toBe('EST5EDT,M3.2.0,M11.1.0');
    // 9 March 2026 is the day after the US change: 09:00 EDT.
    expect(
      (await listing(created.json().Result.Id, '2026-03-01T00:00:00Z', '2026-04-01T00:00:00Z')).map(
        ({ Start }) => Start,
      ),
    ).toEqual(['2026-03-09T13:00:00.000Z', '2026-03-10T13:00:00.000Z']);

    const refused = await t.post('/api/v1/Schedule', {
      ScheduleItems: [{ Start: '2026-03-09T09:00:00', StartTimeZone: 'UTC+01' }],
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().Errors).toEqual([
      expect.objectContaining({
        Field: 'ScheduleItems[0].StartTimeZone',
        Message: expect.stringContaining('Etc/GMT-1'),
      }),
    ]);
  });
});
