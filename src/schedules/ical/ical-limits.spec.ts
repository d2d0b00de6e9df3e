// The import's size limits apply while the text is read — an oversize part is refused (or its
// event skipped) in about the time it takes to find it, without being split into values first.
import { describe, expect, it, jest } from '@jest/globals';
import fc from 'fast-check';
import ICAL from 'ical.js';
import { ContentLineMeter, decodeLines, IcalSyntaxError } from './ical-content.js';
import { IcalImportError, importCalendar } from './ical-import.js';
import {
  MAX_COMPONENTS,
  MAX_DATE_VALUES,
  MAX_DEPTH,
  MAX_IMPORT_DATE_VALUES,
  MAX_IMPORT_PROPERTIES,
  MAX_LINE_LENGTH,
  MAX_NESTED_PER_COMPONENT,
  MAX_PROPERTIES_PER_COMPONENT,
} from './ical-limits.js';

const ics = (...lines: Array<string | string[]>) =>
  ['BEGIN:VCALENDAR', 'VERSION:2.0', ...lines.flat(), 'END:VCALENDAR', ''].join('\r\n');
const event = (uid: string, ...lines: string[]) => [
  'BEGIN:VEVENT',
  `UID:${uid}`,
  'DTSTART:20260105T090000Z',
  'DTEND:20260105T091500Z',
  ...lines,
  'END:VEVENT',
];
const dates = (count: number) =>
  Array.from(
    { length: count },
    (_, i) => `2027${String((i % 12) + 1).padStart(2, '0')}01T0900${String(i % 60).padStart(2, '0')}Z`,
  ).join(',');

function refusal(text: string): string {
  try {
    importCalendar(text);
  } catch (error) {
    if (error instanceof IcalImportError) return error.message;
    throw error;
  }
  throw new Error('imported without a problem');
}

describe('iCalendar limits applied while reading', () => {
  it('refuses a 25 MB RDATE line, naming its line, without handing it to ical.js to split', () => {
    const line = `RDATE:${'20270101T090000Z,'.repeat(1_500_000)}20270101T090000Z`;
    const text = ics(...event('a', line));
    // Splitting the line into values used to take seconds. Work is checked, not time (bench/worst-inputs.mjs
    // times it): ical.js, which splits a property's values, is never handed a line over the limit.
    const parsed = jest.spyOn(ICAL.parse, 'property');
    try {
      expect(refusal(text)).toMatch(/^line 7: RDATE: is more than 1,048,576 characters long/);
      expect(parsed.mock.calls.filter(([content]) => content.length > MAX_LINE_LENGTH)).toEqual([]);
    } finally {
      parsed.mockRestore();
    }
  });

  it('skips an event whose RDATE lines together pass the limit, counted before ical.js splits them', () => {
    const half = `RDATE:${dates(MAX_DATE_VALUES / 2 + 1)}`;
    const imported = importCalendar(ics(...event('over', half, half), ...event('kept')));
    expect(imported.ScheduleItems).toHaveLength(1);
    expect(imported.skipped).toEqual([
      expect.objectContaining({
        uid: 'over',
        reason: expect.stringMatching(/line 8: RDATE: brings the event's RDATE values to more than 1,000/),
      }),
    ]);
    // Exactly at the limit is fine.
    const full = importCalendar(ics(...event('full', `RDATE:${dates(MAX_DATE_VALUES)}`)));
    expect(full.skipped).toEqual([]);
  });

  it('refuses the calendar at the line that brings its RDATE and EXDATE values past the per-calendar limit', () => {
    const events = MAX_IMPORT_DATE_VALUES / MAX_DATE_VALUES;
    const full = (i: number) =>
      event(`full-${i}`, `RDATE:${dates(MAX_DATE_VALUES / 2)}`, `EXDATE:${dates(MAX_DATE_VALUES / 2)}`);
    const body = ics(
      ...Array.from({ length: events }, (_, i) => full(i)),
      ...event('over', 'EXDATE:20270101T090000Z'),
    );
    // Every event is under its own limit; the last value passes the calendar's.
    expect(refusal(body)).toBe(
      `line ${2 + events * 7 + 5}: EXDATE: brings the calendar's RDATE and EXDATE values to more than 100,000, ` +
        'the most one import may have: split the calendar',
    );
  }, 60_000);

  it('refuses the calendar at the property that passes the limit on kept properties in all', () => {
    const stamps = Array.from(
      { length: MAX_PROPERTIES_PER_COMPONENT - 10 },
      () => 'DTSTAMP:20260101T000000Z',
    );
    const events = Math.ceil(MAX_IMPORT_PROPERTIES / stamps.length) + 1;
    const body = ics(...Array.from({ length: events }, (_, i) => event(`stamped-${i}`, ...stamps)));
    expect(refusal(body)).toMatch(
      /^line \d+: DTSTAMP: brings the properties the import keeps .* to more than 300,000, the most one import/,
    );
  }, 60_000);

  it('maps an RDATE entry to its line, with only the first entry of each line noted', () => {
    const imported = importCalendar(
      ics(
        ...event(
          'lines',
          'RRULE:FREQ=DAILY',
          'RDATE:20270101T090000Z,20270102T090000Z',
          'RDATE:20270103T090000Z,20270104T090000Z',
        ),
      ),
    );
    expect(imported.lineOf('ScheduleItems[0].Recurrence.RecurrenceDates[1]')?.line).toBe(8);
    expect(imported.lineOf('ScheduleItems[0].Recurrence.RecurrenceDates[3]')?.line).toBe(9);
  });

  it('skips an event with an over-long rule line or read line', () => {
    const rule = `RRULE:FREQ=DAILY;BYSECOND=${Array.from({ length: 800 }, (_, i) => i % 60).join(',')}`;
    const summary = `SUMMARY:${'x'.repeat(70_000)}`;
    const imported = importCalendar(
      ics(...event('rule', rule), ...event('summary', summary), ...event('kept')),
    );
    expect(imported.skipped.map((entry) => entry.reason)).toEqual([
      expect.stringMatching(/RRULE: is 2,\d{3} characters long; at most 2,000 are read/),
      expect.stringMatching(/SUMMARY: is 70,008 characters long; at most 65,536 are read/),
    ]);
  });

  it('refuses the calendar at the first component over the total, wherever it is', () => {
    const empty = Array.from({ length: MAX_COMPONENTS }, () => 'BEGIN:X-EMPTY\r\nEND:X-EMPTY').join('\r\n');
    expect(refusal(ics(event('a'), empty))).toBe(
      `line ${2 + 5 + 2 * (MAX_COMPONENTS - 2) + 1}: BEGIN: the calendar has more than 100,000 components; split it`,
    );
  });

  it('refuses nesting deeper than the limit', () => {
    const nested = Array.from({ length: MAX_DEPTH }, (_, i) => `BEGIN:X-N${i}`);
    const closed = Array.from({ length: MAX_DEPTH }, (_, i) => `END:X-N${MAX_DEPTH - 1 - i}`);
    expect(refusal(ics(...event('a'), ...nested, ...closed))).toMatch(
      /BEGIN: components are nested more than 8 deep/,
    );
  });

  it('skips a component with too many properties or nested components', () => {
    const attendees = Array.from({ length: MAX_PROPERTIES_PER_COMPONENT }, (_, i) => `SUMMARY:${i}`);
    const alarms = Array.from({ length: MAX_NESTED_PER_COMPONENT + 1 }, () => [
      'BEGIN:VALARM',
      'END:VALARM',
    ]).flat();
    const imported = importCalendar(
      ics(event('people', ...attendees), event('alarms', ...alarms), event('kept')),
    );
    expect(imported.ScheduleItems).toHaveLength(1);
    expect(imported.skipped.map((entry) => [entry.uid, entry.reason])).toEqual([
      ['people', expect.stringMatching(/has more than 10,000 properties/)],
      ['alarms', expect.stringMatching(/has more than 1,000 components/)],
    ]);
  });
});

describe('iCalendar import cost stays proportional to the input (fuzz)', () => {
  // Calendars whose parts are multiplied: events, RDATE values (up to past the limit), alarms, unread lines,
  // unknown components, line length. The text parsed and the heap growth per input byte stay under a small constant.

  it('imports or refuses every generated calendar with parsing and memory linear in its size', () => {
    fc.assert(
      fc.property(
        fc.record({
          events: fc.integer({ min: 1, max: 40 }),
          rdates: fc.integer({ min: 0, max: 1_100 }),
          alarms: fc.integer({ min: 0, max: 20 }),
          unread: fc.integer({ min: 0, max: 50 }),
          unknown: fc.integer({ min: 0, max: 2_000 }),
          lineLength: fc.integer({ min: 1, max: 100_000 }),
        }),
        (parts) => {
          const alarms = Array.from(
            { length: parts.alarms },
            () => 'BEGIN:VALARM\r\nACTION:DISPLAY\r\nEND:VALARM',
          );
          const unread = Array.from({ length: parts.unread }, (_, i) => `ATTENDEE:mailto:${i}@example.com`);
          const one = (i: number) =>
            event(
              `fuzz-${i}`,
              'RRULE:FREQ=WEEKLY;BYDAY=MO',
              ...(parts.rdates > 0 ? [`RDATE:${dates(parts.rdates)}`] : []),
              `DESCRIPTION:${'d'.repeat(parts.lineLength)}`,
              ...unread,
              ...alarms,
            ).join('\r\n');
          const text = ics(
            Array.from({ length: parts.events }, (_, i) => one(i)).join('\r\n'),
            'BEGIN:FOO\r\nEND:FOO\r\n'.repeat(parts.unknown) + 'X-END:1',
          );
          // Work, not time, is checked (bench/worst-inputs.mjs times these shapes): the text ical.js is handed
          // to parse, every content line together, is at most the input (no line is read twice), and the heap
          // grows by a few times the input.
          const parsed = jest.spyOn(ICAL.parse, 'property');
          const heapBefore = process.memoryUsage().heapUsed;
          try {
            importCalendar(text);
          } catch (error) {
            if (!(error instanceof IcalImportError)) throw error;
          } finally {
            parsed.mockRestore();
          }
          const parsedChars = parsed.mock.calls.reduce((sum, [content]) => sum + content.length, 0);
          const heapGrowth = process.memoryUsage().heapUsed - heapBefore;
          expect(parsedChars).toBeLessThanOrEqual(text.length);
          expect(heapGrowth).toBeLessThan(64 * 1024 * 1024 + text.length * 20);
        },
      ),
      { numRuns: 8, seed: 31 },
    );
  });
});

/** Feeds `body` to a meter in chunks of `size` octets; the refusal, and how many octets had been fed by then. */
function metered(body: Buffer, size: number, charset?: string): { refusal?: IcalSyntaxError; fed: number } {
  const meter = new ContentLineMeter(charset);
  for (let at = 0; at < body.length; at += size) {
    try {
      meter.feed(body.subarray(at, at + size));
    } catch (error) {
      if (!(error instanceof IcalSyntaxError)) throw error;
      return { refusal: error, fed: Math.min(body.length, at + size) };
    }
  }
  return { fed: body.length };
}

/** The first line the parse finds over MAX_LINE_LENGTH (after decoding and unfolding), with its property. */
function firstOverlong(body: Buffer): { line: number; property: string } | undefined {
  for (const { line, text, overLength } of decodeLines(body)) {
    if (overLength !== undefined)
      return { line, property: /^[A-Za-z0-9-]+/.exec(text)?.[0].toUpperCase() ?? '' };
  }
  return undefined;
}

describe('content lines measured as the body arrives (ContentLineMeter)', () => {
  it('refuses the 25 MB RDATE line once it passes the limit, naming line 7 and RDATE, without reading on', () => {
    const body = Buffer.from(
      ics(...event('a', `RDATE:${'20270101T090000Z,'.repeat(1_500_000)}20270101T090000Z`)),
    );
    const { refusal, fed } = metered(body, 64 * 1024);
    expect(refusal).toMatchObject({ line: 7, property: 'RDATE' });
    expect(refusal?.message).toMatch(/^is more than 1,048,576 characters long; no line/);
    expect(fed).toBeLessThanOrEqual(MAX_LINE_LENGTH + 2 * 64 * 1024);
  });

  it('measures a body in another charset in octets: refused after 4 MiB of one line, never before the parse', () => {
    const rdate = `RDATE:${'20270101T090000Z,'.repeat(1_500_000)}20270101T090000Z`;
    const latin = Buffer.from(ics(...event('a', rdate)), 'latin1');
    const { refusal, fed } = metered(latin, 64 * 1024, 'windows-1252');
    expect(refusal).toMatchObject({ line: 7, property: 'RDATE' });
    expect(fed).toBeLessThanOrEqual(4 * MAX_LINE_LENGTH + 2 * 64 * 1024);
    // UTF-16: its zero octets skipped, line and property are named as in UTF-8; the meter lets 3 Mi characters by
    // (the parse refuses that line later), 5 Mi not.
    const summary = (chars: number) => ics(...event('b', `SUMMARY:${'x'.repeat(chars)}`));
    expect(
      metered(Buffer.from(summary(3 * MAX_LINE_LENGTH), 'utf16le'), 65_536, 'utf-16le').refusal,
    ).toBeUndefined();
    expect(
      metered(Buffer.from(summary(5 * MAX_LINE_LENGTH), 'utf16le'), 65_536, 'utf-16le').refusal,
    ).toMatchObject({
      line: 7,
      property: 'SUMMARY',
    });
    // A single-octet charset's line of exactly the limit passes, as the parse lets it.
    const atLimit = Buffer.from(summary(MAX_LINE_LENGTH - 'SUMMARY:'.length), 'latin1');
    expect(metered(atLimit, 65_536, 'iso-8859-1').refusal).toBeUndefined();
  });

  it('refuses exactly the lines the parse finds too long, wherever the chunks split the body', () => {
    // Lines just under and just over the limit, folded or not, in 2-, 3- and 4-octet characters (a 4-octet one is
    // 2 UTF-16 units: the parse counts it twice, the meter once, so the meter may only be later, never stricter).
    const piece = fc.constantFrom('a', 'é', '€', '😀');
    const longLine = fc.record({
      name: fc.constantFrom('SUMMARY', 'RDATE', 'X-LONG'),
      piece,
      chars: fc.integer({ min: MAX_LINE_LENGTH - 40, max: MAX_LINE_LENGTH + 40 }),
      foldEvery: fc.constantFrom(0, 75, 4096),
      newline: fc.constantFrom('\r\n', '\n', '\r'),
    });
    fc.assert(
      fc.property(longLine, fc.integer({ min: 1, max: 100_000 }), fc.boolean(), (long, size, bom) => {
        const pieces = Math.floor((long.chars - long.name.length - 1) / long.piece.length);
        let value = long.piece.repeat(Math.max(0, pieces));
        if (long.foldEvery > 0) {
          value = value.replace(new RegExp(`(.{${long.foldEvery}})`, 'gu'), `$1${long.newline} `);
        }
        const text = ics(...event('a', `${long.name}:${value}`)).replaceAll('\r\n', long.newline);
        const body = Buffer.concat([Buffer.from(bom ? [0xef, 0xbb, 0xbf] : []), Buffer.from(text)]);
        const expected = firstOverlong(body);
        const { refusal } = metered(body, size);
        if (refusal !== undefined) expect(refusal).toMatchObject(expected!);
        // Without astral characters the meter counts what the parse counts: it refuses every such line.
        else expect(expected === undefined || long.piece === '😀').toBe(true);
      }),
      { numRuns: 12, seed: 31 },
    );
  });
});
