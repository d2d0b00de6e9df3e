// Calendars of real producers the import once refused or misread: Lotus Notes' RDATE periods, Mozilla Calendar 1.x's
// floating DTEND, RFC 5545's own `METHOD:xyz`, Google's all-day `DURATION:PT86400S` and a conference feed that gives
// parallel talks one UID. Fixtures: test/fixtures/ical (sources in SOURCES.md).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { IcalImportError, importCalendar } from './ical-import.js';

const FIXTURES = new URL('../../../test/fixtures/ical/', import.meta.url);
const fixture = (name: string) => readFileSync(new URL(name, FIXTURES), 'utf8');

function calendar(...lines: string[]): string {
  return ['BEGIN:VCALENDAR', 'VERSION:2.0', ...lines, 'END:VCALENDAR', ''].join('\r\n');
}

function event(...lines: string[]): string[] {
  return ['BEGIN:VEVENT', ...lines, 'END:VEVENT'];
}

function problems(text: string): string[] {
  try {
    importCalendar(text);
  } catch (error) {
    if (error instanceof IcalImportError) return error.problems.map((p) => `line ${p.line}: ${p.message}`);
    throw error;
  }
  throw new Error('imported without a problem');
}

describe('RDATE;VALUE=PERIOD (Lotus Notes)', () => {
  it('imports the period starts; a period of another length keeps it as an exception', () => {
    const imported = importCalendar(fixture('lotus-notes-rdate-period.ics'));
    expect(imported.skipped).toEqual([]);
    expect(imported.ScheduleItems).toEqual([
      {
        Name: null,
        Start: '2021-06-30T10:00:00Z',
        End: '2021-06-30T11:00:00Z',
        StartTimeZone: 'UTC',
        Recurrence: {
          RecurrenceDates: [
            '2021-06-30T10:00:00Z',
            '2021-08-25T10:00:00Z',
            '2021-10-27T10:00:00Z',
            '2021-12-15T11:00:00Z',
          ],
          Exceptions: [
            {
              OriginalTime: '2021-12-15T11:00:00Z',
              NewStartTime: '2021-12-15T11:00:00Z',
              NewEndTime: '2021-12-15T13:00:00Z',
            },
          ],
        },
      },
    ]);
    expect(imported.lineOf('ScheduleItems[0].Recurrence.RecurrenceDates[3]')).toEqual({
      line: 9,
      property: 'RDATE',
    });
    expect(imported.lineOf('ScheduleItems[0].Recurrence.Exceptions[0].NewEndTime')).toEqual({
      line: 9,
      property: 'RDATE',
    });
  });

  it('reads periods with a TZID in that zone, end or duration alike', () => {
    const imported = importCalendar(
      calendar(
        ...event(
          'UID:p',
          'DTSTART;TZID=Europe/Berlin:20260105T090000',
          'DTEND;TZID=Europe/Berlin:20260105T100000',
          'RDATE;VALUE=PERIOD;TZID=Europe/Berlin:20260106T090000/20260106T100000,20260107T090000/PT1H',
        ),
      ),
    );
    expect(imported.ScheduleItems[0].Recurrence).toEqual({
      RecurrenceDates: ['2026-01-06T09:00:00+01:00', '2026-01-07T09:00:00+01:00'],
    });
  });

  it('khal’s periods under a quoted Windows TZID are read in that zone', () => {
    // The file's one event is an override with RANGE=THISANDFUTURE (refused); as a master with a UID it imports.
    const text = fixture('khal-rdate-period.ics')
      .replace('RECURRENCE-ID;RANGE=THISANDFUTURE:20180327T130000Z\r\n', '')
      .replace('BEGIN:VEVENT\r\n', 'BEGIN:VEVENT\r\nUID:khal-1\r\n');
    const imported = importCalendar(text);
    expect(imported.skipped).toEqual([]);
    const dates = imported.ScheduleItems[0].Recurrence?.RecurrenceDates ?? [];
    expect(dates).toHaveLength(19);
    expect([dates[0], dates[18]]).toEqual(['2018-03-27T08:00:00-05:00', '2018-07-31T08:00:00-05:00']);
    expect(imported.ScheduleItems[0].Recurrence?.Exceptions).toBeUndefined();
  });

  it('an override of a period’s occurrence wins over the period’s own length', () => {
    const imported = importCalendar(
      calendar(
        ...event(
          'UID:p',
          'DTSTART:20260105T090000Z',
          'DURATION:PT1H',
          'RDATE;VALUE=PERIOD:20260106T090000Z/PT3H',
        ),
        ...event('UID:p', 'RECURRENCE-ID:20260106T090000Z', 'DTSTART:20260106T100000Z', 'DURATION:PT1H'),
      ),
    );
    expect(imported.ScheduleItems[0].Recurrence?.Exceptions).toEqual([
      {
        OriginalTime: '2026-01-06T09:00:00Z',
        NewStartTime: '2026-01-06T10:00:00Z',
        NewEndTime: '2026-01-06T11:00:00Z',
      },
    ]);
  });

  it('on an all-day event a period is its date, and its own length is reported', () => {
    const imported = importCalendar(
      calendar(...event('UID:d', 'DTSTART;VALUE=DATE:20260105', 'RDATE;VALUE=PERIOD:20260107T090000Z/PT2H')),
    );
    expect(imported.ScheduleItems[0]).toMatchObject({
      AllDay: true,
      Recurrence: { RecurrenceDates: ['2026-01-07T00:00:00Z'] },
    });
    expect(imported.skipped).toEqual([
      {
        line: 6,
        component: 'RDATE',
        uid: 'd',
        reason: expect.stringMatching(
          /^line 6: RDATE: the period starting 2026-01-07T00:00:00Z lasts 120 minutes/,
        ),
      },
    ]);
  });

  it('a malformed period skips its event only, naming the line', () => {
    const imported = importCalendar(
      calendar(
        ...event(
          'UID:bad',
          'DTSTART:20260105T090000Z',
          'RDATE;VALUE=PERIOD:20260106T090000Z/20260106T080000Z',
        ),
        ...event('UID:good', 'DTSTART:20260105T090000Z'),
      ),
    );
    expect(imported.sources.map((source) => source.uid)).toEqual(['good']);
    expect(imported.skipped[0].reason).toBe(
      'line 6: RDATE: "20260106T090000Z/20260106T080000Z": the period ends before it starts',
    );
  });
});

describe('a floating DTEND beside a zoned DTSTART (Mozilla Calendar 1.x)', () => {
  it("is read in DTSTART's zone and reported", () => {
    const imported = importCalendar(fixture('mozilla-calendar1-floating-dtend.ics'));
    expect(imported.ScheduleItems).toEqual([
      {
        Name: 'Staff meeting',
        Start: '2006-07-18T09:00:00-04:00',
        End: '2006-07-18T10:00:00-04:00',
        StartTimeZone: 'America/New_York',
        Recurrence: {
          Pattern: 'FREQ=WEEKLY;COUNT=4;INTERVAL=1;BYDAY=TU',
          RecurrenceType: 'Weekly',
          Interval: '1',
        },
      },
    ]);
    expect(imported.skipped).toEqual([
      {
        line: 30,
        component: 'DTEND',
        uid: 'uuid1153170430406',
        reason:
          'line 30: DTEND: a floating time beside a DTSTART with TZID (RFC 5545 §3.3.5 reads it in no zone): read as ' +
          "2006-07-18 10:00:00 in DTSTART's zone America/New_York; the event is imported",
      },
    ]);
  });

  it('still names an end before the start, in that zone', () => {
    expect(
      problems(
        calendar(...event('UID:x', 'DTSTART;TZID=Europe/Berlin:20260105T090000', 'DTEND:20260105T080000')),
      ),
    ).toEqual(['line 6: is before DTSTART (both read in Europe/Berlin)']);
  });
});

describe('METHOD', () => {
  it('a value iTIP does not define (RFC 5545 §4 example 3, METHOD:xyz) is a calendar', () => {
    const imported = importCalendar(fixture('rfc5545-example3-method-xyz.ics'));
    expect(imported.ScheduleItems).toEqual([
      {
        Name: 'Calendaring Interoperability Planning Meeting',
        Start: '1997-03-24T12:30:00Z',
        End: '1997-03-24T21:00:00Z',
        StartTimeZone: 'UTC',
        Recurrence: null,
      },
    ]);
    expect(imported.skipped).toEqual([]);
  });

  it.each(['PUBLISH', 'REQUEST', 'ADD', 'X-CUSTOM'])('METHOD:%s is imported', (method) => {
    expect(
      importCalendar(calendar(`METHOD:${method}`, ...event('UID:a', 'DTSTART:20260105T090000Z'))).sources,
    ).toHaveLength(1);
  });

  it.each(['CANCEL', 'REPLY', 'REFRESH', 'COUNTER', 'DECLINECOUNTER'])(
    'METHOD:%s is a message, refused',
    (method) => {
      expect(problems(calendar(`METHOD:${method}`, ...event('UID:a', 'DTSTART:20260105T090000Z')))).toEqual([
        `line 3: METHOD:${method} is a scheduling message about events (RFC 5546), not a calendar of events to import`,
      ]);
    },
  );
});

describe('DURATION in seconds on an all-day event (Google)', () => {
  it('a multiple of 24 hours is whole days', () => {
    const imported = importCalendar(fixture('google-allday-duration-seconds.ics'));
    expect(imported.skipped).toEqual([]);
    expect(imported.ScheduleItems).toEqual([
      {
        Name: 'Home office',
        Start: '2026-01-05T00:00:00+01:00',
        End: '2026-01-06T00:00:00+01:00',
        StartTimeZone: 'Europe/Berlin',
        AllDay: true,
        Recurrence: {
          Pattern: 'FREQ=WEEKLY;COUNT=3;BYDAY=MO',
          RecurrenceType: 'Weekly',
          Interval: '1',
          Duration: 'P1D',
        },
      },
      {
        Name: 'Offsite',
        Start: '2026-01-12T00:00:00+01:00',
        End: '2026-01-15T00:00:00+01:00',
        StartTimeZone: 'Europe/Berlin',
        AllDay: true,
        Recurrence: null,
      },
    ]);
  });

  it('another length is still refused with its reason', () => {
    expect(
      problems(calendar(...event('UID:a', 'DTSTART;VALUE=DATE:20260105', 'DURATION:PT3600S')))[0],
    ).toContain('must be whole days or weeks (P1D, P1W) when DTSTART is a date');
  });
});

describe('parallel events with one UID and one DTSTART (a conference feed)', () => {
  it('keeps each talk as a series of its own and reports the parallel ones', () => {
    const imported = importCalendar(fixture('conference-feed-shared-uid.ics'));
    expect(imported.ScheduleItems.map((item) => `${item.Start} ${item.Name}`)).toEqual([
      '2026-06-12T09:00:00+02:00 Opening keynote',
      '2026-06-12T10:30:00+02:00 Rust in the kernel',
      '2026-06-12T10:30:00+02:00 Containers at scale',
      '2026-06-12T10:30:00+02:00 Accessible web forms',
      '2026-06-12T16:30:00+02:00 Lightning talks',
    ]);
    expect(imported.skipped.map((skipped) => skipped.reason)).toEqual([
      'line 24: VEVENT: shares its UID and DTSTART with the VEVENT at line 16 (same SEQUENCE and DTSTAMP) but has ' +
        'another SUMMARY or LOCATION: a parallel event, imported as a series of its own',
      'line 32: VEVENT: shares its UID and DTSTART with the VEVENT at line 16 (same SEQUENCE and DTSTAMP) but has ' +
        'another SUMMARY or LOCATION: a parallel event, imported as a series of its own',
    ]);
    // Keyed by UID and the start as read; the parallel talks share it (the store numbers repeated keys).
    expect(imported.sources.map((source) => source.key)).toEqual([
      'devconf-2026-schedule@conference.example\n2026-06-12T07:00:00.000Z',
      'devconf-2026-schedule@conference.example\n2026-06-12T08:30:00.000Z',
      'devconf-2026-schedule@conference.example\n2026-06-12T08:30:00.000Z',
      'devconf-2026-schedule@conference.example\n2026-06-12T08:30:00.000Z',
      'devconf-2026-schedule@conference.example\n2026-06-12T14:30:00.000Z',
    ]);
    expect(imported.sources[0].writtenKey).toBe(
      'devconf-2026-schedule@conference.example\nEurope/Prague|20260612T090000',
    );
  });

  it('copies (same content) and revisions (another DTSTAMP or SEQUENCE) are still versions of one event', () => {
    const master = (...extra: string[]) =>
      event('UID:u', 'DTSTART:20260105T090000Z', 'SUMMARY:Talk', 'LOCATION:Room A', ...extra);
    const copies = importCalendar(
      calendar(...master('DTSTAMP:20260101T000000Z'), ...master('DTSTAMP:20260101T000000Z')),
    );
    expect(copies.sources).toHaveLength(1);
    const revised = importCalendar(
      calendar(
        ...master('DTSTAMP:20260101T000000Z'),
        ...event(
          'UID:u',
          'DTSTART:20260105T090000Z',
          'SUMMARY:Talk (moved)',
          'LOCATION:Room B',
          'DTSTAMP:20260102T000000Z',
        ),
      ),
    );
    expect(revised.ScheduleItems.map((item) => item.Name)).toEqual(['Talk (moved)']);
    expect(revised.skipped[0].reason).toMatch(/an older version \(SEQUENCE 0\)/);
  });

  it('gives overrides to the master of their schedule when the export wrote its id', () => {
    const a = '11111111-1111-4111-8111-111111111111';
    const b = '22222222-2222-4222-8222-222222222222';
    const master = (id: string, summary: string) =>
      event(
        'UID:u',
        'DTSTART:20260105T090000Z',
        'DURATION:PT1H',
        'RRULE:FREQ=DAILY;COUNT=3',
        `SUMMARY:${summary}`,
        `X-PLATFORM-SCHEDULE-ID:${id}`,
      );
    const override = (id: string, start: string) =>
      event(
        'UID:u',
        'RECURRENCE-ID:20260106T090000Z',
        `DTSTART:${start}`,
        'DURATION:PT1H',
        `X-PLATFORM-SCHEDULE-ID:${id}`,
      );
    const imported = importCalendar(
      calendar(
        ...master(a, 'A'),
        ...override(a, '20260106T100000Z'),
        ...master(b, 'B'),
        ...override(b, '20260106T120000Z'),
      ),
    );
    expect(imported.skipped).toEqual([]);
    expect(imported.sources.map((source) => source.scheduleId)).toEqual([a, b]);
    expect(imported.ScheduleItems.map((item) => item.Recurrence?.Exceptions?.[0]?.NewStartTime)).toEqual([
      '2026-01-06T10:00:00Z',
      '2026-01-06T12:00:00Z',
    ]);
  });
});
