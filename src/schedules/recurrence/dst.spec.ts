import { describe, expect, it } from '@jest/globals';
import { type ScheduleItemInput, compileSeries } from './series-compiler.js';

// The DST rules, each in Europe/Berlin (2025: CET→CEST at 01:00Z on 30 March, back at 01:00Z on 26 October)
// and America/New_York (2025: EST→EDT at 07:00Z on 9 March, back at 06:00Z on 2 November). Expected instants are
// worked out by hand from those offsets.

const WIDE_START = Date.parse('2000-01-01T00:00:00Z');
const WIDE_END = Date.parse('2100-01-01T00:00:00Z');

function starts(item: ScheduleItemInput, from = WIDE_START, to = WIDE_END): string[] {
  return compileSeries(item)
    .occurrencesIn(from, to, 1000)
    .map((o) => new Date(o.start).toISOString());
}

function iso(...values: string[]): string[] {
  return values.map((v) => new Date(Date.parse(v)).toISOString());
}

interface Case {
  readonly name: string;
  readonly zone: string;
  readonly startTime: string;
  readonly pattern: string;
  readonly expected: readonly string[];
}

const CASES: readonly Case[] = [
  // Gap: a wall time that does not exist is shifted forward by the gap and still counts.
  {
    name: 'gap: daily 02:30 shifts to 03:30 on the spring-forward day and counts',
    zone: 'Europe/Berlin',
    startTime: '2025-03-29T02:30:00',
    pattern: 'FREQ=DAILY;COUNT=3',
    expected: iso('2025-03-29T01:30Z', '2025-03-30T01:30Z', '2025-03-31T00:30Z'),
  },
  {
    name: 'gap: daily 02:30 shifts to 03:30 on the spring-forward day and counts',
    zone: 'America/New_York',
    startTime: '2025-03-08T02:30:00',
    pattern: 'FREQ=DAILY;COUNT=3',
    expected: iso('2025-03-08T07:30Z', '2025-03-09T07:30Z', '2025-03-10T06:30Z'),
  },
  {
    name: 'gap: a wall-time DTSTART inside the gap is shifted, later occurrences keep 02:30',
    zone: 'Europe/Berlin',
    startTime: '2025-03-30T02:30:00',
    pattern: 'FREQ=DAILY;COUNT=2',
    expected: iso('2025-03-30T01:30Z', '2025-03-31T00:30Z'),
  },
  {
    name: 'gap: a wall-time DTSTART inside the gap is shifted, later occurrences keep 02:30',
    zone: 'America/New_York',
    startTime: '2025-03-09T02:30:00',
    pattern: 'FREQ=DAILY;COUNT=2',
    expected: iso('2025-03-09T07:30Z', '2025-03-10T06:30Z'),
  },
  // Ambiguous: the first instant (the earlier offset) is taken.
  {
    name: 'ambiguous: daily 02:30 on the fall-back day takes the first (CEST) instant',
    zone: 'Europe/Berlin',
    startTime: '2025-10-25T02:30:00',
    pattern: 'FREQ=DAILY;COUNT=3',
    expected: iso('2025-10-25T00:30Z', '2025-10-26T00:30Z', '2025-10-27T01:30Z'),
  },
  {
    name: 'ambiguous: daily 01:30 on the fall-back day takes the first (EDT) instant',
    zone: 'America/New_York',
    startTime: '2025-11-01T01:30:00',
    pattern: 'FREQ=DAILY;COUNT=3',
    expected: iso('2025-11-01T05:30Z', '2025-11-02T05:30Z', '2025-11-03T06:30Z'),
  },
  // Sub-daily frequencies step in wall-clock time: the repeated hour is emitted once, the skipped one maps onto
  // the next existing instant once.
  {
    name: 'hourly across fall-back emits the repeated hour once',
    zone: 'Europe/Berlin',
    startTime: '2025-10-26T00:00:00',
    pattern: 'FREQ=HOURLY;COUNT=4',
    expected: iso('2025-10-25T22:00Z', '2025-10-25T23:00Z', '2025-10-26T00:00Z', '2025-10-26T02:00Z'),
  },
  {
    name: 'hourly across fall-back emits the repeated hour once',
    zone: 'America/New_York',
    startTime: '2025-11-02T00:00:00',
    pattern: 'FREQ=HOURLY;COUNT=4',
    expected: iso('2025-11-02T04:00Z', '2025-11-02T05:00Z', '2025-11-02T07:00Z', '2025-11-02T08:00Z'),
  },
  {
    name: 'every 30 minutes across fall-back skips the second 01:00 and 01:30',
    zone: 'America/New_York',
    startTime: '2025-11-02T00:30:00',
    pattern: 'FREQ=MINUTELY;INTERVAL=30;COUNT=5',
    expected: iso(
      '2025-11-02T04:30Z',
      '2025-11-02T05:00Z',
      '2025-11-02T05:30Z',
      '2025-11-02T07:00Z',
      '2025-11-02T07:30Z',
    ),
  },
  {
    name: 'hourly across spring-forward: 02:00 becomes 03:00 and the real 03:00 is not a second occurrence',
    zone: 'Europe/Berlin',
    startTime: '2025-03-30T00:00:00',
    pattern: 'FREQ=HOURLY;COUNT=4',
    expected: iso('2025-03-29T23:00Z', '2025-03-30T00:00Z', '2025-03-30T01:00Z', '2025-03-30T02:00Z'),
  },
  {
    name: 'hourly across spring-forward: 02:00 becomes 03:00 and the real 03:00 is not a second occurrence',
    zone: 'America/New_York',
    startTime: '2025-03-09T00:00:00',
    pattern: 'FREQ=HOURLY;COUNT=4',
    expected: iso('2025-03-09T05:00Z', '2025-03-09T06:00Z', '2025-03-09T07:00Z', '2025-03-09T08:00Z'),
  },
  {
    name: 'half-hourly across spring-forward stays sorted (02:30→03:30 is emitted after 03:00)',
    zone: 'Europe/Berlin',
    startTime: '2025-03-30T01:30:00',
    pattern: 'FREQ=MINUTELY;INTERVAL=30;COUNT=5',
    expected: iso(
      '2025-03-30T00:30Z',
      '2025-03-30T01:00Z',
      '2025-03-30T01:30Z',
      '2025-03-30T02:00Z',
      '2025-03-30T02:30Z',
    ),
  },
  // No duplicate instants: BYHOUR=2,3 on the spring-forward day names 03:00 twice.
  {
    name: 'no duplicates: 02:00 and 03:00 on the spring-forward day are one instant',
    zone: 'Europe/Berlin',
    startTime: '2025-03-29T02:00:00',
    pattern: 'FREQ=DAILY;BYHOUR=2,3;BYMINUTE=0;COUNT=5',
    expected: iso(
      '2025-03-29T01:00Z',
      '2025-03-29T02:00Z',
      '2025-03-30T01:00Z',
      '2025-03-31T00:00Z',
      '2025-03-31T01:00Z',
    ),
  },
  {
    name: 'no duplicates: 02:00 and 03:00 on the spring-forward day are one instant',
    zone: 'America/New_York',
    startTime: '2025-03-08T02:00:00',
    pattern: 'FREQ=DAILY;BYHOUR=2,3;BYMINUTE=0;COUNT=5',
    expected: iso(
      '2025-03-08T07:00Z',
      '2025-03-08T08:00Z',
      '2025-03-09T07:00Z',
      '2025-03-10T06:00Z',
      '2025-03-10T07:00Z',
    ),
  },
  // UNTIL is an instant and inclusive.
  {
    name: 'UNTIL equal to the first instant of the ambiguous 02:30 includes it',
    zone: 'Europe/Berlin',
    startTime: '2025-10-24T02:30:00',
    pattern: 'FREQ=DAILY;UNTIL=20251026T003000Z',
    expected: iso('2025-10-24T00:30Z', '2025-10-25T00:30Z', '2025-10-26T00:30Z'),
  },
  {
    name: 'UNTIL one second earlier excludes it',
    zone: 'Europe/Berlin',
    startTime: '2025-10-24T02:30:00',
    pattern: 'FREQ=DAILY;UNTIL=20251026T002959Z',
    expected: iso('2025-10-24T00:30Z', '2025-10-25T00:30Z'),
  },
  {
    name: 'UNTIL equal to the shifted gap instant includes it',
    zone: 'Europe/Berlin',
    startTime: '2025-03-28T02:30:00',
    pattern: 'FREQ=DAILY;UNTIL=20250330T013000Z',
    expected: iso('2025-03-28T01:30Z', '2025-03-29T01:30Z', '2025-03-30T01:30Z'),
  },
  {
    name: 'UNTIL equal to the first instant of the ambiguous 01:30 includes it',
    zone: 'America/New_York',
    startTime: '2025-10-31T01:30:00',
    pattern: 'FREQ=DAILY;UNTIL=20251102T053000Z',
    expected: iso('2025-10-31T05:30Z', '2025-11-01T05:30Z', '2025-11-02T05:30Z'),
  },
  {
    name: 'UNTIL one second earlier excludes it',
    zone: 'America/New_York',
    startTime: '2025-10-31T01:30:00',
    pattern: 'FREQ=DAILY;UNTIL=20251102T052959Z',
    expected: iso('2025-10-31T05:30Z', '2025-11-01T05:30Z'),
  },
];

describe('DST rules: gap shifted forward, ambiguous first, repeated hour once', () => {
  it.each(CASES)('$zone — $name ($pattern)', ({ zone, startTime, pattern, expected }) => {
    expect(starts({ StartTimeZone: zone, Recurrence: { StartTime: startTime, Pattern: pattern } })).toEqual(
      expected,
    );
  });

  it('a window query finds the gap-shifted occurrence at its shifted instant only', () => {
    const series = compileSeries({
      StartTimeZone: 'Europe/Berlin',
      Recurrence: { StartTime: '2025-03-29T02:30:00', Pattern: 'FREQ=DAILY', Duration: 'PT10M' },
    });
    const shifted = Date.parse('2025-03-30T01:30:00Z');
    expect(series.hasOccurrenceIn(shifted, shifted + 60_000)).toBe(true);
    expect(series.hasOccurrenceIn(shifted - 3_600_000, shifted - 3_000_000)).toBe(false);
  });

  describe('nominal days in Duration and Offset (RFC 5545 §3.3.6)', () => {
    it.each([
      [
        'Europe/Berlin',
        '2025-03-29T12:00:00',
        'P1D',
        ['2025-03-29T11:00:00.000Z', '2025-03-30T10:00:00.000Z'],
      ],
      [
        'Europe/Berlin',
        '2025-03-29T12:00:00',
        'PT24H',
        ['2025-03-29T11:00:00.000Z', '2025-03-30T11:00:00.000Z'],
      ],
      [
        'America/New_York',
        '2025-11-01T12:00:00',
        'P1D',
        ['2025-11-01T16:00:00.000Z', '2025-11-02T17:00:00.000Z'],
      ],
      [
        'America/New_York',
        '2025-11-01T12:00:00',
        'PT24H',
        ['2025-11-01T16:00:00.000Z', '2025-11-02T16:00:00.000Z'],
      ],
    ])('%s from %s: Duration %s ends at the right instant', (zone, startTime, duration, [start, end]) => {
      const [first] = compileSeries({
        StartTimeZone: zone,
        Recurrence: { StartTime: startTime, Pattern: 'FREQ=DAILY;COUNT=1', Duration: duration },
      }).occurrencesIn(WIDE_START, WIDE_END, 10);
      expect([new Date(first.start).toISOString(), new Date(first.end).toISOString()]).toEqual([start, end]);
    });

    it.each([
      ['Europe/Berlin', 'P1D', '2025-03-30T10:00:00.000Z'],
      ['Europe/Berlin', 'PT24H', '2025-03-30T11:00:00.000Z'],
      ['Europe/Berlin', '-PT15M', '2025-03-29T10:45:00.000Z'],
      ['America/New_York', 'P1D', '2025-03-09T16:00:00.000Z'],
    ])('%s: Offset %s is added to the generated start', (zone, offset, expected) => {
      const startTime = zone === 'Europe/Berlin' ? '2025-03-29T12:00:00' : '2025-03-08T12:00:00';
      const [first] = compileSeries({
        StartTimeZone: zone,
        Recurrence: { StartTime: startTime, Pattern: 'FREQ=DAILY;COUNT=1', Offset: offset, Duration: 'PT1H' },
      }).occurrencesIn(WIDE_START, WIDE_END, 10);
      expect(new Date(first.start).toISOString()).toBe(expected);
    });
  });

  it('Windows zone ids give the same expansion as their IANA zone', () => {
    const pattern = 'FREQ=WEEKLY;BYDAY=MO,WE,FR;COUNT=20';
    const from = Date.parse('2025-03-01T00:00:00Z');
    const to = Date.parse('2025-12-01T00:00:00Z');
    const berlin = starts(
      { StartTimeZone: 'Europe/Berlin', Recurrence: { StartTime: '2025-03-17T09:00:00', Pattern: pattern } },
      from,
      to,
    );
    const windows = starts(
      {
        StartTimeZone: 'W. Europe Standard Time',
        Recurrence: { StartTime: '2025-03-17T09:00:00', Pattern: pattern },
      },
      from,
      to,
    );
    expect(windows).toEqual(berlin);
    expect(berlin).toContain('2025-03-28T08:00:00.000Z');
    expect(berlin).toContain('2025-03-31T07:00:00.000Z');
  });

  it('results do not depend on the process time zone', () => {
    const saved = process.env.TZ;
    const item: ScheduleItemInput = {
      StartTimeZone: 'America/New_York',
      Recurrence: { StartTime: '2025-03-08T02:30:00', Pattern: 'FREQ=DAILY;COUNT=4', Duration: 'P1D' },
    };
    const results: string[] = [];
    try {
      for (const tz of ['UTC', 'Asia/Kolkata', 'Pacific/Chatham', 'America/Los_Angeles']) {
        process.env.TZ = tz;
        results.push(
          JSON.stringify(
            compileSeries(item)
              .occurrencesIn(WIDE_START, WIDE_END, 10)
              .map((o) => [o.start, o.end]),
          ),
        );
      }
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
    expect(new Set(results).size).toBe(1);
  });
});
