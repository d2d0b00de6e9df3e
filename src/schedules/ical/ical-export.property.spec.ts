// Property: for random schedule items (rules, zones, Offsets, Durations, RDATE/EXDATE, exceptions), ical.js expanding
// the exported VEVENTs gives the occurrences the engine gives, start and end, over three years. Times of day are
// kept out of 01:00–04:00 in zones with DST, where ical.js reads wall times differently from RFC 5545, and YEARLY
// rules and MONTHLY;BYDAY rules get no BYHOUR/BYMINUTE, which ical.js misexpands there (see docs/schedules.md);
// items the export refuses (an Offset it cannot write) must be unbounded and carry an Offset.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import ICAL from 'ical.js';
import { compileSeries } from '../recurrence/series-compiler.js';
import { exportCalendar, IcalExportError, type ExportItem } from './ical-export.js';

const FROM = Date.UTC(2024, 0, 1);
const TO = Date.UTC(2027, 0, 1);
const DAY = 86_400_000;
const HOUR = 3_600_000;
const WEEKDAYS = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'];

const ZONES = ['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kolkata', null] as const;
const OFFSETS = [null, '-PT15M', 'PT2H', '-P1D', 'P2D', '-PT4H', 'PT30M', '-P1DT2H', 'PT14H', '-PT11H'];

interface Generated {
  zone: (typeof ZONES)[number];
  day: number;
  hour: number;
  minute: number;
  rule: string;
  hours: number[];
  minutes: number[];
  end: 'none' | 'count' | 'until';
  count: number;
  untilDays: number;
  offset: string | null;
  durationMinutes: number;
  rdates: number[];
  exdates: number[];
  deleteNth: number | null;
  moveNth: number | null;
  /** No rule: DTSTART plus the RDATEs, with the recurrence's Duration (minutes) instead of End − Start. */
  setDurationMinutes: number | null;
}

const rule = fc.oneof(
  fc
    .record({ freq: fc.constant('DAILY'), interval: fc.integer({ min: 1, max: 3 }) })
    .map((r) => `FREQ=DAILY;INTERVAL=${r.interval}`),
  fc
    .record({
      interval: fc.integer({ min: 1, max: 3 }),
      days: fc.uniqueArray(fc.integer({ min: 0, max: 6 }), { minLength: 1, maxLength: 3 }),
      wkst: fc.integer({ min: 0, max: 6 }),
    })
    .map(
      (r) =>
        `FREQ=WEEKLY;INTERVAL=${r.interval};BYDAY=${r.days.map((d) => WEEKDAYS[d]).join(',')};WKST=${WEEKDAYS[r.wkst]}`,
    ),
  fc
    .record({ days: fc.uniqueArray(fc.integer({ min: 1, max: 28 }), { minLength: 1, maxLength: 3 }) })
    .map((r) => `FREQ=MONTHLY;BYMONTHDAY=${r.days.join(',')}`),
  fc
    .record({ n: fc.constantFrom(1, 2, 3, -1), day: fc.integer({ min: 0, max: 6 }) })
    .map((r) => `FREQ=MONTHLY;BYDAY=${r.n}${WEEKDAYS[r.day]}`),
  fc.constant('FREQ=YEARLY'),
  fc.record({ interval: fc.integer({ min: 5, max: 13 }) }).map((r) => `FREQ=HOURLY;INTERVAL=${r.interval}`),
);

const generated: fc.Arbitrary<Generated> = fc.record({
  zone: fc.constantFrom(...ZONES),
  day: fc.integer({ min: 0, max: 600 }),
  hour: fc.integer({ min: 5, max: 20 }),
  minute: fc.constantFrom(0, 15, 30, 45),
  rule,
  hours: fc.uniqueArray(fc.integer({ min: 5, max: 20 }), { maxLength: 2 }),
  minutes: fc.uniqueArray(fc.constantFrom(0, 20, 40), { maxLength: 2 }),
  end: fc.constantFrom('none', 'count', 'until'),
  count: fc.integer({ min: 1, max: 40 }),
  // Negative: UNTIL before DTSTART, where DTSTART is the only occurrence of the rule.
  untilDays: fc.oneof(fc.integer({ min: 0, max: 500 }), fc.integer({ min: -40, max: -1 })),
  offset: fc.constantFrom(...OFFSETS),
  durationMinutes: fc.constantFrom(0, 30, 60, 90),
  rdates: fc.uniqueArray(fc.integer({ min: -30, max: 600 }), { maxLength: 3 }),
  exdates: fc.uniqueArray(fc.integer({ min: 0, max: 60 }), { maxLength: 2 }),
  deleteNth: fc.option(fc.integer({ min: 0, max: 5 })),
  moveNth: fc.option(fc.integer({ min: 6, max: 10 })),
  setDurationMinutes: fc.option(fc.constantFrom(15, 45, 120), { freq: 4 }),
});

const wall = (ms: number) => new Date(ms).toISOString().slice(0, 19);

/** Whether a wall time of day (ms) lies where DST changes happen in the zones above (01:00–04:00). */
const nearChange = (timeOfDay: number) => timeOfDay >= 1 * HOUR && timeOfDay < 4 * HOUR;

/** Whether the span from wall time `t` (ms, any day) over `length` ms touches 01:00–04:00 of some day. */
function spanNearChange(t: number, length: number): boolean {
  const [a, b] = length < 0 ? [t + length, t] : [t, t + length];
  for (let k = Math.floor(a / DAY) - 1; k <= Math.floor(b / DAY) + 1; k++) {
    if (a < k * DAY + 4 * HOUR && b >= k * DAY + 1 * HOUR) return true;
  }
  return false;
}

/** [nominal days, exact ms] of an Offset. */
function offsetParts(offset: string | null): [number, number] {
  if (offset === null) return [0, 0];
  const m = /^(-)?P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?)?$/.exec(offset);
  if (!m) throw new Error(offset);
  const sign = m[1] ? -1 : 1;
  return [sign * Number(m[2] ?? 0), sign * (Number(m[3] ?? 0) * HOUR + Number(m[4] ?? 0) * 60_000)];
}

function toItem(g: Generated): ExportItem | undefined {
  const startWall = FROM + g.day * DAY + g.hour * HOUR + g.minute * 60_000;
  const subDaily = g.rule.startsWith('FREQ=HOURLY');
  // ical.js 2.2.1 never expands BYHOUR/BYMINUTE on YEARLY rules and adds stray times on MONTHLY;BYDAY ones (the
  // export writes them as they are; see docs/schedules.md).
  const timeFriendly = !/^FREQ=YEARLY|^FREQ=MONTHLY;BYDAY/.test(g.rule);
  const byTime = !subDaily && timeFriendly && (g.hours.length > 0 || g.minutes.length > 0);
  const hours = byTime && g.hours.length > 0 ? g.hours : [g.hour];
  const minutes = byTime && g.minutes.length > 0 ? g.minutes : [g.minute];
  if (g.zone !== null && g.zone !== 'Asia/Kolkata') {
    // Every time of day the item can take, before and after the Offset, away from DST changes.
    const times = subDaily
      ? Array.from({ length: 24 }, (_, h) => h * HOUR + g.minute * 60_000)
      : hours.flatMap((h) => minutes.map((m) => h * HOUR + m * 60_000));
    // The exact part of an Offset is added as an instant by the engine, but moves wall times in a rule, so an
    // unbounded series agrees only where its span holds no DST change (a finite one is listed where it would
    // not; docs/schedules.md). ical.js adds Durations in wall time, so they stay clear of changes too.
    const [days, exact] = offsetParts(g.offset);
    const bad = times.some(
      (t) =>
        nearChange(t) ||
        (g.end === 'none' && spanNearChange(t + days * DAY, exact)) ||
        nearChange((((t + days * DAY + exact) % DAY) + DAY) % DAY) ||
        spanNearChange(t + days * DAY + exact, g.durationMinutes * 60_000),
    );
    if (bad) return undefined;
  }
  const pattern = `${g.rule}${byTime && g.hours.length > 0 ? `;BYHOUR=${g.hours.join(',')}` : ''}${
    byTime && g.minutes.length > 0 ? `;BYMINUTE=${g.minutes.join(',')}` : ''
  }`;
  const suffix = g.zone === null ? 'Z' : '';
  const at = (ms: number) => `${wall(ms)}${suffix}`;
  // Exceptions name occurrences by their start with the Offset applied: take them from the engine.
  const base: ExportItem = {
    Id: 'item-1',
    Name: 'property',
    Start: at(startWall),
    End: g.durationMinutes === 0 ? null : at(startWall + g.durationMinutes * 60_000),
    StartTimeZone: g.zone,
    Recurrence: {
      ...(g.setDurationMinutes === null
        ? {
            Pattern: pattern,
            EndCount: g.end === 'count' ? g.count : null,
            EndTime: g.end === 'until' ? at(startWall + g.untilDays * DAY) : null,
          }
        : { RecurrenceType: 'None', Duration: `PT${g.setDurationMinutes}M` }),
      Offset: g.offset,
      RecurrenceDates: g.rdates.map((d) => at(startWall + d * DAY + 90 * 60_000)),
      ExceptionDates: g.exdates.map((d) => at(startWall + d * DAY)),
    },
  };
  const occurrences = compileSeries(base).occurrencesIn(FROM - DAY, TO, 20);
  const exceptions = [];
  if (g.deleteNth !== null && occurrences[g.deleteNth]) {
    exceptions.push({
      OriginalTime: new Date(occurrences[g.deleteNth].start).toISOString(),
      IsDeleted: true,
    });
  }
  if (g.moveNth !== null && occurrences[g.moveNth]) {
    const original = occurrences[g.moveNth].start;
    exceptions.push({
      OriginalTime: new Date(original).toISOString(),
      NewStartTime: new Date(original + 3 * DAY + HOUR).toISOString(),
    });
  }
  return { ...base, Recurrence: { ...base.Recurrence, Exceptions: exceptions } };
}

type Span = [string, string];

function engineSpans(item: ExportItem): Span[] {
  return compileSeries(item)
    .occurrencesIn(FROM, TO, 100_000)
    .map((o): Span => [new Date(o.start).toISOString(), new Date(o.end).toISOString()]);
}

function icalSpans(calendar: string): Span[] {
  const root = new ICAL.Component(ICAL.parse(calendar) as unknown[]);
  for (const vtimezone of root.getAllSubcomponents('vtimezone')) ICAL.TimezoneService.register(vtimezone);
  const vevents = root.getAllSubcomponents('vevent');
  const master = vevents.find((v) => !v.hasProperty('recurrence-id'));
  if (!master) throw new Error('no master VEVENT');
  const event = new ICAL.Event(master, { exceptions: vevents.filter((v) => v !== master) });
  const spans: Span[] = [];
  const iterator = event.iterator();
  for (let next = iterator.next(); next; next = iterator.next()) {
    if (next.toJSDate().getTime() >= TO + 10 * DAY) break;
    const details = event.getOccurrenceDetails(next);
    const start = details.startDate.toJSDate().getTime();
    const end = details.endDate.toJSDate().getTime();
    if (start < TO && (end > FROM || (end === start && start >= FROM))) {
      spans.push([new Date(start).toISOString(), new Date(end).toISOString()]);
    }
  }
  return spans.sort((a, b) => a[0].localeCompare(b[0]) || a[1].localeCompare(b[1]));
}

describe('exported recurrence sets, expanded by ical.js', () => {
  it('equal the engine’s occurrences for random items, 2024–2026', () => {
    let compared = 0;
    let refused = 0;
    fc.assert(
      fc.property(generated, (g) => {
        const item = toItem(g);
        if (item === undefined) return;
        let calendar: string;
        try {
          calendar = exportCalendar([{ Id: 'schedule-1', ScheduleItems: [item] }], FROM);
        } catch (error) {
          // Refused only for what the docs name: an Offset the rule cannot carry, on an unbounded series (a
          // bounded one is listed occurrence by occurrence).
          expect(error).toBeInstanceOf(IcalExportError);
          expect([g.offset === null, g.end]).toEqual([false, 'none']);
          refused++;
          return;
        }
        const expected = engineSpans(item);
        const engineSorted = [...expected].sort(
          (a, b) => a[0].localeCompare(b[0]) || a[1].localeCompare(b[1]),
        );
        expect({ g, spans: icalSpans(calendar) }).toEqual({ g, spans: engineSorted });
        compared++;
      }),
      { numRuns: 300, seed: 20261125 },
    );
    expect(compared).toBeGreaterThan(100);
    expect(refused).toBeLessThan(compared);
  });
});
