import { describe, expect, it } from '@jest/globals';
import ICAL from 'ical.js';
import { MS_PER_DAY } from '../recurrence/calendar.js';
import { zoneRules } from '../recurrence/time-zone.js';
import { resolveTzid } from './ical-zones.js';
import fc from 'fast-check';
import { vtimezoneToPosix } from './vtimezone-posix.js';
import { vtimezoneLines, zoneTransitions } from './vtimezone.js';

const HOUR = 3_600_000;

function vtimezone(lines: readonly string[]): ICAL.Component {
  const text = ['BEGIN:VCALENDAR', 'BEGIN:VTIMEZONE', 'TZID:Customized Time Zone', ...lines, 'END:VTIMEZONE'];
  return new ICAL.Component(
    ICAL.parse([...text, 'END:VCALENDAR'].join('\r\n')) as unknown[],
  ).getFirstSubcomponent('vtimezone')!;
}

/** An observance as lines: STANDARD or DAYLIGHT, DTSTART, TZOFFSETFROM, TZOFFSETTO and more lines. */
function observance(kind: string, dtstart: string, from: string, to: string, ...more: string[]): string[] {
  return [
    `BEGIN:${kind}`,
    `DTSTART:${dtstart}`,
    `TZOFFSETFROM:${from}`,
    `TZOFFSETTO:${to}`,
    ...more,
    `END:${kind}`,
  ];
}

/** Standard -03:30, daylight -02:30 from the first Sunday of October to the third Sunday of February, at midnight. */
const OUTLOOK_MADE_UP = [
  ...observance(
    'STANDARD',
    '16010101T000000',
    '-0230',
    '-0330',
    'RRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=3SU;BYMONTH=2',
  ),
  ...observance(
    'DAYLIGHT',
    '16010101T000000',
    '-0330',
    '-0230',
    'RRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=1SU;BYMONTH=10',
  ),
];

const day = (iso: string) => Math.floor(Date.parse(iso) / MS_PER_DAY);
const SPAN: [number, number] = [day('2026-01-01T00:00:00Z'), day('2029-12-31T00:00:00Z')];

/** ical.js's offset (ms) at a wall time in the component. */
function icalOffsetAtWall(component: ICAL.Component, wall: string): number {
  const [date, time] = wall.split('T');
  const [year, month, dayOfMonth] = date.split('-').map(Number);
  const [hour, minute] = time.split(':').map(Number);
  const zone = new ICAL.Timezone(component);
  const at = ICAL.Time.fromData(
    { year, month, day: dayOfMonth, hour, minute, second: 0, isDate: false },
    zone,
  );
  return zone.utcOffset(at) * 1000;
}

describe('VTIMEZONE → POSIX TZ string', () => {
  it('an Outlook "Customized Time Zone" that no IANA zone has (southern-hemisphere rule)', () => {
    const component = vtimezone(OUTLOOK_MADE_UP);
    const posix = vtimezoneToPosix(component, ...SPAN);
    expect(posix).toBe('<-0330>3:30<-0230>,M10.1.0/0,M2.3.0/0');
    const rules = zoneRules(posix!);
    // 2026: DST ends Sunday 15 February at 00:00 -02:30 (02:30Z), begins Sunday 4 October at 00:00 -03:30 (03:30Z).
    expect(rules.offsetAt(Date.parse('2026-02-15T02:29:59Z'))).toBe(-2.5 * HOUR);
    expect(rules.offsetAt(Date.parse('2026-02-15T02:30:00Z'))).toBe(-3.5 * HOUR);
    expect(rules.offsetAt(Date.parse('2026-10-04T03:29:59Z'))).toBe(-3.5 * HOUR);
    expect(rules.offsetAt(Date.parse('2026-10-04T03:30:00Z'))).toBe(-2.5 * HOUR);
    // The same offsets as ical.js reads the VTIMEZONE, on either side of each change.
    for (const wall of ['2026-02-14T22:00', '2026-02-15T02:00', '2026-10-03T22:00', '2026-10-04T02:00']) {
      const offset = icalOffsetAtWall(component, wall);
      expect([wall, rules.offsetAt(Date.parse(`${wall}:00Z`) - offset)]).toEqual([wall, offset]);
    }
  });

  it('is what resolveTzid answers once no IANA zone matches', () => {
    const from = Date.UTC(2026, 0, 5, 9);
    expect(resolveTzid('Customized Time Zone', vtimezone(OUTLOOK_MADE_UP), from, from)).toEqual({
      zone: '<-0330>3:30<-0230>,M10.1.0/0,M2.3.0/0',
      source: 'vtimezone-rules',
    });
    // An IANA zone still wins where one matches (US Eastern rules → America/New_York).
    const eastern = vtimezone([
      ...observance(
        'STANDARD',
        '16010101T020000',
        '-0400',
        '-0500',
        'RRULE:FREQ=YEARLY;BYDAY=1SU;BYMONTH=11',
      ),
      ...observance('DAYLIGHT', '16010101T020000', '-0500', '-0400', 'RRULE:FREQ=YEARLY;BYDAY=2SU;BYMONTH=3'),
    ]);
    expect(resolveTzid('Customized Time Zone', eastern, from, from)).toEqual({
      zone: 'America/New_York',
      source: 'offsets',
    });
    // The VTIMEZONE's rules come before an offset spelled in its name.
    expect(resolveTzid('UTC-03:30', vtimezone(OUTLOOK_MADE_UP), from, from)?.source).toBe('vtimezone-rules');
  });

  it('a libical-style zone with an older rule ended by UNTIL, last Sunday rules and 03:00 changes', () => {
    const component = vtimezone([
      ...observance(
        'DAYLIGHT',
        '19701025T020000',
        '+0945',
        '+1045',
        'RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU;UNTIL=20191026T163000Z',
      ),
      ...observance(
        'DAYLIGHT',
        '20201004T020000',
        '+0945',
        '+1045',
        'RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=1SU',
      ),
      ...observance(
        'STANDARD',
        '19700329T030000',
        '+1045',
        '+0945',
        'RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU',
      ),
    ]);
    expect(vtimezoneToPosix(component, ...SPAN)).toBe('<+0945>-9:45<+1045>,M10.1.0,M3.5.0/3');
    // Over a span that includes the old rule, the rules change within it: not expressible.
    expect(
      vtimezoneToPosix(component, day('2019-01-01T00:00:00Z'), day('2021-01-01T00:00:00Z')),
    ).toBeUndefined();
  });

  it('Tzdata-style "Sunday on or after" (BYMONTHDAY weeks), a fixed date as Jn, odd minutes', () => {
    const component = vtimezone([
      ...observance(
        'DAYLIGHT',
        '19700308T013000',
        '+0117',
        '+0217',
        'RRULE:FREQ=YEARLY;BYMONTH=3;BYMONTHDAY=8,9,10,11,12,13,14;BYDAY=SU',
      ),
      ...observance(
        'STANDARD',
        '19700921T023000',
        '+0217',
        '+0117',
        'RRULE:FREQ=YEARLY;BYMONTH=9;BYMONTHDAY=21',
      ),
    ]);
    expect(vtimezoneToPosix(component, ...SPAN)).toBe('<+0117>-1:17<+0217>,M3.2.0/1:30,J264/2:30');
    // The day of a yearly rule without BYMONTHDAY is DTSTART's (RFC 5545 §3.3.10).
    const dtstartDay = vtimezone([
      ...observance('DAYLIGHT', '19700308T013000', '+0117', '+0217', 'RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU'),
      ...observance('STANDARD', '19700921T023000', '+0217', '+0117', 'RRULE:FREQ=YEARLY;BYMONTH=9'),
    ]);
    expect(vtimezoneToPosix(dtstartDay, ...SPAN)).toBe('<+0117>-1:17<+0217>,M3.2.0/1:30,J264/2:30');
  });

  it('a VTIMEZONE without changes over the span is a fixed offset', () => {
    const component = vtimezone([...observance('STANDARD', '19700101T000000', '+0117', '+0117')]);
    expect(vtimezoneToPosix(component, ...SPAN)).toBe('<+0117>-1:17');
    const west = vtimezone([...observance('STANDARD', '19700101T000000', '-0317', '-0317')]);
    expect(vtimezoneToPosix(west, ...SPAN)).toBe('<-0317>3:17');
  });

  it.each([
    [
      'a change within the span (a one-off observance)',
      [
        ...observance('STANDARD', '19700101T000000', '+0117', '+0117'),
        ...observance('STANDARD', '20270601T000000', '+0117', '+0217'),
      ],
    ],
    [
      'the fifth Sunday (not every year has one; POSIX week 5 means the last)',
      [
        ...observance(
          'STANDARD',
          '16010101T000000',
          '-0230',
          '-0330',
          'RRULE:FREQ=YEARLY;BYDAY=5SU;BYMONTH=3',
        ),
        ...observance(
          'DAYLIGHT',
          '16010101T000000',
          '-0330',
          '-0230',
          'RRULE:FREQ=YEARLY;BYDAY=1SU;BYMONTH=10',
        ),
      ],
    ],
    [
      'BYSETPOS',
      [
        ...observance(
          'STANDARD',
          '16010101T000000',
          '-0230',
          '-0330',
          'RRULE:FREQ=YEARLY;BYDAY=SU;BYMONTH=3;BYSETPOS=2',
        ),
        ...observance(
          'DAYLIGHT',
          '16010101T000000',
          '-0330',
          '-0230',
          'RRULE:FREQ=YEARLY;BYDAY=1SU;BYMONTH=10',
        ),
      ],
    ],
    [
      'a rule every other year',
      [
        ...observance(
          'STANDARD',
          '16010101T000000',
          '-0230',
          '-0330',
          'RRULE:FREQ=YEARLY;INTERVAL=2;BYDAY=2SU;BYMONTH=3',
        ),
        ...observance(
          'DAYLIGHT',
          '16010101T000000',
          '-0330',
          '-0230',
          'RRULE:FREQ=YEARLY;BYDAY=1SU;BYMONTH=10',
        ),
      ],
    ],
    [
      'a Sunday on or after the 9th (no POSIX week)',
      [
        ...observance(
          'STANDARD',
          '16010101T000000',
          '-0230',
          '-0330',
          'RRULE:FREQ=YEARLY;BYMONTHDAY=9,10,11,12,13,14,15;BYDAY=SU;BYMONTH=3',
        ),
        ...observance(
          'DAYLIGHT',
          '16010101T000000',
          '-0330',
          '-0230',
          'RRULE:FREQ=YEARLY;BYDAY=1SU;BYMONTH=10',
        ),
      ],
    ],
    [
      'rules that end within the span (UNTIL)',
      [
        ...observance(
          'STANDARD',
          '16010101T000000',
          '-0230',
          '-0330',
          'RRULE:FREQ=YEARLY;BYDAY=2SU;BYMONTH=3;UNTIL=20280101T000000Z',
        ),
        ...observance(
          'DAYLIGHT',
          '16010101T000000',
          '-0330',
          '-0230',
          'RRULE:FREQ=YEARLY;BYDAY=1SU;BYMONTH=10;UNTIL=20280101T000000Z',
        ),
      ],
    ],
    ['no observance', []],
  ])('%s: undefined', (_name, lines) => {
    expect(vtimezoneToPosix(vtimezone(lines), ...SPAN)).toBeUndefined();
  });
});

describe('the export writes a POSIX zone as a VTIMEZONE that readers expand alike', () => {
  const POSIX_ZONES = [
    '<-0330>3:30<-0230>,M10.1.0/0,M2.3.0/0',
    '<+1030>-10:30<+11>-11,M10.1.0,M4.1.0',
    'IST-2IDT,M3.4.4/26,M10.5.0',
    '<-03>3<-02>,M3.5.0/-2,M10.5.0/-1',
    '<+0117>-1:17',
  ];
  const from = Date.UTC(2020, 0, 1);
  const to = Date.UTC(2060, 0, 1);
  const lines = (id: string) => vtimezoneLines(zoneRules(id), from, to);
  const parsed = (id: string) =>
    new ICAL.Component(
      ICAL.parse(['BEGIN:VCALENDAR', ...lines(id), 'END:VCALENDAR'].join('\r\n')) as unknown[],
    ).getFirstSubcomponent('vtimezone')!;

  it('with the TZID escaped as TEXT and the rules as yearly RRULEs', () => {
    const written = lines('<-0330>3:30<-0230>,M10.1.0/0,M2.3.0/0');
    expect(written).toContain('TZID:<-0330>3:30<-0230>\\,M10.1.0/0\\,M2.3.0/0');
    expect(written).toContain('RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=1SU');
    expect(written).toContain('RRULE:FREQ=YEARLY;BYMONTH=2;BYDAY=3SU');
    expect(parsed('<-0330>3:30<-0230>,M10.1.0/0,M2.3.0/0').getFirstPropertyValue('tzid')).toBe(
      '<-0330>3:30<-0230>,M10.1.0/0,M2.3.0/0',
    );
  });

  it.each(POSIX_ZONES)('%s: ical.js reads every steady wall time as the engine does, 2020–2060', (id) => {
    const rules = zoneRules(id);
    const zone = new ICAL.Timezone(parsed(id));
    fc.assert(
      fc.property(fc.integer({ min: from, max: to }), (at) => {
        const instant = Math.floor(at / 1000) * 1000;
        const offset = rules.offsetAt(instant);
        if (
          rules.offsetAt(instant - MS_PER_DAY) !== offset ||
          rules.offsetAt(instant + MS_PER_DAY) !== offset
        )
          return;
        const d = new Date(instant + offset);
        const time = ICAL.Time.fromData(
          {
            year: d.getUTCFullYear(),
            month: d.getUTCMonth() + 1,
            day: d.getUTCDate(),
            hour: d.getUTCHours(),
            minute: d.getUTCMinutes(),
            second: d.getUTCSeconds(),
            isDate: false,
          },
          zone,
        );
        expect([instant, time.toUnixTime() * 1000]).toEqual([instant, instant]);
      }),
      { numRuns: 1000 },
    );
    // And on either side of every change.
    for (const t of zoneTransitions(rules, from, Date.UTC(2030, 0, 1))) {
      const jump = Math.abs(t.to - t.from);
      for (const [at, offset] of [
        [t.at - jump - 1000, t.from],
        [t.at + jump, t.to],
      ]) {
        expect([at, icalOffsetAtWall(parsed(id), new Date(at + offset).toISOString().slice(0, 16))]).toEqual([
          at,
          offset,
        ]);
      }
    }
  });

  it('and importing that VTIMEZONE under another TZID gives the same string back', () => {
    const id = '<-0330>3:30<-0230>,M10.1.0/0,M2.3.0/0';
    expect(vtimezoneToPosix(parsed(id), ...SPAN)).toBe(id);
  });
});
