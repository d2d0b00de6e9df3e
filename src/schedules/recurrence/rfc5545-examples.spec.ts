import { describe, expect, it } from '@jest/globals';
import { compileSeries } from './series-compiler.js';

// Every example of RFC 5545 §3.8.5.3 ("All examples assume the Eastern United States time zone"), transcribed from
// the RFC text. Expected instants are built from the local time and the EDT/EST label the RFC prints next to each
// group, so they do not depend on the engine's own time-zone code. Ranges like "September 2-30" are written
// '2-30'; "2,4,6…30" is '2-30/2'. Rules the RFC marks as "forever" are compared on the prefix the RFC lists
// (the query window ends right after the last listed instance, so nothing may be missing or extra before it).

type Zone = 'EDT' | 'EST';

function days(spec: string): number[] {
  const out: number[] = [];
  for (const part of spec.split(',')) {
    const m = /^(\d+)(?:-(\d+)(?:\/(\d+))?)?$/.exec(part.trim());
    if (!m) throw new Error(`bad day spec ${part}`);
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    const step = m[3] === undefined ? 1 : Number(m[3]);
    for (let d = from; d <= to; d += step) out.push(d);
  }
  return out;
}

/** Instants (ISO, UTC) of local times on the given days of one month, with the RFC's EDT/EST label. */
function at(
  zone: Zone,
  year: number,
  month: number,
  daySpec: string,
  times: readonly string[] = ['09:00'],
): string[] {
  const offset = zone === 'EDT' ? '-04:00' : '-05:00';
  const pad = (n: number) => String(n).padStart(2, '0');
  return days(daySpec).flatMap((d) =>
    times.map((t) => new Date(Date.parse(`${year}-${pad(month)}-${pad(d)}T${t}:00${offset}`)).toISOString()),
  );
}

function everyTwentyMinutes(): string[] {
  const out: string[] = [];
  for (let h = 9; h <= 16; h++)
    for (const m of ['00', '20', '40']) out.push(`${String(h).padStart(2, '0')}:${m}`);
  return out;
}

interface Example {
  readonly title: string;
  /** DTSTART;TZID=America/New_York as a local wall time. */
  readonly dtstart: string;
  readonly rrules: readonly string[];
  readonly expected: readonly string[];
  /** The RFC's "forever" rules: only the listed prefix is checked. */
  readonly forever?: boolean;
  /** EXDATE values of the example, modelled as deleted exceptions. */
  readonly exdates?: readonly string[];
}

const EXAMPLES: readonly Example[] = [
  {
    title: 'Daily for 10 occurrences',
    dtstart: '1997-09-02T09:00',
    rrules: ['FREQ=DAILY;COUNT=10'],
    expected: at('EDT', 1997, 9, '2-11'),
  },
  {
    title: 'Daily until December 24, 1997',
    dtstart: '1997-09-02T09:00',
    rrules: ['FREQ=DAILY;UNTIL=19971224T000000Z'],
    expected: [
      ...at('EDT', 1997, 9, '2-30'),
      ...at('EDT', 1997, 10, '1-25'),
      ...at('EST', 1997, 10, '26-31'),
      ...at('EST', 1997, 11, '1-30'),
      ...at('EST', 1997, 12, '1-23'),
    ],
  },
  {
    title: 'Every other day - forever',
    dtstart: '1997-09-02T09:00',
    rrules: ['FREQ=DAILY;INTERVAL=2'],
    forever: true,
    expected: [
      ...at('EDT', 1997, 9, '2-30/2'),
      ...at('EDT', 1997, 10, '2-24/2'),
      ...at('EST', 1997, 10, '26,28,30'),
      ...at('EST', 1997, 11, '1-29/2'),
      ...at('EST', 1997, 12, '1,3'),
    ],
  },
  {
    title: 'Every 10 days, 5 occurrences',
    dtstart: '1997-09-02T09:00',
    rrules: ['FREQ=DAILY;INTERVAL=10;COUNT=5'],
    expected: [...at('EDT', 1997, 9, '2,12,22'), ...at('EDT', 1997, 10, '2,12')],
  },
  {
    title: 'Every day in January, for 3 years',
    dtstart: '1998-01-01T09:00',
    rrules: [
      'FREQ=YEARLY;UNTIL=20000131T140000Z;BYMONTH=1;BYDAY=SU,MO,TU,WE,TH,FR,SA',
      'FREQ=DAILY;UNTIL=20000131T140000Z;BYMONTH=1',
    ],
    expected: [...at('EST', 1998, 1, '1-31'), ...at('EST', 1999, 1, '1-31'), ...at('EST', 2000, 1, '1-31')],
  },
  {
    title: 'Weekly for 10 occurrences',
    dtstart: '1997-09-02T09:00',
    rrules: ['FREQ=WEEKLY;COUNT=10'],
    expected: [
      ...at('EDT', 1997, 9, '2,9,16,23,30'),
      ...at('EDT', 1997, 10, '7,14,21'),
      ...at('EST', 1997, 10, '28'),
      ...at('EST', 1997, 11, '4'),
    ],
  },
  {
    title: 'Weekly until December 24, 1997',
    dtstart: '1997-09-02T09:00',
    rrules: ['FREQ=WEEKLY;UNTIL=19971224T000000Z'],
    expected: [
      ...at('EDT', 1997, 9, '2,9,16,23,30'),
      ...at('EDT', 1997, 10, '7,14,21'),
      ...at('EST', 1997, 10, '28'),
      ...at('EST', 1997, 11, '4,11,18,25'),
      ...at('EST', 1997, 12, '2,9,16,23'),
    ],
  },
  {
    title: 'Every other week - forever',
    dtstart: '1997-09-02T09:00',
    rrules: ['FREQ=WEEKLY;INTERVAL=2;WKST=SU'],
    forever: true,
    expected: [
      ...at('EDT', 1997, 9, '2,16,30'),
      ...at('EDT', 1997, 10, '14'),
      ...at('EST', 1997, 10, '28'),
      ...at('EST', 1997, 11, '11,25'),
      ...at('EST', 1997, 12, '9,23'),
      ...at('EST', 1998, 1, '6,20'),
      ...at('EST', 1998, 2, '3,17'),
    ],
  },
  {
    title: 'Weekly on Tuesday and Thursday for five weeks',
    dtstart: '1997-09-02T09:00',
    rrules: [
      'FREQ=WEEKLY;UNTIL=19971007T000000Z;WKST=SU;BYDAY=TU,TH',
      'FREQ=WEEKLY;COUNT=10;WKST=SU;BYDAY=TU,TH',
    ],
    expected: [...at('EDT', 1997, 9, '2,4,9,11,16,18,23,25,30'), ...at('EDT', 1997, 10, '2')],
  },
  {
    title:
      'Every other week on Monday, Wednesday, and Friday until December 24, 1997, starting on Monday, September 1',
    dtstart: '1997-09-01T09:00',
    rrules: ['FREQ=WEEKLY;INTERVAL=2;UNTIL=19971224T000000Z;WKST=SU;BYDAY=MO,WE,FR'],
    expected: [
      ...at('EDT', 1997, 9, '1,3,5,15,17,19,29'),
      ...at('EDT', 1997, 10, '1,3,13,15,17'),
      ...at('EST', 1997, 10, '27,29,31'),
      ...at('EST', 1997, 11, '10,12,14,24,26,28'),
      ...at('EST', 1997, 12, '8,10,12,22'),
    ],
  },
  {
    title: 'Every other week on Tuesday and Thursday, for 8 occurrences',
    dtstart: '1997-09-02T09:00',
    rrules: ['FREQ=WEEKLY;INTERVAL=2;COUNT=8;WKST=SU;BYDAY=TU,TH'],
    expected: [...at('EDT', 1997, 9, '2,4,16,18,30'), ...at('EDT', 1997, 10, '2,14,16')],
  },
  {
    title: 'Monthly on the first Friday for 10 occurrences',
    dtstart: '1997-09-05T09:00',
    rrules: ['FREQ=MONTHLY;COUNT=10;BYDAY=1FR'],
    expected: [
      ...at('EDT', 1997, 9, '5'),
      ...at('EDT', 1997, 10, '3'),
      ...at('EST', 1997, 11, '7'),
      ...at('EST', 1997, 12, '5'),
      ...at('EST', 1998, 1, '2'),
      ...at('EST', 1998, 2, '6'),
      ...at('EST', 1998, 3, '6'),
      ...at('EST', 1998, 4, '3'),
      ...at('EDT', 1998, 5, '1'),
      ...at('EDT', 1998, 6, '5'),
    ],
  },
  {
    title: 'Monthly on the first Friday until December 24, 1997',
    dtstart: '1997-09-05T09:00',
    rrules: ['FREQ=MONTHLY;UNTIL=19971224T000000Z;BYDAY=1FR'],
    expected: [
      ...at('EDT', 1997, 9, '5'),
      ...at('EDT', 1997, 10, '3'),
      ...at('EST', 1997, 11, '7'),
      ...at('EST', 1997, 12, '5'),
    ],
  },
  {
    title: 'Every other month on the first and last Sunday of the month for 10 occurrences',
    dtstart: '1997-09-07T09:00',
    rrules: ['FREQ=MONTHLY;INTERVAL=2;COUNT=10;BYDAY=1SU,-1SU'],
    expected: [
      ...at('EDT', 1997, 9, '7,28'),
      ...at('EST', 1997, 11, '2,30'),
      ...at('EST', 1998, 1, '4,25'),
      ...at('EST', 1998, 3, '1,29'),
      ...at('EDT', 1998, 5, '3,31'),
    ],
  },
  {
    title: 'Monthly on the second-to-last Monday of the month for 6 months',
    dtstart: '1997-09-22T09:00',
    rrules: ['FREQ=MONTHLY;COUNT=6;BYDAY=-2MO'],
    expected: [
      ...at('EDT', 1997, 9, '22'),
      ...at('EDT', 1997, 10, '20'),
      ...at('EST', 1997, 11, '17'),
      ...at('EST', 1997, 12, '22'),
      ...at('EST', 1998, 1, '19'),
      ...at('EST', 1998, 2, '16'),
    ],
  },
  {
    title: 'Monthly on the third-to-the-last day of the month, forever',
    dtstart: '1997-09-28T09:00',
    rrules: ['FREQ=MONTHLY;BYMONTHDAY=-3'],
    forever: true,
    expected: [
      ...at('EDT', 1997, 9, '28'),
      ...at('EST', 1997, 10, '29'),
      ...at('EST', 1997, 11, '28'),
      ...at('EST', 1997, 12, '29'),
      ...at('EST', 1998, 1, '29'),
      ...at('EST', 1998, 2, '26'),
    ],
  },
  {
    title: 'Monthly on the 2nd and 15th of the month for 10 occurrences',
    dtstart: '1997-09-02T09:00',
    rrules: ['FREQ=MONTHLY;COUNT=10;BYMONTHDAY=2,15'],
    expected: [
      ...at('EDT', 1997, 9, '2,15'),
      ...at('EDT', 1997, 10, '2,15'),
      ...at('EST', 1997, 11, '2,15'),
      ...at('EST', 1997, 12, '2,15'),
      ...at('EST', 1998, 1, '2,15'),
    ],
  },
  {
    title: 'Monthly on the first and last day of the month for 10 occurrences',
    dtstart: '1997-09-30T09:00',
    rrules: ['FREQ=MONTHLY;COUNT=10;BYMONTHDAY=1,-1'],
    expected: [
      ...at('EDT', 1997, 9, '30'),
      ...at('EDT', 1997, 10, '1'),
      ...at('EST', 1997, 10, '31'),
      ...at('EST', 1997, 11, '1,30'),
      ...at('EST', 1997, 12, '1,31'),
      ...at('EST', 1998, 1, '1,31'),
      ...at('EST', 1998, 2, '1'),
    ],
  },
  {
    title: 'Every 18 months on the 10th thru 15th of the month for 10 occurrences',
    dtstart: '1997-09-10T09:00',
    rrules: ['FREQ=MONTHLY;INTERVAL=18;COUNT=10;BYMONTHDAY=10,11,12,13,14,15'],
    expected: [...at('EDT', 1997, 9, '10-15'), ...at('EST', 1999, 3, '10-13')],
  },
  {
    title: 'Every Tuesday, every other month',
    dtstart: '1997-09-02T09:00',
    rrules: ['FREQ=MONTHLY;INTERVAL=2;BYDAY=TU'],
    forever: true,
    expected: [
      ...at('EDT', 1997, 9, '2,9,16,23,30'),
      ...at('EST', 1997, 11, '4,11,18,25'),
      ...at('EST', 1998, 1, '6,13,20,27'),
      ...at('EST', 1998, 3, '3,10,17,24,31'),
    ],
  },
  {
    title: 'Yearly in June and July for 10 occurrences',
    dtstart: '1997-06-10T09:00',
    rrules: ['FREQ=YEARLY;COUNT=10;BYMONTH=6,7'],
    expected: [1997, 1998, 1999, 2000, 2001].flatMap((y) => [
      ...at('EDT', y, 6, '10'),
      ...at('EDT', y, 7, '10'),
    ]),
  },
  {
    title: 'Every other year on January, February, and March for 10 occurrences',
    dtstart: '1997-03-10T09:00',
    rrules: ['FREQ=YEARLY;INTERVAL=2;COUNT=10;BYMONTH=1,2,3'],
    expected: [
      ...at('EST', 1997, 3, '10'),
      ...[1999, 2001, 2003].flatMap((y) => [
        ...at('EST', y, 1, '10'),
        ...at('EST', y, 2, '10'),
        ...at('EST', y, 3, '10'),
      ]),
    ],
  },
  {
    title: 'Every third year on the 1st, 100th, and 200th day for 10 occurrences',
    dtstart: '1997-01-01T09:00',
    rrules: ['FREQ=YEARLY;INTERVAL=3;COUNT=10;BYYEARDAY=1,100,200'],
    expected: [
      ...at('EST', 1997, 1, '1'),
      ...at('EDT', 1997, 4, '10'),
      ...at('EDT', 1997, 7, '19'),
      ...at('EST', 2000, 1, '1'),
      ...at('EDT', 2000, 4, '9'),
      ...at('EDT', 2000, 7, '18'),
      ...at('EST', 2003, 1, '1'),
      ...at('EDT', 2003, 4, '10'),
      ...at('EDT', 2003, 7, '19'),
      ...at('EST', 2006, 1, '1'),
    ],
  },
  {
    title: 'Every 20th Monday of the year, forever',
    dtstart: '1997-05-19T09:00',
    rrules: ['FREQ=YEARLY;BYDAY=20MO'],
    forever: true,
    expected: [...at('EDT', 1997, 5, '19'), ...at('EDT', 1998, 5, '18'), ...at('EDT', 1999, 5, '17')],
  },
  {
    title: 'Monday of week number 20 (where the default start of the week is Monday), forever',
    dtstart: '1997-05-12T09:00',
    rrules: ['FREQ=YEARLY;BYWEEKNO=20;BYDAY=MO'],
    forever: true,
    expected: [...at('EDT', 1997, 5, '12'), ...at('EDT', 1998, 5, '11'), ...at('EDT', 1999, 5, '17')],
  },
  {
    title: 'Every Thursday in March, forever',
    dtstart: '1997-03-13T09:00',
    rrules: ['FREQ=YEARLY;BYMONTH=3;BYDAY=TH'],
    forever: true,
    expected: [
      ...at('EST', 1997, 3, '13,20,27'),
      ...at('EST', 1998, 3, '5,12,19,26'),
      ...at('EST', 1999, 3, '4,11,18,25'),
    ],
  },
  {
    title: 'Every Thursday, but only during June, July, and August, forever',
    dtstart: '1997-06-05T09:00',
    rrules: ['FREQ=YEARLY;BYDAY=TH;BYMONTH=6,7,8'],
    forever: true,
    expected: [
      ...at('EDT', 1997, 6, '5,12,19,26'),
      ...at('EDT', 1997, 7, '3,10,17,24,31'),
      ...at('EDT', 1997, 8, '7,14,21,28'),
      ...at('EDT', 1998, 6, '4,11,18,25'),
      ...at('EDT', 1998, 7, '2,9,16,23,30'),
      ...at('EDT', 1998, 8, '6,13,20,27'),
      ...at('EDT', 1999, 6, '3,10,17,24'),
      ...at('EDT', 1999, 7, '1,8,15,22,29'),
      ...at('EDT', 1999, 8, '5,12,19,26'),
    ],
  },
  {
    title: 'Every Friday the 13th, forever (EXDATE of DTSTART as a deleted exception)',
    dtstart: '1997-09-02T09:00',
    rrules: ['FREQ=MONTHLY;BYDAY=FR;BYMONTHDAY=13'],
    exdates: ['1997-09-02T09:00:00-04:00'],
    forever: true,
    expected: [
      ...at('EST', 1998, 2, '13'),
      ...at('EST', 1998, 3, '13'),
      ...at('EST', 1998, 11, '13'),
      ...at('EDT', 1999, 8, '13'),
      ...at('EDT', 2000, 10, '13'),
    ],
  },
  {
    title: 'The first Saturday that follows the first Sunday of the month, forever',
    dtstart: '1997-09-13T09:00',
    rrules: ['FREQ=MONTHLY;BYDAY=SA;BYMONTHDAY=7,8,9,10,11,12,13'],
    forever: true,
    expected: [
      ...at('EDT', 1997, 9, '13'),
      ...at('EDT', 1997, 10, '11'),
      ...at('EST', 1997, 11, '8'),
      ...at('EST', 1997, 12, '13'),
      ...at('EST', 1998, 1, '10'),
      ...at('EST', 1998, 2, '7'),
      ...at('EST', 1998, 3, '7'),
      ...at('EDT', 1998, 4, '11'),
      ...at('EDT', 1998, 5, '9'),
      ...at('EDT', 1998, 6, '13'),
    ],
  },
  {
    title:
      'Every 4 years, the first Tuesday after a Monday in November, forever (U.S. Presidential Election day)',
    dtstart: '1996-11-05T09:00',
    rrules: ['FREQ=YEARLY;INTERVAL=4;BYMONTH=11;BYDAY=TU;BYMONTHDAY=2,3,4,5,6,7,8'],
    forever: true,
    expected: [...at('EST', 1996, 11, '5'), ...at('EST', 2000, 11, '7'), ...at('EST', 2004, 11, '2')],
  },
  {
    title:
      'The third instance into the month of one of Tuesday, Wednesday, or Thursday, for the next 3 months',
    dtstart: '1997-09-04T09:00',
    rrules: ['FREQ=MONTHLY;COUNT=3;BYDAY=TU,WE,TH;BYSETPOS=3'],
    expected: [...at('EDT', 1997, 9, '4'), ...at('EDT', 1997, 10, '7'), ...at('EST', 1997, 11, '6')],
  },
  {
    title: 'The second-to-last weekday of the month',
    dtstart: '1997-09-29T09:00',
    rrules: ['FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-2'],
    forever: true,
    expected: [
      ...at('EDT', 1997, 9, '29'),
      ...at('EST', 1997, 10, '30'),
      ...at('EST', 1997, 11, '27'),
      ...at('EST', 1997, 12, '30'),
      ...at('EST', 1998, 1, '29'),
      ...at('EST', 1998, 2, '26'),
      ...at('EST', 1998, 3, '30'),
    ],
  },
  {
    // RFC erratum: the printed UNTIL=19970902T170000Z is 13:00 EDT, which would end the series after 12:00, yet
    // the RFC lists 09:00, 12:00 and 15:00 (the 5:00 PM of the title is local time). The listed result needs
    // UNTIL=19970902T210000Z (17:00 EDT); that corrected rule is checked here. The literal rule, with UNTIL
    // compared as an instant as the service compares it, is checked separately below.
    title: 'Every 3 hours from 9:00 AM to 5:00 PM on a specific day (UNTIL corrected per the erratum)',
    dtstart: '1997-09-02T09:00',
    rrules: ['FREQ=HOURLY;INTERVAL=3;UNTIL=19970902T210000Z'],
    expected: at('EDT', 1997, 9, '2', ['09:00', '12:00', '15:00']),
  },
  {
    title: 'Every 15 minutes for 6 occurrences',
    dtstart: '1997-09-02T09:00',
    rrules: ['FREQ=MINUTELY;INTERVAL=15;COUNT=6'],
    expected: at('EDT', 1997, 9, '2', ['09:00', '09:15', '09:30', '09:45', '10:00', '10:15']),
  },
  {
    title: 'Every hour and a half for 4 occurrences',
    dtstart: '1997-09-02T09:00',
    rrules: ['FREQ=MINUTELY;INTERVAL=90;COUNT=4'],
    expected: at('EDT', 1997, 9, '2', ['09:00', '10:30', '12:00', '13:30']),
  },
  {
    title: 'Every 20 minutes from 9:00 AM to 4:40 PM every day',
    dtstart: '1997-09-02T09:00',
    rrules: [
      'FREQ=DAILY;BYHOUR=9,10,11,12,13,14,15,16;BYMINUTE=0,20,40',
      'FREQ=MINUTELY;INTERVAL=20;BYHOUR=9,10,11,12,13,14,15,16',
    ],
    forever: true,
    expected: at('EDT', 1997, 9, '2,3', everyTwentyMinutes()),
  },
  {
    title: 'An example where the days generated makes a difference because of WKST (MO)',
    dtstart: '1997-08-05T09:00',
    rrules: ['FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=MO'],
    expected: at('EDT', 1997, 8, '5,10,19,24'),
  },
  {
    title: 'Changing only WKST from MO to SU yields different results',
    dtstart: '1997-08-05T09:00',
    rrules: ['FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=SU'],
    expected: at('EDT', 1997, 8, '5,17,19,31'),
  },
  {
    title: 'An example where an invalid date (i.e., February 30) is ignored',
    dtstart: '2007-01-15T09:00',
    rrules: ['FREQ=MONTHLY;BYMONTHDAY=15,30;COUNT=5'],
    expected: [...at('EST', 2007, 1, '15,30'), ...at('EST', 2007, 2, '15'), ...at('EDT', 2007, 3, '15,30')],
  },
];

const HOUR = 3_600_000;
const WIDE_START = Date.parse('1990-01-01T00:00:00Z');
const WIDE_END = Date.parse('2100-01-01T00:00:00Z');

function expand(example: Example, rrule: string): string[] {
  const series = compileSeries({
    StartTimeZone: 'America/New_York',
    Recurrence: {
      StartTime: `${example.dtstart}:00`,
      Duration: 'PT1H',
      Pattern: `RRULE:${rrule}`,
      Exceptions: example.exdates?.map((t) => ({ OriginalTime: t, IsDeleted: true })),
    },
  });
  const last = Date.parse(example.expected[example.expected.length - 1]);
  // A one-hour occurrence overlaps [start, end) iff it starts in (start - 1 h, end).
  const windowEnd = example.forever ? last + 1 : WIDE_END;
  return series.occurrencesIn(WIDE_START, windowEnd, 10_000).map((o) => new Date(o.start).toISOString());
}

describe('RFC 5545 §3.8.5.3 examples (America/New_York)', () => {
  const rows = EXAMPLES.flatMap((example) => example.rrules.map((rrule) => ({ example, rrule })));
  it.each(rows)('$example.title: $rrule', ({ example, rrule }) => {
    expect(expand(example, rrule)).toEqual(example.expected);
  });

  it('every example ends where the RFC says when asked for any window after it (finite rules)', () => {
    for (const { example, rrule } of rows.filter((r) => !r.example.forever)) {
      const series = compileSeries({
        StartTimeZone: 'America/New_York',
        Recurrence: { StartTime: `${example.dtstart}:00`, Duration: 'PT1H', Pattern: rrule },
      });
      const last = Date.parse(example.expected[example.expected.length - 1]);
      expect(series.hasOccurrenceIn(last + 3_600_000, WIDE_END)).toBe(false);
      expect(series.hasOccurrenceIn(last, last + 1)).toBe(true);
    }
  });

  it('window queries between the listed instances find exactly them (the jump-and-stop path)', () => {
    for (const { example, rrule } of rows) {
      const series = compileSeries({
        StartTimeZone: 'America/New_York',
        Recurrence: {
          StartTime: `${example.dtstart}:00`,
          Duration: 'PT1H',
          Pattern: rrule,
          Exceptions: example.exdates?.map((t) => ({ OriginalTime: t, IsDeleted: true })),
        },
      });
      const instants = example.expected.map((e) => Date.parse(e));
      instants.forEach((at, i) => {
        expect({ rrule, at: example.expected[i], has: series.hasOccurrenceIn(at, at + 1) }).toEqual({
          rrule,
          at: example.expected[i],
          has: true,
        });
        const next = instants[i + 1];
        if (next !== undefined && next - at > HOUR) {
          expect({ rrule, after: example.expected[i], has: series.hasOccurrenceIn(at + HOUR, next) }).toEqual(
            {
              rrule,
              after: example.expected[i],
              has: false,
            },
          );
        }
      });
      if (!example.forever) {
        const last = instants[instants.length - 1];
        expect({ rrule, has: series.hasOccurrenceIn(last + HOUR, last + 30 * 24 * HOUR) }).toEqual({
          rrule,
          has: false,
        });
      }
    }
  });

  it('the literal "every 3 hours" rule (UNTIL=19970902T170000Z = 13:00 EDT) stops after 12:00, UNTIL being an instant', () => {
    const series = compileSeries({
      StartTimeZone: 'America/New_York',
      Recurrence: {
        StartTime: '1997-09-02T09:00:00',
        Pattern: 'FREQ=HOURLY;INTERVAL=3;UNTIL=19970902T170000Z',
      },
    });
    const starts = series
      .occurrencesIn(WIDE_START, WIDE_END, 100)
      .map((o) => new Date(o.start).toISOString());
    expect(starts).toEqual(at('EDT', 1997, 9, '2', ['09:00', '12:00']));
  });
});
