// RDATE and EXDATE (RFC 5545 §3.8.5.1–3): the recurrence set is the RRULE's instances (DTSTART included) and the
// RDATEs, less the EXDATEs; COUNT counts the RRULE's instances only; the interface's Exceptions then apply.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { RecurrenceError } from './recurrence-error.js';
import { type ScheduleItemInput, compileSeries } from './series-compiler.js';

const WIDE_START = Date.parse('1990-01-01T00:00:00Z');
const WIDE_END = Date.parse('2100-01-01T00:00:00Z');
const isoOf = (ms: number) => new Date(ms).toISOString();

function startsOf(item: ScheduleItemInput, from = WIDE_START, to = WIDE_END): string[] {
  return compileSeries(item)
    .occurrencesIn(from, to, 10_000)
    .map((o) => isoOf(o.start));
}

/** RFC 5545 §3.8.5.3 "Daily for 10 occurrences", in New York, with what the test adds. */
function dailyTen(recurrence: NonNullable<ScheduleItemInput['Recurrence']> = {}): ScheduleItemInput {
  return {
    Start: '1997-09-02T09:00:00',
    End: '1997-09-02T10:00:00',
    StartTimeZone: 'America/New_York',
    Recurrence: { Pattern: 'FREQ=DAILY;COUNT=10', ...recurrence },
  };
}

function fieldOf(item: ScheduleItemInput): string | undefined {
  try {
    compileSeries(item);
    return undefined;
  } catch (error) {
    if (error instanceof RecurrenceError) return error.field;
    throw error;
  }
}

describe('EXDATE', () => {
  it('removes instances without extending COUNT (RFC 5545 §3.8.5.1)', () => {
    const starts = startsOf(dailyTen({ ExceptionDates: ['1997-09-04T09:00:00', '1997-09-05T13:00:00Z'] }));
    expect(starts).toHaveLength(8);
    expect(starts).not.toContain('1997-09-04T13:00:00.000Z');
    expect(starts).not.toContain('1997-09-05T13:00:00.000Z');
    expect(starts.at(-1)).toBe('1997-09-11T13:00:00.000Z');
  });

  it('removes DTSTART itself, and matches wall times in the item zone across a DST change', () => {
    const item: ScheduleItemInput = {
      Start: '2026-10-23T09:00:00',
      End: '2026-10-23T09:30:00',
      StartTimeZone: 'Europe/Berlin',
      // Berlin leaves summer time on 2026-10-25: 09:00 is 07:00Z before and 08:00Z after.
      Recurrence: {
        Pattern: 'FREQ=DAILY;COUNT=5',
        ExceptionDates: ['2026-10-23T09:00:00', '2026-10-26T09:00:00'],
      },
    };
    expect(startsOf(item)).toEqual([
      '2026-10-24T07:00:00.000Z',
      '2026-10-25T08:00:00.000Z',
      '2026-10-27T08:00:00.000Z',
    ]);
  });

  it('is a no-op for a value that matches no instance', () => {
    expect(startsOf(dailyTen({ ExceptionDates: ['1997-09-04T09:30:00'] }))).toEqual(startsOf(dailyTen()));
  });

  it('also removes an RDATE and turns an exception naming it into an unmatched one', () => {
    const series = compileSeries(
      dailyTen({
        RecurrenceDates: ['1997-12-25T09:00:00'],
        ExceptionDates: ['1997-12-25T09:00:00'],
        Exceptions: [{ OriginalTime: '1997-12-25T09:00:00', IsDeleted: true }],
      }),
    );
    expect(series.occurrencesIn(WIDE_START, WIDE_END, 100)).toHaveLength(10);
    expect(series.unmatchedExceptions).toEqual([0]);
  });
});

describe('RDATE', () => {
  it('adds occurrences that last the item duration, in order, beyond COUNT', () => {
    const series = compileSeries(
      dailyTen({ RecurrenceDates: ['1997-07-14T08:30:00', '1998-01-01T00:00:00Z'] }),
    );
    const all = series.occurrencesIn(WIDE_START, WIDE_END, 100);
    expect(all).toHaveLength(12);
    expect(isoOf(all[0].start)).toBe('1997-07-14T12:30:00.000Z');
    expect(all[0].end - all[0].start).toBe(3_600_000);
    expect(isoOf(all[11].start)).toBe('1998-01-01T00:00:00.000Z');
    expect(
      series.hasOccurrenceIn(Date.parse('1997-12-31T23:30:00Z'), Date.parse('1998-01-01T00:00:01Z')),
    ).toBe(true);
    expect(
      series.hasOccurrenceIn(Date.parse('1997-12-01T00:00:00Z'), Date.parse('1997-12-31T00:00:00Z')),
    ).toBe(false);
  });

  it('that repeats an RRULE instance or another RDATE counts once', () => {
    expect(startsOf(dailyTen({ RecurrenceDates: ['1997-09-03T09:00:00', '1997-09-03T13:00:00Z'] }))).toEqual(
      startsOf(dailyTen()),
    );
  });

  it('with no RRULE: DTSTART and the dates (RFC 5545 §3.8.5.2 example)', () => {
    const item: ScheduleItemInput = {
      Start: '1997-07-14T08:30:00',
      End: '1997-07-14T09:30:00',
      StartTimeZone: 'America/New_York',
      Recurrence: {
        RecurrenceType: 'None',
        RecurrenceDates: ['1997-07-15T08:30:00', '1997-07-16T08:30:00'],
      },
    };
    expect(startsOf(item)).toEqual([
      '1997-07-14T12:30:00.000Z',
      '1997-07-15T12:30:00.000Z',
      '1997-07-16T12:30:00.000Z',
    ]);
  });

  it('with no RRULE, Duration gives every occurrence its length in nominal days across DST', () => {
    const series = compileSeries({
      Start: '2026-03-28T00:00:00',
      End: '2026-03-29T00:00:00',
      StartTimeZone: 'Europe/Berlin',
      Recurrence: { RecurrenceType: 'None', Duration: 'P1D', RecurrenceDates: ['2026-03-29T00:00:00'] },
    });
    // Berlin springs forward on 2026-03-29: that local day is 23 hours long.
    const lengths = series.occurrencesIn(WIDE_START, WIDE_END, 10).map((o) => (o.end - o.start) / 3_600_000);
    expect(lengths).toEqual([24, 23]);
  });

  it('can be moved or cancelled by an exception like any occurrence', () => {
    const series = compileSeries(
      dailyTen({
        RecurrenceDates: ['1997-12-25T09:00:00', '1997-12-26T09:00:00'],
        Exceptions: [
          { OriginalTime: '1997-12-25T09:00:00', NewStartTime: '1997-12-25T20:00:00Z' },
          { OriginalTime: '1997-12-26T09:00:00', IsDeleted: true },
        ],
      }),
    );
    expect(series.unmatchedExceptions).toEqual([]);
    const december = series.occurrencesIn(
      Date.parse('1997-12-01T00:00:00Z'),
      Date.parse('1998-01-01T00:00:00Z'),
      10,
    );
    expect(december.map((o) => [isoOf(o.start), isoOf(o.end), o.isMoved])).toEqual([
      ['1997-12-25T20:00:00.000Z', '1997-12-25T21:00:00.000Z', true],
    ]);
  });

  it('takes Offset like every start', () => {
    const starts = startsOf(dailyTen({ Offset: '-PT15M', RecurrenceDates: ['1997-12-25T09:00:00'] }));
    expect(starts.at(-1)).toBe('1997-12-25T13:45:00.000Z');
  });
});

describe('RDATE and EXDATE validation names the entry', () => {
  it.each([
    ['a date without time', { RecurrenceDates: ['1997-12-25'] }, 'Recurrence.RecurrenceDates[0]'],
    ['not a date', { ExceptionDates: ['1997-09-04T09:00:00', 'soon'] }, 'Recurrence.ExceptionDates[1]'],
    ['a number', { RecurrenceDates: [19971225] as unknown as string[] }, 'Recurrence.RecurrenceDates[0]'],
    [
      'not a list',
      { ExceptionDates: '1997-09-04T09:00:00' as unknown as string[] },
      'Recurrence.ExceptionDates',
    ],
    [
      'more than 1,000',
      { RecurrenceDates: Array.from({ length: 1_001 }, () => '1997-12-25T09:00:00') },
      'Recurrence.RecurrenceDates',
    ],
  ])('%s', (_name, recurrence, field) => {
    expect(fieldOf(dailyTen(recurrence))).toBe(field);
  });
});

describe('the recurrence set is (RRULE ∪ RDATE) − EXDATE', () => {
  const HOUR = 3_600_000;
  const base = Date.parse('2026-01-05T08:00:00Z');
  const patterns = [
    'FREQ=DAILY',
    'FREQ=WEEKLY;BYDAY=MO,TH',
    'FREQ=HOURLY;INTERVAL=7',
    'FREQ=MONTHLY;BYMONTHDAY=-1',
  ];

  it('agrees with the set built from the series without them, for any window', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...patterns),
        fc.array(fc.integer({ min: 0, max: 24 * 120 }), { maxLength: 12 }),
        fc.array(fc.integer({ min: 0, max: 40 }), { maxLength: 12 }),
        fc.integer({ min: 0, max: 24 * 120 }),
        fc.integer({ min: 1, max: 24 * 20 }),
        (pattern, extraHours, excludedIndexes, windowHour, windowHours) => {
          const item = (recurrence: NonNullable<ScheduleItemInput['Recurrence']>): ScheduleItemInput => ({
            Start: isoOf(base),
            End: isoOf(base + HOUR / 2),
            Recurrence: { Pattern: pattern, ...recurrence },
          });
          const windowStart = base + windowHour * HOUR - HOUR;
          const windowEnd = windowStart + windowHours * HOUR;
          const plain = compileSeries(item({})).occurrencesIn(base - HOUR, base + 200 * 24 * HOUR, 10_000);
          const rdates = extraHours.map((h) => base + h * HOUR);
          const exdates = [
            ...excludedIndexes.filter((i) => i < plain.length).map((i) => plain[i].start),
            ...rdates.filter((_, i) => i % 3 === 0),
          ];
          const expected = [...new Set([...plain.map((o) => o.start), ...rdates])]
            .filter((start) => !exdates.includes(start))
            .filter((start) => start < windowEnd && start + HOUR / 2 > windowStart)
            .sort((a, b) => a - b);
          const series = compileSeries(
            item({ RecurrenceDates: rdates.map(isoOf), ExceptionDates: exdates.map(isoOf) }),
          );
          const got = series.occurrencesIn(windowStart, windowEnd, 10_000).map((o) => o.start);
          expect(got).toEqual(expected);
          expect(series.hasOccurrenceIn(windowStart, windowEnd)).toBe(expected.length > 0);
        },
      ),
      { numRuns: 300 },
    );
  });
});
