import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { expandWithIcalJs } from '../../../test/support/ical-import-oracle.js';
import { compileSeries } from '../recurrence/index.js';
import { IcalImportError, importCalendar } from './ical-import.js';

// Property: for random calendars (zones written as IANA TZIDs, Windows-named and unnamed VTIMEZONEs, UTC, floating
// with X-WR-TIMEZONE, all-day; RRULEs with COUNT/UNTIL; EXDATE/RDATE lines and comma lists; moved and cancelled
// overrides), the imported items expanded by the service's engine give exactly the occurrences ical.js expands from
// the same text. The engine is not the oracle's: ical.js does its own VTIMEZONE arithmetic and RRULE expansion.

const DAY = 86_400_000;

const EU_RULES = [
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
];
const US_EASTERN_RULES = [
  'BEGIN:STANDARD',
  'DTSTART:16010101T020000',
  'TZOFFSETFROM:-0400',
  'TZOFFSETTO:-0500',
  'RRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=1SU;BYMONTH=11',
  'END:STANDARD',
  'BEGIN:DAYLIGHT',
  'DTSTART:16010101T020000',
  'TZOFFSETFROM:-0500',
  'TZOFFSETTO:-0400',
  'RRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=2SU;BYMONTH=3',
  'END:DAYLIGHT',
];

const US_CENTRAL_RULES = [
  'BEGIN:DAYLIGHT',
  'TZOFFSETFROM:-0600',
  'TZOFFSETTO:-0500',
  'DTSTART:20070311T020000',
  'RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU',
  'END:DAYLIGHT',
  'BEGIN:STANDARD',
  'TZOFFSETFROM:-0500',
  'TZOFFSETTO:-0600',
  'DTSTART:20071104T020000',
  'RRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU',
  'END:STANDARD',
];

/** How an event's times are written (every TZID has its VTIMEZONE, as Google and Outlook write them). */
type Style =
  | { kind: 'tzid'; tzid: string; vtimezone?: string[] }
  | { kind: 'utc' }
  | { kind: 'floating' }
  | { kind: 'date' };

const STYLES: Style[] = [
  { kind: 'tzid', tzid: 'Europe/Berlin', vtimezone: EU_RULES },
  { kind: 'tzid', tzid: 'America/Chicago', vtimezone: US_CENTRAL_RULES },
  { kind: 'tzid', tzid: 'W. Europe Standard Time', vtimezone: EU_RULES },
  { kind: 'tzid', tzid: 'Customized Time Zone', vtimezone: US_EASTERN_RULES },
  { kind: 'utc' },
  { kind: 'floating' },
  { kind: 'date' },
];

const pad = (n: number): string => String(n).padStart(2, '0');
/** Wall ms (UTC fields) → 20260105T090000 or 20260105. */
function basic(wall: number, date = false): string {
  const d = new Date(wall);
  const day = `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}`;
  return date ? day : `${day}T${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}00`;
}

interface RandomEvent {
  style: number;
  startDay: number;
  startHalfHour: number;
  lengthHalfHours: number;
  freq: string;
  interval: number;
  byDay: string[];
  end: { count: number } | { untilDays: number } | null;
  exdates: number[];
  rdates: Array<{ day: number; halfHour: number }>;
  overrides: Array<{ occurrence: number; cancelled: boolean; shiftHalfHours: number }>;
}

const arbitraryEvent: fc.Arbitrary<RandomEvent> = fc.record({
  style: fc.integer({ min: 0, max: STYLES.length - 1 }),
  startDay: fc.integer({ min: 0, max: 3 * 365 }),
  // 07:00–20:30: never in a DST gap or fold.
  startHalfHour: fc.integer({ min: 14, max: 41 }),
  lengthHalfHours: fc.integer({ min: 0, max: 6 }),
  freq: fc.constantFrom('DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY'),
  interval: fc.integer({ min: 1, max: 3 }),
  byDay: fc.subarray(['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU']),
  end: fc.oneof(
    fc.constant(null),
    fc.record({ count: fc.integer({ min: 1, max: 40 }) }),
    // UNTIL after DTSTART: before it, RFC 5545 still makes DTSTART an instance (the engine does), ical.js lists none.
    fc.record({ untilDays: fc.integer({ min: 1, max: 500 }) }),
  ),
  exdates: fc.array(fc.integer({ min: 0, max: 60 }), { maxLength: 4 }),
  rdates: fc.array(
    fc.record({ day: fc.integer({ min: 1, max: 400 }), halfHour: fc.integer({ min: 14, max: 41 }) }),
    {
      maxLength: 3,
    },
  ),
  overrides: fc.uniqueArray(
    fc.record({
      occurrence: fc.integer({ min: 0, max: 30 }),
      cancelled: fc.boolean(),
      shiftHalfHours: fc.integer({ min: -4, max: 30 }),
    }),
    { maxLength: 3, selector: (override) => override.occurrence },
  ),
});

/** The n-th start (wall ms) of the rule as written without BYDAY/COUNT/UNTIL — used to aim EXDATEs and overrides. */
function nthStep(start: number, freq: string, interval: number, n: number): number {
  const d = new Date(start);
  switch (freq) {
    case 'DAILY':
      return start + n * interval * DAY;
    case 'WEEKLY':
      return start + n * interval * 7 * DAY;
    case 'MONTHLY':
      return Date.UTC(
        d.getUTCFullYear(),
        d.getUTCMonth() + n * interval,
        d.getUTCDate(),
        d.getUTCHours(),
        d.getUTCMinutes(),
      );
    default:
      return Date.UTC(
        d.getUTCFullYear() + n * interval,
        d.getUTCMonth(),
        d.getUTCDate(),
        d.getUTCHours(),
        d.getUTCMinutes(),
      );
  }
}

function calendarOf(events: RandomEvent[]): string {
  const lines = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//property//EN',
    'X-WR-TIMEZONE:America/Los_Angeles',
  ];
  for (const style of STYLES) {
    if (style.kind === 'tzid' && style.vtimezone !== undefined) {
      lines.push('BEGIN:VTIMEZONE', `TZID:${style.tzid}`, ...style.vtimezone, 'END:VTIMEZONE');
    }
  }
  events.forEach((event, index) => {
    const style = STYLES[event.style];
    const allDay = style.kind === 'date';
    const base = Date.UTC(2025, 0, 1) + event.startDay * DAY;
    const start = allDay ? base : base + event.startHalfHour * 30 * 60_000;
    const prefix = style.kind === 'tzid' ? `;TZID=${style.tzid}` : allDay ? ';VALUE=DATE' : '';
    const suffix = style.kind === 'utc' ? 'Z' : '';
    const time = (wall: number) => `${prefix}:${basic(wall, allDay)}${suffix}`;
    const end = allDay
      ? start + (1 + (event.lengthHalfHours % 3)) * DAY
      : start + event.lengthHalfHours * 30 * 60_000;
    const parts = [`FREQ=${event.freq}`, `INTERVAL=${event.interval}`];
    if (event.byDay.length > 0 && (event.freq === 'WEEKLY' || event.freq === 'DAILY')) {
      // DTSTART synchronized with the rule: RFC 5545 leaves the set undefined otherwise (the engine counts DTSTART
      // as the first occurrence, ical.js drops it).
      const own = ['SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA'][new Date(start).getUTCDay()];
      parts.push(`BYDAY=${[...new Set([...event.byDay, own])].join(',')}`);
    }
    if (event.end !== null && 'count' in event.end) parts.push(`COUNT=${event.end.count}`);
    if (event.end !== null && 'untilDays' in event.end) {
      // RFC 5545: UNTIL is UTC when DTSTART has a zone, floating when DTSTART is floating, a date for a date.
      const utcUntil = style.kind === 'tzid' || style.kind === 'utc';
      parts.push(`UNTIL=${basic(start + event.end.untilDays * DAY, allDay)}${utcUntil ? 'Z' : ''}`);
    }
    const uid = `e${index}@property`;
    lines.push(
      'BEGIN:VEVENT',
      `UID:${uid}`,
      `SUMMARY:Event ${index}`,
      `DTSTART${time(start)}`,
      `DTEND${time(end)}`,
    );
    lines.push(`RRULE:${parts.join(';')}`);
    const exdates = event.exdates.map((n) => nthStep(start, event.freq, event.interval, n));
    if (exdates.length > 0)
      lines.push(`EXDATE${prefix}:${exdates.map((wall) => basic(wall, allDay) + suffix).join(',')}`);
    for (const rdate of event.rdates) {
      const wall = allDay
        ? start + rdate.day * DAY
        : Date.UTC(2025, 0, 1) + (event.startDay + rdate.day) * DAY + rdate.halfHour * 30 * 60_000;
      lines.push(`RDATE${time(wall)}`);
    }
    lines.push('END:VEVENT');
    for (const override of event.overrides) {
      const original = nthStep(start, event.freq, event.interval, override.occurrence);
      const moved = allDay
        ? original + Math.round(override.shiftHalfHours / 8) * DAY
        : original + override.shiftHalfHours * 30 * 60_000;
      lines.push(
        'BEGIN:VEVENT',
        `UID:${uid}`,
        `RECURRENCE-ID${time(original)}`,
        ...(override.cancelled ? ['STATUS:CANCELLED'] : []),
        `DTSTART${time(moved)}`,
        `DTEND${time(moved + (end - start))}`,
        'END:VEVENT',
      );
    }
  });
  lines.push('END:VCALENDAR');
  return `${lines.join('\r\n')}\r\n`;
}

describe('imported calendars expand like ical.js expands them (property)', () => {
  it('agrees on random calendars over three years', () => {
    fc.assert(
      fc.property(fc.array(arbitraryEvent, { minLength: 1, maxLength: 3 }), (events) => {
        const text = calendarOf(events);
        const { ScheduleItems } = importCalendar(text);
        const from = Date.UTC(2024, 0, 1);
        const until = Date.UTC(2028, 6, 1);
        const actual = ScheduleItems.flatMap((item) =>
          compileSeries(item)
            .occurrencesIn(from, until, 100_000)
            .filter((occurrence) => occurrence.start < until)
            .map(({ start, end }) => ({ start, end })),
        ).sort((a, b) => a.start - b.start || a.end - b.end);
        const expected = expandWithIcalJs(text, until);
        const iso = (list: Array<{ start: number; end: number }>) =>
          list.map(({ start, end }) => `${new Date(start).toISOString()} – ${new Date(end).toISOString()}`);
        expect(iso(actual)).toEqual(iso(expected));
      }),
      { numRuns: 40, seed: 16 },
    );
  });
});

describe('broken calendars are refused, never crash (property)', () => {
  const fixtures = [
    'google-weekly-until-allday-overrides.ics',
    'outlook-exchange-windows-tzs-exdate-list.ics',
  ].map((name) => readFileSync(new URL(`../../../test/fixtures/ical/${name}`, import.meta.url), 'utf8'));
  const mutation = fc.record({
    fixture: fc.integer({ min: 0, max: fixtures.length - 1 }),
    edits: fc.array(
      fc.record({
        at: fc.nat(),
        kind: fc.constantFrom('delete', 'insert', 'duplicate-line', 'drop-line', 'swap-lines'),
        text: fc.constantFrom(
          ':',
          ';',
          '"',
          ',',
          '\r\n',
          '\r\n ',
          'Z',
          '9',
          'T',
          '=',
          'BEGIN:VEVENT',
          'END:VEVENT',
          '\u0000',
        ),
      }),
      { minLength: 1, maxLength: 4 },
    ),
  });

  it('answers either items or IcalImportError for mutated real-world files', () => {
    fc.assert(
      fc.property(mutation, ({ fixture, edits }) => {
        let text = fixtures[fixture];
        for (const edit of edits) {
          const lines = text.split('\n');
          const line = edit.at % lines.length;
          const at = edit.at % (text.length + 1);
          switch (edit.kind) {
            case 'delete':
              text = text.slice(0, at) + text.slice(at + 1);
              break;
            case 'insert':
              text = text.slice(0, at) + edit.text + text.slice(at);
              break;
            case 'duplicate-line':
              lines.splice(line, 0, lines[line]);
              text = lines.join('\n');
              break;
            case 'drop-line':
              lines.splice(line, 1);
              text = lines.join('\n');
              break;
            case 'swap-lines':
              [lines[line], lines[(line + 1) % lines.length]] = [
                lines[(line + 1) % lines.length],
                lines[line],
              ];
              text = lines.join('\n');
              break;
          }
        }
        try {
          const { ScheduleItems } = importCalendar(text);
          expect(ScheduleItems.length).toBeGreaterThan(0);
        } catch (error) {
          expect(error).toBeInstanceOf(IcalImportError);
          for (const problem of (error as IcalImportError).problems) expect(problem.line).toBeGreaterThan(0);
        }
      }),
      { numRuns: 300, seed: 16 },
    );
  });
});
