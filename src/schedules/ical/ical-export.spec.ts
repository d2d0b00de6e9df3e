import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import ICAL from 'ical.js';
import { expandWithIcalJs } from '../../../test/support/ical-import-oracle.js';
import { compileSeries } from '../recurrence/series-compiler.js';
import {
  escapeText,
  exportCalendar,
  foldLine,
  IcalExportError,
  joinLines,
  type ExportItem,
} from './ical-export.js';

const NOW = Date.UTC(2026, 10, 25, 10, 0, 0);
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;
const octets = (s: string) => Buffer.byteLength(s, 'utf8');

/** Undoes folding as RFC 5545 §3.1 says: remove every CRLF followed by one space or tab. */
const unfold = (s: string) => s.replace(/\r\n[ \t]/g, '');

describe('foldLine', () => {
  it('leaves a 75-octet line alone and folds a 76-octet one', () => {
    expect(foldLine('x'.repeat(75))).toBe('x'.repeat(75));
    expect(foldLine('x'.repeat(76))).toBe(`${'x'.repeat(75)}\r\n x`);
  });

  it('counts octets, not characters: a line of 40 "ä" (80 octets) folds before the 38th', () => {
    const folded = foldLine('ä'.repeat(40)).split('\r\n');
    expect(folded.map(octets)).toEqual([74, 7]);
    expect(folded[1]).toBe(' ' + 'ä'.repeat(3));
  });

  it('never splits a 4-octet character', () => {
    const line = `SUMMARY:${'a'.repeat(65)}${'😀'.repeat(5)}`;
    const folded = foldLine(line).split('\r\n');
    expect(folded[0]).toBe(`SUMMARY:${'a'.repeat(65)}`);
    expect(folded[1]).toBe(` ${'😀'.repeat(5)}`);
  });

  it('property: every physical line ≤ 75 octets, valid UTF-8, and unfolding gives the line back', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 400 }), (raw) => {
        const line = raw.replace(/[\r\n]/g, '');
        const folded = foldLine(line);
        for (const physical of folded.split('\r\n')) {
          expect(octets(physical)).toBeLessThanOrEqual(75);
          // A split surrogate pair or UTF-8 sequence would not survive encoding unchanged.
          expect(Buffer.from(physical, 'utf8').toString('utf8')).toBe(physical);
        }
        expect(unfold(folded)).toBe(line);
      }),
    );
  });
});

describe('escapeText', () => {
  it.each([
    ['a,b;c\\d', 'a\\,b\\;c\\\\d'],
    ['line 1\nline 2\r\nline 3\rline 4', 'line 1\\nline 2\\nline 3\\nline 4'],
    ['bell\u0007 and\ttab', 'bell and\ttab'],
    ['Grüße 😀', 'Grüße 😀'],
  ])('%j → %j', (input, expected) => expect(escapeText(input)).toBe(expected));

  it('property: ical.js reads the escaped text back as the original (control characters aside)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 200 }), (raw) => {
        const value = raw.replace(CONTROL, '').replace(/\r\n?/g, '\n');
        const calendar = joinLines([
          'BEGIN:VCALENDAR',
          'VERSION:2.0',
          'PRODID:-//test//EN',
          'BEGIN:VEVENT',
          'UID:x',
          'DTSTAMP:20260101T000000Z',
          'DTSTART:20260101T000000Z',
          `SUMMARY:${escapeText(value)}`,
          'END:VEVENT',
          'END:VCALENDAR',
        ]);
        const vevent = new ICAL.Component(ICAL.parse(calendar) as unknown[]).getFirstSubcomponent('vevent');
        expect(vevent?.getFirstPropertyValue('summary')).toBe(value);
      }),
    );
  });
});

function item(overrides: Partial<ExportItem> & { Recurrence?: ExportItem['Recurrence'] }): ExportItem {
  return {
    Id: '0c5b2f7e-3a41-4c8e-9a3b-5f6e7d8c9b0a',
    Name: 'Stand-up',
    Start: '2026-01-05T09:00:00+01:00',
    End: '2026-01-05T09:15:00+01:00',
    StartTimeZone: 'Europe/Berlin',
    Recurrence: null,
    ...overrides,
  };
}

const exportOne = (i: ExportItem) => exportCalendar([{ Id: 'sched-1', ScheduleItems: [i] }], NOW);
const lines = (calendar: string) => unfold(calendar).split('\r\n');

describe('exportCalendar', () => {
  it('writes a calendar with CRLF line ends, the header and one VTIMEZONE per zone', () => {
    const calendar = exportCalendar(
      [
        {
          Id: 's1',
          ScheduleItems: [
            item({ Recurrence: { Pattern: 'FREQ=WEEKLY;BYDAY=MO,WE,FR' } }),
            item({ Id: 'b', StartTimeZone: 'W. Europe Standard Time' }),
            item({ Id: 'c', StartTimeZone: 'Eastern Standard Time' }),
          ],
        },
      ],
      NOW,
    );
    expect(calendar.endsWith('END:VCALENDAR\r\n')).toBe(true);
    expect(calendar.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
    const all = lines(calendar);
    expect(all.slice(0, 5)).toEqual([
      'BEGIN:VCALENDAR',
      'VERSION:2.0',
      'PRODID:-//platform-api//Schedules iCalendar export 1.0//EN',
      'CALSCALE:GREGORIAN',
      'METHOD:PUBLISH',
    ]);
    expect(all.filter((l) => l.startsWith('TZID:'))).toEqual(['TZID:Europe/Berlin', 'TZID:America/New_York']);
    expect(all).toContain('DTSTART;TZID=Europe/Berlin:20260105T090000');
    expect(all).toContain('DTEND;TZID=Europe/Berlin:20260105T091500');
    expect(all).toContain('RRULE:FREQ=WEEKLY;BYDAY=MO,WE,FR');
    expect(all).toContain('DTSTART;TZID=America/New_York:20260105T030000');
    expect(all).toContain('DTSTAMP:20261125T100000Z');
  });

  it('writes items without a zone in UTC, and UNTIL in UTC', () => {
    const all = lines(
      exportOne(
        item({
          StartTimeZone: null,
          Start: '2026-01-05T09:00:00Z',
          End: null,
          Recurrence: { RecurrenceType: 'Daily', Interval: '2', EndTime: '2026-02-01T00:00:00+01:00' },
        }),
      ),
    );
    expect(all).toContain('DTSTART:20260105T090000Z');
    expect(all).toContain('RRULE:FREQ=DAILY;INTERVAL=2;UNTIL=20260131T230000Z');
    expect(all.some((l) => l.startsWith('DTEND') || l.startsWith('DURATION'))).toBe(false);
    expect(all.some((l) => l.startsWith('BEGIN:VTIMEZONE'))).toBe(false);
  });

  it('turns exceptions into EXDATE and RECURRENCE-ID overrides, RDATE/EXDATE lists into their properties', () => {
    const all = lines(
      exportOne(
        item({
          Recurrence: {
            Pattern: 'FREQ=WEEKLY;BYDAY=MO,WE,FR',
            RecurrenceDates: ['2026-01-10T09:00:00'],
            ExceptionDates: ['2026-01-07T08:00:00Z'],
            Exceptions: [
              { OriginalTime: '2026-01-09T08:00:00Z', IsDeleted: true },
              { OriginalTime: '2026-01-12T08:00:00Z', NewStartTime: '2026-01-12T12:00:00Z' },
              { OriginalTime: '2026-01-13T08:00:00Z', IsDeleted: true },
            ],
          },
        }),
      ),
    );
    expect(all).toContain('RDATE;TZID=Europe/Berlin:20260110T090000');
    // The Tuesday exception matches no occurrence, so it is left out as the engine ignores it.
    expect(all).toContain('EXDATE;TZID=Europe/Berlin:20260107T090000,20260109T090000');
    expect(all).toContain('RECURRENCE-ID;TZID=Europe/Berlin:20260112T090000');
    expect(all).toContain('DTSTART;TZID=Europe/Berlin:20260112T130000');
    expect(all).toContain('DTEND;TZID=Europe/Berlin:20260112T131500');
    // Master and override share the schedule's UID (derived from its id: no import named one).
    expect(all.filter((l) => l === 'UID:sched-1@schedules.platform-api')).toHaveLength(2);
  });

  it('writes the UID and SEQUENCE an import stored, escaped, on the master and its overrides', () => {
    const exported = item({
      Recurrence: {
        Pattern: 'FREQ=WEEKLY;BYDAY=MO',
        Exceptions: [{ OriginalTime: '2026-01-12T09:00:00', NewStartTime: '2026-01-12T13:00:00' }],
      },
    });
    const calendar = exportCalendar(
      [{ Id: 'sched-1', ScheduleItems: [exported, exported], Uid: 'a,b@example.com', Sequence: 4 }],
      NOW,
    );
    const all = lines(calendar);
    expect(all.filter((l) => l.startsWith('UID:'))).toEqual([
      'UID:a\\,b@example.com',
      'UID:a\\,b@example.com',
      'UID:a\\,b@example.com#1',
      'UID:a\\,b@example.com#1',
    ]);
    expect(all.filter((l) => l === 'SEQUENCE:4')).toHaveLength(4);
  });

  it("gives DTSTART plus RDATEs without a rule the recurrence's Duration and Offset, as the engine does", () => {
    // A review found DTEND = End − Start here while the listing used Duration for every start.
    const all = lines(
      exportOne(
        item({
          Start: '2026-03-02T09:00:00Z',
          End: '2026-03-02T10:00:00Z',
          StartTimeZone: null,
          Recurrence: {
            RecurrenceType: 'None',
            Duration: 'PT45M',
            Offset: 'PT30M',
            RecurrenceDates: ['2026-03-05T09:00:00Z'],
          },
        }),
      ),
    );
    expect(all).toContain('DTSTART:20260302T093000Z');
    expect(all).toContain('DTEND:20260302T101500Z');
    expect(all.filter((l) => l.startsWith('RDATE'))).toEqual(['RDATE:20260302T093000Z,20260305T093000Z']);
    // A single occurrence keeps End − Start and no Offset.
    const single = lines(
      exportOne(
        item({
          Start: '2026-03-02T09:00:00Z',
          End: '2026-03-02T10:00:00Z',
          StartTimeZone: null,
          Recurrence: { RecurrenceType: 'None', Duration: 'PT45M', Offset: 'PT30M' },
        }),
      ),
    );
    expect(single).toContain('DTSTART:20260302T090000Z');
    expect(single).toContain('DTEND:20260302T100000Z');
  });

  it('folds the Offset into DTSTART and the rule where that is exact', () => {
    const all = lines(
      exportOne(
        item({
          Recurrence: { Pattern: 'FREQ=WEEKLY;BYDAY=MO,WE', Offset: '-PT10H', EndTime: '2026-03-01' },
        }),
      ),
    );
    // 09:00 less 10 hours is 23:00 the day before: Sunday and Tuesday, weeks starting on Sunday; UNTIL (the end
    // of 1 March in Berlin) moves by the Offset too.
    expect(all).toContain('DTSTART;TZID=Europe/Berlin:20260104T230000');
    expect(all).toContain('RRULE:FREQ=WEEKLY;UNTIL=20260301T125959Z;BYDAY=SU,TU;WKST=SU');
  });

  it('lists a finite series occurrence by occurrence when its rule cannot carry the Offset', () => {
    const all = lines(
      exportOne(item({ Recurrence: { Pattern: 'FREQ=MONTHLY;BYMONTHDAY=1', Offset: '-P1D', EndCount: 3 } })),
    );
    // DTSTART (5 January), 1 February and 1 March 2026 at 09:00, each a day earlier.
    expect(all).toContain('DTSTART;TZID=Europe/Berlin:20260104T090000');
    expect(all).toContain('RDATE;TZID=Europe/Berlin:20260104T090000,20260131T090000,20260228T090000');
    expect(all.some((l) => l.startsWith('RRULE:FREQ=MONTHLY'))).toBe(false);
  });

  it('refuses an Offset it cannot write exactly on an unbounded series, naming the field', () => {
    expect(() =>
      exportOne(item({ Recurrence: { Pattern: 'FREQ=MONTHLY;BYMONTHDAY=1', Offset: '-P1D' } })),
    ).toThrow(IcalExportError);
  });

  it('writes DTSTART as an RDATE when UNTIL is before it, so ical.js lists the one occurrence the engine lists', () => {
    const iso = (ms: number) => new Date(ms).toISOString();
    for (const [zone, start] of [
      ['Europe/Berlin', '2026-01-05T09:00:00'],
      [null, '2026-01-05T09:00:00Z'],
    ] as const) {
      const exported = item({
        StartTimeZone: zone,
        Start: start,
        End: null,
        Recurrence: { Pattern: 'FREQ=WEEKLY;BYDAY=MO', EndTime: '2026-01-01T00:00:00Z' },
      });
      const until = Date.UTC(2027, 0, 1);
      const engine = compileSeries(exported)
        .occurrencesIn(Date.UTC(2025, 0, 1), until, 10)
        .map((o) => iso(o.start));
      const ical = expandWithIcalJs(exportOne(exported), until).map((o) => iso(o.start));
      expect(engine).toHaveLength(1);
      expect({ zone, ical }).toEqual({ zone, ical: engine });
    }
  });

  it('uses DURATION for nominal days and escapes the name', () => {
    const all = lines(
      exportOne(
        item({ Name: 'Ops; on-call, week\nB', Recurrence: { RecurrenceType: 'Weekly', Duration: 'P1DT2H' } }),
      ),
    );
    expect(all).toContain('DURATION:P1DT2H');
    expect(all).toContain('SUMMARY:Ops\\; on-call\\, week\\nB');
  });
});

describe('exportCalendar: all-day items (DATE values, RFC 5545 §3.3.4, §3.6.1)', () => {
  /** A weekly all-day Monday in Berlin from 5 January 2026 to 1 March. */
  const weekly = (
    recurrence: NonNullable<ExportItem['Recurrence']> = {},
    overrides: Partial<ExportItem> = {},
  ) =>
    item({
      Name: 'Home office',
      Start: '2026-01-05T00:00:00+01:00',
      End: '2026-01-06T00:00:00+01:00',
      AllDay: true,
      Recurrence: { Pattern: 'FREQ=WEEKLY;UNTIL=20260301', Duration: 'P1D', ...recurrence },
      ...overrides,
    });

  /** Occurrences [start, end] of the calendar as ical.js expands it, and as the engine lists the item. */
  function bothSides(exported: ExportItem): { ical: string[][]; engine: string[][] } {
    const calendar = exportOne(exported);
    const until = Date.UTC(2031, 0, 1);
    const ical = expandWithIcalJs(calendar, until).map((o) => [iso(o.start), iso(o.end)]);
    const engine = compileSeries(exported)
      .occurrencesIn(Date.UTC(2025, 0, 1), until, 1000)
      .map((o) => [iso(o.start), iso(o.end)]);
    return { ical, engine };
  }
  const iso = (ms: number) => new Date(ms).toISOString();

  it('writes a multi-day event as DTSTART/DTEND dates, with X-WR-TIMEZONE and no VTIMEZONE', () => {
    const all = lines(
      exportOne(item({ Start: '2026-03-27T00:00:00+01:00', End: '2026-03-30T00:00:00+02:00', AllDay: true })),
    );
    expect(all).toContain('DTSTART;VALUE=DATE:20260327');
    expect(all).toContain('DTEND;VALUE=DATE:20260330');
    expect(all).toContain('X-WR-TIMEZONE:Europe/Berlin');
    expect(all.some((l) => l.startsWith('BEGIN:VTIMEZONE') || l.includes('TZID='))).toBe(false);
    const vevent = new ICAL.Component(
      ICAL.parse(exportOne(item({ AllDay: true, ...dayItem }))) as unknown[],
    ).getFirstSubcomponent('vevent')!;
    const start = vevent.getFirstPropertyValue('dtstart') as ICAL.Time;
    expect([start.isDate, start.toString()]).toEqual([true, '2026-01-05']);
  });
  const dayItem = { Start: '2026-01-05T00:00:00+01:00', End: '2026-01-06T00:00:00+01:00' };

  it('writes UNTIL, EXDATE, RDATE and RECURRENCE-ID as dates; a move to other days stays all-day', () => {
    const all = lines(
      exportOne(
        weekly({
          RecurrenceDates: ['2026-01-07T00:00:00'],
          ExceptionDates: ['2026-01-19T00:00:00+01:00'],
          Exceptions: [
            { OriginalTime: '2026-01-26T00:00:00', IsDeleted: true },
            {
              OriginalTime: '2026-02-02T00:00:00',
              NewStart: '2026-02-03T00:00:00',
              NewEnd: '2026-02-05T00:00:00',
            },
          ],
        }),
      ),
    );
    expect(all).toContain('DTSTART;VALUE=DATE:20260105');
    expect(all).toContain('DTEND;VALUE=DATE:20260106');
    expect(all).toContain('RRULE:FREQ=WEEKLY;UNTIL=20260301');
    expect(all).toContain('RDATE;VALUE=DATE:20260107');
    expect(all).toContain('EXDATE;VALUE=DATE:20260119,20260126');
    expect(all).toContain('RECURRENCE-ID;VALUE=DATE:20260202');
    expect(all).toContain('DTSTART;VALUE=DATE:20260203');
    expect(all).toContain('DTEND;VALUE=DATE:20260205');
    expect(all.some((l) => l.startsWith('BEGIN:VTIMEZONE'))).toBe(false);
  });

  it('writes an occurrence moved to a time of day as a timed override, with the VTIMEZONE it needs', () => {
    const exported = weekly({
      Exceptions: [
        {
          OriginalTime: '2026-01-12T00:00:00',
          NewStart: '2026-01-12T09:00:00',
          NewEnd: '2026-01-12T12:00:00',
        },
      ],
    });
    const all = lines(exportOne(exported));
    expect(all).toContain('RECURRENCE-ID;VALUE=DATE:20260112');
    expect(all).toContain('DTSTART;TZID=Europe/Berlin:20260112T090000');
    expect(all).toContain('DTEND;TZID=Europe/Berlin:20260112T120000');
    expect(all).toContain('TZID:Europe/Berlin');
    const { ical, engine } = bothSides(exported);
    expect(ical).toEqual(engine);
    expect(engine[1]).toEqual(['2026-01-12T08:00:00.000Z', '2026-01-12T11:00:00.000Z']);
  });

  it('writes UTC all-day items without X-WR-TIMEZONE, and COUNT / a date EndTime unchanged in meaning', () => {
    const utc = item({
      Start: '2026-02-27T00:00:00Z',
      End: '2026-03-01T00:00:00Z',
      StartTimeZone: null,
      AllDay: true,
      Recurrence: { RecurrenceType: 'Monthly', EndTime: '2026-06-27' },
    });
    const all = lines(exportOne(utc));
    expect(all).toContain('DTSTART;VALUE=DATE:20260227');
    expect(all).toContain('DTEND;VALUE=DATE:20260301');
    expect(all).toContain('RRULE:FREQ=MONTHLY;UNTIL=20260627');
    expect(all.some((l) => l.startsWith('X-WR-TIMEZONE'))).toBe(false);
    const { ical, engine } = bothSides(utc);
    expect(engine).toHaveLength(5);
    expect(ical).toEqual(engine);
  });

  it.each<[string, ExportItem]>([
    [
      'weekly with EXDATE, RDATE, a deleted and two moved occurrences',
      weekly({
        RecurrenceDates: ['2026-01-07T00:00:00'],
        ExceptionDates: ['2026-01-19T00:00:00'],
        Exceptions: [
          { OriginalTime: '2026-01-26T00:00:00', IsDeleted: true },
          {
            OriginalTime: '2026-02-02T00:00:00',
            NewStart: '2026-02-03T00:00:00',
            NewEnd: '2026-02-05T00:00:00',
          },
          {
            OriginalTime: '2026-02-09T00:00:00',
            NewStart: '2026-02-09T14:00:00',
            NewEnd: '2026-02-09T15:00:00',
          },
        ],
      }),
    ],
    [
      'two days every week across both DST changes',
      weekly(
        { Pattern: 'FREQ=WEEKLY;COUNT=45', Duration: 'P2D' },
        {
          End: '2026-01-07T00:00:00+01:00',
        },
      ),
    ],
    [
      'a day-early Offset on a monthly rule (listed)',
      weekly(
        { Pattern: 'FREQ=MONTHLY;BYMONTHDAY=1;COUNT=12', Offset: '-P1D' },
        {
          Start: '2026-01-01T00:00:00+01:00',
          End: '2026-01-02T00:00:00+01:00',
        },
      ),
    ],
    [
      'a day-late Offset on a weekly rule (folded into the rule)',
      weekly({ Pattern: 'FREQ=WEEKLY;BYDAY=MO,TH;COUNT=20', Offset: 'P1D' }),
    ],
    [
      'DTSTART plus RDATEs without a rule',
      weekly({
        Pattern: null,
        RecurrenceType: 'None',
        RecurrenceDates: ['2026-03-30T00:00:00', '2026-10-26T00:00:00'],
      }),
    ],
    [
      'yearly in New York',
      weekly(
        { Pattern: 'FREQ=YEARLY', Duration: null },
        {
          StartTimeZone: 'America/New_York',
          Start: '2026-03-08T00:00:00-05:00',
          End: '2026-03-09T00:00:00-04:00',
        },
      ),
    ],
  ])('ical.js expands %s to the occurrences the engine lists', (_name, exported) => {
    const { ical, engine } = bothSides(exported);
    expect(engine.length).toBeGreaterThan(1);
    expect(ical).toEqual(engine);
  });
});
