import { describe, expect, it } from '@jest/globals';
import { compileSeries } from '../recurrence/index.js';
import { unfold } from './ical-content.js';
import { repairContentLine } from './ical-content.js';
import {
  IcalImportError,
  importCalendar,
  MAX_IMPORTED_ITEMS,
  withoutItems,
  type ImportedItem,
} from './ical-import.js';
import { offsetFromName, resolveTzid, zoneFromName, zoneFromOffsets } from './ical-zones.js';
import ICAL from 'ical.js';

/** A calendar of the given lines between BEGIN/END:VCALENDAR (line 1 is BEGIN:VCALENDAR, line 2 VERSION). */
function ics(...lines: string[]): string {
  return ['BEGIN:VCALENDAR', 'VERSION:2.0', ...lines, 'END:VCALENDAR', ''].join('\r\n');
}

function event(...lines: string[]): string[] {
  return ['BEGIN:VEVENT', ...lines, 'END:VEVENT'];
}

function items(text: string): ImportedItem[] {
  return importCalendar(text).ScheduleItems;
}

function problems(text: string): string[] {
  try {
    importCalendar(text);
  } catch (error) {
    if (error instanceof IcalImportError)
      return error.message.split('; line ').map((m, i) => (i ? `line ${m}` : m));
    throw error;
  }
  throw new Error('imported without a problem');
}

const BERLIN_VTIMEZONE = [
  'BEGIN:VTIMEZONE',
  'TZID:Custom Berlin',
  'BEGIN:DAYLIGHT',
  'TZOFFSETFROM:+0100',
  'TZOFFSETTO:+0200',
  'DTSTART:19700329T020000',
  'RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU',
  'END:DAYLIGHT',
  'BEGIN:STANDARD',
  'TZOFFSETFROM:+0200',
  'TZOFFSETTO:+0100',
  'DTSTART:19701025T030000',
  'RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU',
  'END:STANDARD',
  'END:VTIMEZONE',
];

describe('content lines', () => {
  it('unfolds CRLF, LF and CR continuations and keeps the line each content line starts on', () => {
    expect(unfold('A:1\r\n B\r\n\tC\nD:2\rE:3\n\nF:4')).toEqual([
      { line: 1, text: 'A:1BC' },
      { line: 4, text: 'D:2' },
      { line: 5, text: 'E:3' },
      { line: 7, text: 'F:4' },
    ]);
  });

  it('refuses a continuation with nothing to continue, naming its line', () => {
    expect(() => unfold('A:1\n\n F:4')).toThrow('a folded continuation line with no content line before it');
  });
});

describe('importCalendar: mapping (RFC 5545 → ScheduleInput)', () => {
  it.each<[string, string[], Partial<ImportedItem>]>([
    [
      'IANA TZID, DTEND, RRULE',
      event(
        'UID:1',
        'SUMMARY:Stand-up\\, daily',
        'DTSTART;TZID=Europe/Berlin:20260105T090000',
        'DTEND;TZID=Europe/Berlin:20260105T091500',
        'RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO',
      ),
      {
        Name: 'Stand-up, daily',
        Start: '2026-01-05T09:00:00+01:00',
        End: '2026-01-05T09:15:00+01:00',
        StartTimeZone: 'Europe/Berlin',
        Recurrence: { Pattern: 'FREQ=WEEKLY;INTERVAL=2;BYDAY=MO', RecurrenceType: 'Weekly', Interval: '2' },
      },
    ],
    [
      'Windows TZID, DURATION',
      event('UID:1', 'DTSTART;TZID="Pacific Standard Time":20260701T090000', 'DURATION:PT1H30M'),
      {
        Name: null,
        Start: '2026-07-01T09:00:00-07:00',
        End: '2026-07-01T10:30:00-07:00',
        StartTimeZone: 'America/Los_Angeles',
        Recurrence: null,
      },
    ],
    [
      'UTC, no DTEND: zero length',
      event('UID:1', 'DTSTART:20260105T090000Z'),
      { Start: '2026-01-05T09:00:00Z', End: '2026-01-05T09:00:00Z', StartTimeZone: 'UTC' },
    ],
    [
      'floating without X-WR-TIMEZONE: UTC',
      event('UID:1', 'DTSTART:20260105T090000', 'DTEND:20260105T100000'),
      { Start: '2026-01-05T09:00:00Z', End: '2026-01-05T10:00:00Z', StartTimeZone: 'UTC' },
    ],
    [
      'all-day without DTEND: one day, recurring with whole days',
      event('UID:1', 'DTSTART;VALUE=DATE:20260105', 'RRULE:FREQ=YEARLY'),
      {
        Start: '2026-01-05T00:00:00Z',
        End: '2026-01-06T00:00:00Z',
        Recurrence: { Pattern: 'FREQ=YEARLY', RecurrenceType: 'Yearly', Interval: '1', Duration: 'P1D' },
      },
    ],
    [
      'vendor-prefixed TZID',
      event('UID:1', 'DTSTART;TZID=/mozilla.org/20050126_1/America/New_York:20260105T090000'),
      { Start: '2026-01-05T09:00:00-05:00', StartTimeZone: 'America/New_York' },
    ],
    [
      'custom TZID resolved by its VTIMEZONE offsets',
      [...BERLIN_VTIMEZONE, ...event('UID:1', 'DTSTART;TZID=Custom Berlin:20260705T090000')],
      { Start: '2026-07-05T09:00:00+02:00', StartTimeZone: 'Europe/Berlin' },
    ],
    [
      'custom TZID whose rules no IANA zone has: its own rules as a POSIX TZ string',
      [
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
        ...event('UID:1', 'DTSTART;TZID=Customized Time Zone:20260705T090000'),
      ],
      { Start: '2026-07-05T09:00:00-03:30', StartTimeZone: '<-0330>3:30<-0230>,M10.1.0/0,M2.3.0/0' },
    ],
  ])('%s', (_name, lines, expected) => {
    expect(items(ics(...lines))[0]).toMatchObject(expected);
  });

  it('reads a recurrence rule in any letter case (RFC 5545 §2: enumerated values are case-insensitive)', () => {
    const [item] = items(
      ics(...event('UID:lower', 'DTSTART:20260105T090000Z', 'rrule:freq=weekly;count=3;byday=mo,We')),
    );
    expect(item.Recurrence).toMatchObject({ Pattern: 'FREQ=WEEKLY;COUNT=3;BYDAY=MO,WE' });
  });

  it('refuses a UTC time with TZID (§3.2.19), naming the line', () => {
    expect(problems(ics(...event('UID:z', 'DTSTART;TZID=Europe/Berlin:20260105T090000Z'))).join(' ')).toMatch(
      /^line 5: DTSTART: "20260105T090000Z" is a UTC time and cannot carry TZID/,
    );
  });

  it('reads a date UNTIL on a timed series as the end of that day in the series’ zone', () => {
    const until = (zone: string, start: string) =>
      items(ics(...event('UID:u', `DTSTART${zone}:${start}`, 'RRULE:FREQ=DAILY;UNTIL=20260110;BYHOUR=9')))[0]
        .Recurrence?.Pattern;
    expect(until('', '20260105T090000Z')).toBe('FREQ=DAILY;UNTIL=20260110T235959Z;BYHOUR=9');
    expect(until(';TZID=Europe/Berlin', '20260105T090000')).toBe(
      'FREQ=DAILY;UNTIL=20260110T225959Z;BYHOUR=9',
    );
    // The last day's occurrence is in the series: 6 days, 5–10 January.
    const [item] = items(
      ics(...event('UID:u', 'DTSTART;TZID=Europe/Berlin:20260105T230000', 'RRULE:FREQ=DAILY;UNTIL=20260110')),
    );
    const starts = compileSeries(item)
      .occurrencesIn(Date.UTC(2026, 0, 1), Date.UTC(2027, 0, 1), 100)
      .map(({ start }) => new Date(start).toISOString().slice(0, 10));
    // 23:00 Berlin is 22:00 UTC: the 10th's occurrence (22:00Z) is before the day's end (22:59:59Z).
    expect(starts).toEqual([
      '2026-01-05',
      '2026-01-06',
      '2026-01-07',
      '2026-01-08',
      '2026-01-09',
      '2026-01-10',
    ]);
    // An all-day series keeps its date UNTIL; an impossible date stays for the engine to name.
    expect(
      items(ics(...event('UID:d', 'DTSTART;VALUE=DATE:20260105', 'RRULE:FREQ=DAILY;UNTIL=20260110')))[0]
        .Recurrence?.Pattern,
    ).toBe('FREQ=DAILY;UNTIL=20260110');
    expect(
      items(ics(...event('UID:x', 'DTSTART:20260105T090000Z', 'RRULE:FREQ=DAILY;UNTIL=20261340')))[0]
        .Recurrence?.Pattern,
    ).toBe('FREQ=DAILY;UNTIL=20261340');
  });

  it('reads a date without VALUE=DATE, and a date-time under VALUE=DATE, as an all-day date', () => {
    const bare = importCalendar(ics(...event('UID:b', 'DTSTART:20041225', 'DTEND:20041226')));
    expect(bare.ScheduleItems[0]).toMatchObject({
      Start: '2004-12-25T00:00:00Z',
      End: '2004-12-26T00:00:00Z',
      StartTimeZone: 'UTC',
      AllDay: true,
    });
    expect(bare.sources[0].allDay).toBe(true);
    const timed = importCalendar(
      ics(...event('UID:t', 'DTSTART;VALUE=DATE:20110804T120000', 'DTEND;VALUE=DATE:20110805T120000')),
    );
    expect(timed.ScheduleItems[0]).toMatchObject({
      Start: '2011-08-04T00:00:00Z',
      End: '2011-08-05T00:00:00Z',
      AllDay: true,
    });
    expect(timed.sources[0].allDay).toBe(true);
    // A bare date DTEND on a date-time DTSTART is still a mismatch.
    expect(problems(ics(...event('UID:m', 'DTSTART:20260105T090000Z', 'DTEND:20260106')))).toEqual([
      'line 6: DTEND: must be a date-time like DTSTART, not a date',
    ]);
  });

  it('keeps an event whose SUMMARY is over 500 characters, its Name cut with … and the cut reported', () => {
    const long = 'Board meeting '.repeat(50); // 700 characters
    const imported = importCalendar(ics(...event('UID:s', `SUMMARY:${long}`, 'DTSTART:20260105T090000Z')));
    const name = imported.ScheduleItems[0].Name!;
    expect(name).toHaveLength(500);
    expect(name).toBe(`${long.slice(0, 499)}…`);
    expect(imported.skipped).toEqual([
      {
        line: 5,
        component: 'SUMMARY',
        uid: 's',
        reason:
          'line 5: SUMMARY: 700 characters, over the 500 a Name may have: cut to 500 (ending in …); the event is imported',
      },
    ]);
    // Never inside a surrogate pair: an emoji across the cut is dropped whole.
    const emoji = `${'x'.repeat(498)}😀${'y'.repeat(10)}`;
    const cut = importCalendar(ics(...event('UID:e', `SUMMARY:${emoji}`, 'DTSTART:20260105T090000Z')));
    expect(cut.ScheduleItems[0].Name).toBe(`${'x'.repeat(498)}…`);
    // At the limit nothing is cut or reported.
    const exact = importCalendar(
      ics(...event('UID:x', `SUMMARY:${'z'.repeat(500)}`, 'DTSTART:20260105T090000Z')),
    );
    expect(exact.ScheduleItems[0].Name).toHaveLength(500);
    expect(exact.skipped).toEqual([]);
  });

  it('keeps an event with two SUMMARY lines: the first is the Name, the second is reported', () => {
    const imported = importCalendar(
      ics(...event('UID:t', 'SUMMARY:First', 'SUMMARY:Second', 'DTSTART:20260105T090000Z')),
    );
    expect(imported.ScheduleItems[0].Name).toBe('First');
    expect(imported.skipped).toEqual([
      {
        line: 6,
        component: 'SUMMARY',
        uid: 't',
        reason:
          'line 6: SUMMARY: appears more than once in this VEVENT (first at line 5): left out, the first is the Name',
      },
    ]);
  });

  it('maps several RDATE/EXDATE lines and comma lists, and overrides to exceptions', () => {
    const [item] = items(
      ics(
        ...event(
          'UID:s',
          'DTSTART;TZID=Europe/Berlin:20260105T090000',
          'DTEND;TZID=Europe/Berlin:20260105T100000',
          'RRULE:FREQ=DAILY;COUNT=10',
          'RDATE;TZID=Europe/Berlin:20260201T090000,20260202T090000',
          'RDATE:20260203T080000Z',
          'EXDATE;TZID=Europe/Berlin:20260106T090000',
          'EXDATE:20260107T080000Z,20260108T080000Z',
        ),
        ...event(
          'UID:s',
          'RECURRENCE-ID;TZID=Europe/Berlin:20260109T090000',
          'DTSTART;TZID=America/New_York:20260109T050000',
          'DTEND;TZID=America/New_York:20260109T060000',
        ),
        ...event('UID:s', 'RECURRENCE-ID:20260110T080000Z', 'STATUS:CANCELLED', 'DTSTART:20260110T080000Z'),
        // Changes neither start nor end (e.g. only the SUMMARY): nothing to store.
        ...event(
          'UID:s',
          'RECURRENCE-ID:20260111T080000Z',
          'SUMMARY:renamed',
          'DTSTART;TZID=Europe/Berlin:20260111T090000',
          'DTEND;TZID=Europe/Berlin:20260111T100000',
        ),
      ),
    );
    expect(item.Recurrence).toEqual({
      Pattern: 'FREQ=DAILY;COUNT=10',
      RecurrenceType: 'Daily',
      Interval: '1',
      RecurrenceDates: [
        '2026-02-01T09:00:00+01:00',
        '2026-02-02T09:00:00+01:00',
        '2026-02-03T09:00:00+01:00',
      ],
      ExceptionDates: ['2026-01-06T09:00:00+01:00', '2026-01-07T09:00:00+01:00', '2026-01-08T09:00:00+01:00'],
      Exceptions: [
        {
          OriginalTime: '2026-01-09T09:00:00+01:00',
          NewStartTime: '2026-01-09T11:00:00+01:00',
          NewEndTime: '2026-01-09T12:00:00+01:00',
        },
        { OriginalTime: '2026-01-10T09:00:00+01:00', IsDeleted: true },
      ],
    });
  });

  it('reads an Exchange-style date-time RECURRENCE-ID on an all-day series as its calendar date', () => {
    const [item] = items(
      ics(
        'X-WR-TIMEZONE:Europe/London',
        ...event('UID:a', 'DTSTART;VALUE=DATE:20200402', 'DTEND;VALUE=DATE:20200403', 'RRULE:FREQ=WEEKLY'),
        ...event(
          'UID:a',
          'RECURRENCE-ID;TZID=GMT Standard Time:20200416T000000',
          'DTSTART;VALUE=DATE:20200417',
          'DTEND;VALUE=DATE:20200418',
        ),
      ),
    );
    expect(item.StartTimeZone).toBe('Europe/London');
    expect(item.Recurrence?.Exceptions).toEqual([
      {
        OriginalTime: '2020-04-16T00:00:00+01:00',
        NewStartTime: '2020-04-17T00:00:00+01:00',
        NewEndTime: '2020-04-18T00:00:00+01:00',
      },
    ]);
  });

  it('gives an all-day DTSTART + RDATE event its Duration, so its days stay whole across DST', () => {
    const [item] = items(
      ics(
        'X-WR-TIMEZONE:Europe/Berlin',
        ...event('UID:r', 'DTSTART;VALUE=DATE:20260320', 'RDATE;VALUE=DATE:20260329'),
      ),
    );
    expect(item.Recurrence).toEqual({
      Duration: 'P1D',
      RecurrenceDates: ['2026-03-29T00:00:00+01:00'],
    });
    const series = compileSeries(item);
    const days = series.occurrencesIn(Date.UTC(2026, 0, 1), Date.UTC(2027, 0, 1), 10);
    expect(days.map(({ start, end }) => (end - start) / 3_600_000)).toEqual([24, 23]);
  });

  it('marks DATE events AllDay, not timed ones nor a DATE event that lasts no day', () => {
    const imported = items(
      ics(
        'X-WR-TIMEZONE:Europe/Berlin',
        ...event('UID:d', 'DTSTART;VALUE=DATE:20260327', 'DTEND;VALUE=DATE:20260330'),
        ...event('UID:w', 'DTSTART;VALUE=DATE:20260105', 'DURATION:P1W', 'RRULE:FREQ=MONTHLY'),
        ...event('UID:t', 'DTSTART:20260105T090000'),
        ...event('UID:z', 'DTSTART;VALUE=DATE:20260105', 'DTEND;VALUE=DATE:20260105'),
      ),
    );
    expect(imported.map(({ Start, End, AllDay }) => [Start, End, AllDay])).toEqual([
      ['2026-03-27T00:00:00+01:00', '2026-03-30T00:00:00+02:00', true],
      ['2026-01-05T00:00:00+01:00', '2026-01-12T00:00:00+01:00', true],
      ['2026-01-05T09:00:00+01:00', '2026-01-05T09:00:00+01:00', undefined],
      ['2026-01-05T00:00:00+01:00', '2026-01-05T00:00:00+01:00', undefined],
    ]);
    // What the import marks passes the engine's all-day checks.
    for (const item of imported) expect(() => compileSeries(item)).not.toThrow();
  });

  it('skips a DATE event whose DURATION has hours (RFC 5545 §3.8.2.5: dur-day or dur-week)', () => {
    const calendar = importCalendar(
      ics(
        ...event('UID:h', 'DTSTART;VALUE=DATE:20260105', 'DURATION:PT12H'),
        ...event('UID:ok', 'DTSTART;VALUE=DATE:20260105'),
      ),
    );
    expect(calendar.ScheduleItems).toHaveLength(1);
    expect(calendar.skipped.map((skip) => skip.reason)).toEqual([
      'line 6: DURATION: must be whole days or weeks (P1D, P1W) when DTSTART is a date (RFC 5545 §3.8.2.5: ' +
        'dur-day or dur-week)',
    ]);
  });

  it('keeps the wall time of a DTSTART in a DST gap as Recurrence.StartTime', () => {
    const [item] = items(
      ics(...event('UID:g', 'DTSTART;TZID=Europe/Berlin:20260329T023000', 'RRULE:FREQ=DAILY;COUNT=3')),
    );
    expect(item.Recurrence?.StartTime).toBe('2026-03-29T02:30:00');
  });

  it('imports an override whose master is missing as an event of its own', () => {
    expect(
      items(ics(...event('UID:o', 'RECURRENCE-ID:20260105T090000Z', 'DTSTART:20260106T090000Z'))),
    ).toMatchObject([{ Start: '2026-01-06T09:00:00Z', Recurrence: null }]);
  });

  it('names the line behind each field the engine may name', () => {
    const calendar = importCalendar(
      ics(
        ...event(
          'UID:1', // 4
          'SUMMARY:x', // 5
          'DTSTART:20260105T090000Z', // 6
          'RRULE:FREQ=DAILY', // 7
          'EXDATE:20260106T090000Z', // 8
          'EXDATE:20260107T090000Z,20260108T090000Z', // 9
        ),
        ...event('UID:1', 'RECURRENCE-ID:20260110T090000Z', 'DTSTART:20260110T100000Z'), // 11–14
      ),
    );
    const lineOf = (field: string) => calendar.lineOf(field);
    expect(lineOf('ScheduleItems[0].Name')).toEqual({ line: 5, property: 'SUMMARY' });
    expect(lineOf('ScheduleItems[0].Start')).toEqual({ line: 6, property: 'DTSTART' });
    expect(lineOf('ScheduleItems[0].Recurrence.Pattern')).toEqual({ line: 7, property: 'RRULE' });
    expect(lineOf('ScheduleItems[0].Recurrence.ExceptionDates[0]')?.line).toBe(8);
    expect(lineOf('ScheduleItems[0].Recurrence.ExceptionDates[2]')?.line).toBe(9);
    expect(lineOf('ScheduleItems[0].Recurrence.Exceptions[0].OriginalTime')?.line).toBe(13);
    expect(lineOf('ScheduleItems[0].Recurrence.Exceptions[0].NewStartTime')?.line).toBe(14);
    expect(lineOf('ScheduleItems[0].Recurrence.Exceptions[0]')).toEqual({ line: 11, property: 'VEVENT' });
    expect(lineOf('ScheduleItems[0].Something.Else')).toEqual({ line: 3, property: 'VEVENT' });
    expect(lineOf('Nothing')).toBeUndefined();
  });
});

describe('importCalendar: a calendar with nothing importable left is refused, naming the line', () => {
  it.each<[string, string, string[]]>([
    [
      'a bad date-time',
      'line 5: DTSTART: "20261301T090000" is not a date-time',
      event('UID:1', 'DTSTART:20261301T090000'),
    ],
    [
      'a bad date',
      'line 5: DTSTART: "20261301" is not a date (YYYYMMDD)',
      event('UID:1', 'DTSTART;VALUE=DATE:20261301'),
    ],
    ['no DTSTART', 'line 3: VEVENT: a VEVENT without DTSTART', event('UID:1', 'SUMMARY:x')],
    [
      'DTEND before DTSTART',
      'line 6: DTEND: is before DTSTART',
      event('UID:1', 'DTSTART:20260105T090000Z', 'DTEND:20260105T080000Z'),
    ],
    [
      'DTEND and DURATION',
      'line 7: DURATION: a VEVENT may have DTEND (line 6) or DURATION, not both',
      event('UID:1', 'DTSTART:20260105T090000Z', 'DTEND:20260105T100000Z', 'DURATION:PT1H'),
    ],
    [
      'EXRULE',
      'line 6: EXRULE: EXRULE (deprecated by RFC 5545) cannot be represented',
      event('UID:1', 'DTSTART:20260105T090000Z', 'EXRULE:FREQ=DAILY'),
    ],
    [
      'two RRULEs',
      'line 7: RRULE: more than one RRULE in a VEVENT (first at line 6) cannot be represented',
      event('UID:1', 'DTSTART:20260105T090000Z', 'RRULE:FREQ=DAILY', 'RRULE:FREQ=WEEKLY'),
    ],
    [
      'EXDATE periods',
      'line 6: EXDATE: VALUE=PERIOD cannot be represented',
      event('UID:1', 'DTSTART:20260105T090000Z', 'EXDATE;VALUE=PERIOD:20260106T090000Z/PT1H'),
    ],
    [
      'an unknown TZID',
      'line 5: DTSTART: TZID "Mars/Olympus" is neither an IANA nor a Windows zone id, and the calendar has no VTIMEZONE for it',
      event('UID:1', 'DTSTART;TZID=Mars/Olympus:20260105T090000'),
    ],
    ['no VEVENT', 'line 1: VCALENDAR: the calendar has no VEVENT', []],
    [
      'an iTIP cancellation',
      'line 3: METHOD: METHOD:CANCEL is a scheduling message about events (RFC 5546), not a calendar',
      ['METHOD:CANCEL', ...event('UID:1', 'DTSTART:20260105T090000Z')],
    ],
    [
      'an unclosed VEVENT',
      'line 5: END: END:VCALENDAR closes BEGIN:VEVENT of line 3',
      ['BEGIN:VEVENT', 'UID:1'],
    ],
    [
      'a mismatched END',
      'line 5: END: END:VTODO closes BEGIN:VEVENT of line 3',
      ['BEGIN:VEVENT', 'UID:1', 'END:VTODO'],
    ],
    ['a line ical.js cannot parse', 'line 3: GARBAGE', ['GARBAGE']],
  ])('%s', (_name, expected, lines) => {
    expect(problems(ics(...lines))[0]).toContain(expected);
  });

  it('reports every bad event at once', () => {
    expect(
      problems(
        ics(...event('UID:1', 'DTSTART:2026'), ...event('UID:2', 'DTSTART;TZID=Nowhere:20260105T090000')),
      ),
    ).toEqual([
      expect.stringMatching(/^line 5: DTSTART: "2026"/),
      expect.stringMatching(/^line 9: DTSTART: TZID "Nowhere"/),
    ]);
  });

  it(`refuses more than ${MAX_IMPORTED_ITEMS} events, naming the first one too many`, () => {
    const lines = Array.from({ length: MAX_IMPORTED_ITEMS + 1 }, (_, index) =>
      event(`UID:${index}`, 'DTSTART:20260105T090000Z'),
    ).flat();
    expect(problems(ics(...lines))).toEqual([
      expect.stringMatching(
        new RegExp(
          `^line ${3 + MAX_IMPORTED_ITEMS * 4}: VEVENT: the calendar has more than ${MAX_IMPORTED_ITEMS} events`,
        ),
      ),
    ]);
  });

  it('refuses content outside the VCALENDAR and an empty body', () => {
    expect(problems('')[0]).toMatch(/^line 1: the body is empty/);
    expect(problems('{}')[0]).toBe('line 1: content before BEGIN:VCALENDAR; the body must start with it');
    expect(problems('BEGIN:VCALENDAR\r\nVERSION:2.0')[0]).toBe(
      'line 1: BEGIN: BEGIN:VCALENDAR is never closed with END:VCALENDAR',
    );
    expect(problems(`${ics(...event('UID:1', 'DTSTART:20260105T090000Z'))}X:1\r\n`)[0]).toMatch(
      /^line 8: X: content after END:VCALENDAR/,
    );
  });
});

describe('importCalendar: skip and report', () => {
  const valid = event('UID:ok', 'DTSTART:20260105T090000Z');

  it.each<[string, string[], { line: number; component: string; uid: string | null; reason: RegExp }]>([
    [
      'a VTODO beside events',
      ['BEGIN:VTODO', 'UID:todo-1', 'SUMMARY:x', 'END:VTODO'],
      {
        line: 3,
        component: 'VTODO',
        uid: 'todo-1',
        reason: /^line 3: VTODO: VTODO components \(to-dos\) cannot/,
      },
    ],
    [
      'a VJOURNAL',
      ['BEGIN:VJOURNAL', 'UID:j', 'END:VJOURNAL'],
      { line: 3, component: 'VJOURNAL', uid: 'j', reason: /journal entries/ },
    ],
    [
      'a cancelled event',
      event('UID:c', 'STATUS:CANCELLED', 'DTSTART:20260105T090000Z'),
      { line: 3, component: 'VEVENT', uid: 'c', reason: /^line 5: STATUS: a cancelled event/ },
    ],
    [
      'an impossible date',
      event('UID:bad', 'DTSTART:20260231T090000Z'),
      {
        line: 3,
        component: 'VEVENT',
        uid: 'bad',
        reason: /^line 5: DTSTART: "20260231T090000Z" is not a date-time/,
      },
    ],
    [
      'a line ical.js cannot parse inside an event',
      event('UID:p', 'DTSTART;TZID="unclosed:20260105T090000', 'DTEND:20260105T100000Z'),
      { line: 3, component: 'VEVENT', uid: 'p', reason: /^line 5: DTSTART: cannot be parsed/ },
    ],
    [
      'an unknown zone without VTIMEZONE',
      event('UID:z', 'DTSTART;TZID=Mars/Olympus:20260105T090000'),
      { line: 3, component: 'VEVENT', uid: 'z', reason: /TZID "Mars\/Olympus" is neither/ },
    ],
    [
      "a zone whose VTIMEZONE matches no IANA zone and changes its rules within the events' span",
      [
        'BEGIN:VTIMEZONE',
        'TZID:Shifting',
        ...[
          'BEGIN:STANDARD',
          'DTSTART:19700101T000000',
          'TZOFFSETFROM:+0117',
          'TZOFFSETTO:+0117',
          'END:STANDARD',
        ],
        ...[
          'BEGIN:STANDARD',
          'DTSTART:20260601T000000',
          'TZOFFSETFROM:+0117',
          'TZOFFSETTO:+0217',
          'END:STANDARD',
        ],
        'END:VTIMEZONE',
        ...event('UID:s', 'DTSTART;TZID=Shifting:20260105T090000'),
      ],
      {
        line: 16,
        component: 'VEVENT',
        uid: 's',
        reason:
          /^line 18: DTSTART: TZID "Shifting": its VTIMEZONE \(line 3\) names no known zone, .*POSIX TZ string/,
      },
    ],
  ])('%s is skipped, the rest imported', (_name, lines, expected) => {
    const calendar = importCalendar(ics(...lines, ...valid));
    expect(calendar.ScheduleItems).toHaveLength(1);
    expect(calendar.skipped).toEqual([
      {
        line: expected.line,
        component: expected.component,
        uid: expected.uid,
        reason: expect.stringMatching(expected.reason),
      },
    ]);
  });

  it('skips a broken override alone and keeps its series', () => {
    const calendar = importCalendar(
      ics(
        ...event('UID:1', 'DTSTART:20260105T090000Z', 'RRULE:FREQ=DAILY'),
        ...event('UID:1', 'RECURRENCE-ID:20260106T090000Z', 'DTSTART:20260106T100000Z', 'RRULE:FREQ=DAILY'),
        ...event('UID:1', 'RECURRENCE-ID:20260107T090000Z', 'DTSTART:20260107T100000Z'),
      ),
    );
    expect(calendar.ScheduleItems[0].Recurrence?.Exceptions).toEqual([
      {
        OriginalTime: '2026-01-07T09:00:00Z',
        NewStartTime: '2026-01-07T10:00:00Z',
        NewEndTime: '2026-01-07T10:00:00Z',
      },
    ]);
    expect(calendar.skipped).toEqual([
      {
        line: 8,
        component: 'VEVENT',
        uid: '1',
        reason: expect.stringMatching(
          /^line 12: RRULE: an override \(RECURRENCE-ID, line 10\) with its own RRULE/,
        ),
      },
    ]);
  });

  it('refuses when nothing importable remains, naming every skipped component', () => {
    expect(
      problems(
        ics(
          'BEGIN:VTODO',
          'UID:t',
          'END:VTODO',
          ...event('UID:c', 'STATUS:CANCELLED', 'DTSTART:20260105T090000Z'),
        ),
      ),
    ).toEqual([
      expect.stringMatching(/^line 3: VTODO: VTODO components/),
      expect.stringMatching(/^line 8: STATUS: a cancelled event/),
    ]);
    expect(problems(ics('BEGIN:VTODO', 'UID:t', 'END:VTODO'))).toEqual([
      expect.stringMatching(/^line 3: VTODO/),
      expect.stringMatching(/^line 1: VCALENDAR: the calendar has no VEVENT/),
    ]);
  });

  it('keeps the highest SEQUENCE of two updates of one moved occurrence, then the latest DTSTAMP, then the last', () => {
    const override = (sequence: string, stamp: string, start: string) =>
      event('UID:m', sequence, stamp, 'RECURRENCE-ID:20260107T090000Z', `DTSTART:${start}`);
    const calendar = importCalendar(
      ics(
        ...event('UID:m', 'DTSTART:20260105T090000Z', 'RRULE:FREQ=DAILY'),
        ...override('SEQUENCE:2', 'DTSTAMP:20260101T000000Z', '20260107T120000Z'), // line 8
        ...override('SEQUENCE:1', 'DTSTAMP:20260102T000000Z', '20260107T110000Z'), // line 15
      ),
    );
    expect(calendar.ScheduleItems[0].Recurrence?.Exceptions).toMatchObject([
      { NewStartTime: '2026-01-07T12:00:00Z' },
    ]);
    expect(calendar.skipped).toEqual([
      {
        line: 15,
        component: 'VEVENT',
        uid: 'm',
        reason:
          'line 15: VEVENT: an older version (SEQUENCE 1) of the VEVENT at line 8 (SEQUENCE 2), which replaces it',
      },
    ]);
    // Same SEQUENCE: the later DTSTAMP; same DTSTAMP too: the later in the file.
    const byStamp = importCalendar(
      ics(
        ...event('UID:m', 'DTSTART:20260105T090000Z', 'RRULE:FREQ=DAILY'),
        ...override('SEQUENCE:1', 'DTSTAMP:20260103T000000Z', '20260107T120000Z'),
        ...override('SEQUENCE:1', 'DTSTAMP:20260102T000000Z', '20260107T110000Z'),
        ...override('SEQUENCE:1', 'DTSTAMP:20260103T000000Z', '20260107T130000Z'),
      ),
    );
    expect(byStamp.ScheduleItems[0].Recurrence?.Exceptions).toMatchObject([
      { NewStartTime: '2026-01-07T13:00:00Z' },
    ]);
    expect(byStamp.skipped.map((entry) => entry.line)).toEqual([8, 15]);
  });

  it('treats overrides naming one occurrence in different spellings as versions too', () => {
    const calendar = importCalendar(
      ics(
        ...event('UID:w', 'DTSTART;TZID=Europe/Berlin:20260105T090000', 'RRULE:FREQ=DAILY'),
        ...event('UID:w', 'SEQUENCE:2', 'RECURRENCE-ID:20260107T080000Z', 'DTSTART:20260107T120000Z'),
        ...event(
          'UID:w',
          'SEQUENCE:1',
          'RECURRENCE-ID;TZID=Europe/Berlin:20260107T090000',
          'DTSTART:20260107T110000Z',
        ),
      ),
    );
    expect(calendar.ScheduleItems[0].Recurrence?.Exceptions).toMatchObject([
      { OriginalTime: '2026-01-07T09:00:00+01:00', NewStartTime: '2026-01-07T13:00:00+01:00' },
    ]);
    expect(calendar.skipped.map((entry) => entry.line)).toEqual([14]);
  });

  it('keeps the newest of several masters with one UID; a feed repeating one UID for different events imports each', () => {
    const versions = importCalendar(
      ics(
        ...event('UID:v', 'SEQUENCE:3', 'DTSTART:20260105T090000Z', 'DTSTAMP:20260101T000000Z'),
        ...event('UID:v', 'SEQUENCE:1', 'DTSTART:20260106T090000Z'),
        // An edit that kept SEQUENCE and DTSTART: its later DTSTAMP makes it the newer version.
        ...event(
          'UID:v',
          'SEQUENCE:3',
          'DTSTART:20260105T090000Z',
          'DTSTAMP:20260102T000000Z',
          'SUMMARY:copy',
        ),
      ),
    );
    expect(versions.ScheduleItems).toMatchObject([{ Name: 'copy', Start: '2026-01-05T09:00:00Z' }]);
    expect(versions.skipped.map((entry) => entry.line)).toEqual([3, 9]);
    const feed = importCalendar(
      ics(...event('UID:same', 'DTSTART:20260105T090000Z'), ...event('UID:same', 'DTSTART:20260106T090000Z')),
    );
    expect(feed.ScheduleItems.map((item) => item.Start)).toEqual([
      '2026-01-05T09:00:00Z',
      '2026-01-06T09:00:00Z',
    ]);
    expect(feed.skipped).toEqual([]);
    // Each its own series (schedule), keyed by the UID and its start as read (and as written, for earlier imports).
    expect(feed.sources).toEqual([
      {
        line: 3,
        uid: 'same',
        key: 'same\n2026-01-05T09:00:00.000Z',
        writtenKey: 'same\n|20260105T090000Z',
        allDay: false,
        sequence: 0,
      },
      {
        line: 7,
        uid: 'same',
        key: 'same\n2026-01-06T09:00:00.000Z',
        writtenKey: 'same\n|20260106T090000Z',
        allDay: false,
        sequence: 0,
      },
    ]);
  });

  it('derives a stable UID for an event without one (SHA-256 of DTSTART, SUMMARY, RRULE)', () => {
    const text = ics(
      ...event('SUMMARY:OWA', 'DTSTART:20260105T090000Z'),
      ...event('UID:x', 'DTSTART:20260105T090000Z'),
    );
    const first = importCalendar(text);
    expect(first.ScheduleItems).toHaveLength(2);
    expect(first.sources[0].uid).toMatch(/^[0-9a-f]{32}@derived-uid\.platform-api$/);
    expect(importCalendar(text).sources[0].uid).toBe(first.sources[0].uid);
    const other = importCalendar(ics(...event('SUMMARY:OWA 2', 'DTSTART:20260105T090000Z')));
    expect(other.sources[0].uid).not.toBe(first.sources[0].uid);
  });

  it('drops items refused later and maps the remaining fields to their lines', () => {
    const calendar = importCalendar(
      ics(
        ...event('UID:a', 'DTSTART:20260105T090000Z'),
        ...event('UID:b', 'DTSTART:20260106T090000Z', 'RRULE:FREQ=DAILY'),
      ),
    );
    const rest = withoutItems(calendar, new Map([[0, 'line 3: refused']]));
    expect(rest.ScheduleItems).toMatchObject([{ Start: '2026-01-06T09:00:00Z' }]);
    expect(rest.skipped).toEqual([{ line: 3, component: 'VEVENT', uid: 'a', reason: 'line 3: refused' }]);
    expect(rest.lineOf('ScheduleItems[0].Recurrence.Pattern')).toEqual({ line: 10, property: 'RRULE' });
  });
});

describe('importCalendar: vendor quirks read as meant', () => {
  it('Exchange’s quoted TZID holding the value', () => {
    expect(repairContentLine('DTSTART;TZID="W. Europe Standard Time:20200609T090000"', 'DTSTART')).toBe(
      'DTSTART;TZID="W. Europe Standard Time":20200609T090000',
    );
    // A correctly quoted parameter with a colon is left alone.
    expect(repairContentLine('DTSTART;TZID="a:b":20200609T090000', 'DTSTART')).toBe(
      'DTSTART;TZID="a:b":20200609T090000',
    );
    const [item] = items(ics(...event('UID:q', 'DTSTART;TZID="W. Europe Standard Time:20200609T090000"')));
    expect(item).toMatchObject({ Start: '2020-06-09T09:00:00+02:00', StartTimeZone: 'Europe/Berlin' });
  });

  it('CDO’s spaces in BYDAY lists', () => {
    const [item] = items(
      ics(
        ...event(
          'UID:d',
          'DTSTART:20150703T080000Z',
          'RRULE:FREQ=DAILY;UNTIL=20150722T080000Z;INTERVAL=1;BYDAY=MO, TU, WE, TH, FR',
          ' ;WKST=SU',
        ),
      ),
    );
    expect(item.Recurrence?.Pattern).toBe(
      'FREQ=DAILY;UNTIL=20150722T080000Z;INTERVAL=1;BYDAY=MO,TU,WE,TH,FR;WKST=SU',
    );
  });

  it('Google Birthdays’ date with Z (RDATE:20131210Z) is that date', () => {
    const [item] = items(
      ics(
        ...event(
          'UID:b',
          'DTSTART;VALUE=DATE:20131210',
          'DTEND;VALUE=DATE:20131211',
          'RRULE:FREQ=YEARLY',
          'RDATE:20131210Z',
        ),
      ),
    );
    expect(item.Recurrence?.RecurrenceDates).toEqual(['2013-12-10T00:00:00Z']);
  });

  it('a bare date in EXDATE/RDATE of a timed series is the occurrence on that local date', () => {
    const [item] = items(
      ics(
        ...event(
          'UID:e',
          'DTSTART;TZID=America/New_York:20200109T093000',
          'RRULE:FREQ=WEEKLY',
          'EXDATE:20200116',
          'EXDATE;VALUE=DATE:20200123',
          'RDATE;VALUE=DATE:20200704',
        ),
      ),
    );
    expect(item.Recurrence).toMatchObject({
      ExceptionDates: ['2020-01-16T09:30:00-05:00', '2020-01-23T09:30:00-05:00'],
      RecurrenceDates: ['2020-07-04T09:30:00-04:00'],
    });
    const [utc] = items(
      ics(...event('UID:u', 'DTSTART:20200109T143000Z', 'RRULE:FREQ=DAILY', 'EXDATE:20200116')),
    );
    expect(utc.Recurrence?.ExceptionDates).toEqual(['2020-01-16T14:30:00Z']);
  });

  it('a floating UNTIL is read in DTSTART’s zone (kept as written for the engine)', () => {
    const [item] = items(
      ics(
        ...event(
          'UID:f',
          'DTSTART;TZID=Europe/Berlin:20260105T090000',
          'RRULE:FREQ=DAILY;UNTIL=20260107T090000',
        ),
      ),
    );
    const series = compileSeries(item);
    expect(
      series
        .occurrencesIn(Date.UTC(2026, 0, 1), Date.UTC(2026, 1, 1), 10)
        .map(({ start }) => new Date(start).toISOString()),
    ).toEqual(['2026-01-05T08:00:00.000Z', '2026-01-06T08:00:00.000Z', '2026-01-07T08:00:00.000Z']);
  });
});

describe('zones', () => {
  it.each([
    ['W. Europe Standard Time', 'Europe/Berlin'],
    ['"Eastern Standard Time"', 'America/New_York'],
    ['/softwarestudio.org/Tzfile/Europe/Paris', 'Europe/Paris'],
    ['europe/berlin', 'Europe/Berlin'],
    ['Customized Time Zone', undefined],
    ['/Europe/Stockholm', 'Europe/Stockholm'],
    ['/mozilla.org/20070129_1/Europe/Stockholm', 'Europe/Stockholm'],
    ['(UTC-05:00) Eastern Time (US & Canada)', 'America/New_York'],
    ['Eastern Time (US & Canada)', 'America/New_York'],
    ['(UTC+01:00) Amsterdam, Berlin, Bern, Rome, Stockholm, Vienna', 'Europe/Berlin'],
    ['Amsterdam, Berlin, Bern, Rome, Stockholm, Vienna', 'Europe/Berlin'],
    ['Amsterdam, Belgrade, Berlin, Brussels, …', 'Europe/Berlin'],
    ['(GMT+02:00) Athens, Bucharest, Istanbul', 'Europe/Bucharest'],
    ['(UTC+05:30) Chennai, Kolkata, Mumbai, New Delhi', 'Asia/Kolkata'],
    ['UTC+01', undefined],
  ])('%s by name → %s', (name, zone) => {
    expect(zoneFromName(name)).toBe(zone);
  });

  it.each([
    ['UTC+01', 3_600_000],
    ['GMT-05:00', -18_000_000],
    ['UTC+0530', 19_800_000],
    ['(UTC+01:00) Somewhere new', 3_600_000],
    ['UTC', undefined],
    ['UTC+15', undefined],
  ])('offset spelled by %s: %s ms', (name, offset) => {
    expect(offsetFromName(name)).toBe(offset);
  });

  it('takes a name that is only an offset as a fixed zone where nothing better is named', () => {
    const at = Date.UTC(2020, 3, 16);
    expect(resolveTzid('UTC+01', undefined, at, at)).toEqual({ zone: 'Etc/GMT-1', source: 'fixed-offset' });
    expect(resolveTzid('GMT-05:00', undefined, at, at)).toEqual({
      zone: 'Etc/GMT+5',
      source: 'fixed-offset',
    });
    expect(resolveTzid('UTC+05:30', undefined, at, at)).toEqual({
      zone: 'Asia/Kolkata',
      source: 'fixed-offset',
    });
    expect(
      resolveTzid('(UTC+01:00) Amsterdam, Berlin, Bern, Rome, Stockholm, Vienna', undefined, at, at),
    ).toEqual({
      zone: 'Europe/Berlin',
      source: 'name',
    });
  });

  const vtimezone = (lines: string[]) =>
    new ICAL.Component(
      ICAL.parse(['BEGIN:VCALENDAR', ...lines, 'END:VCALENDAR'].join('\r\n')) as unknown[],
    ).getFirstSubcomponent('vtimezone')!;
  const from = Date.UTC(2026, 0, 1);

  it('matches a VTIMEZONE to the IANA zone with the same offsets, primary zones first', () => {
    expect(zoneFromOffsets(vtimezone(BERLIN_VTIMEZONE), from, from)).toBe('Europe/Berlin');
  });

  it('takes Etc/GMT±h for a VTIMEZONE without changes, and refuses offsets no zone has', () => {
    const fixed = (offset: string) => [
      'BEGIN:VTIMEZONE',
      'TZID:x',
      'BEGIN:STANDARD',
      `TZOFFSETFROM:${offset}`,
      `TZOFFSETTO:${offset}`,
      'DTSTART:19700101T000000',
      'END:STANDARD',
      'END:VTIMEZONE',
    ];
    expect(zoneFromOffsets(vtimezone(fixed('+0300')), from, from)).toBe('Etc/GMT-3');
    expect(zoneFromOffsets(vtimezone(fixed('+0000')), from, from)).toBe('UTC');
    expect(zoneFromOffsets(vtimezone(fixed('+0117')), from, from)).toBeUndefined();
  });
});
