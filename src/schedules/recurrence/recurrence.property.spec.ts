import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { RRuleTemporal } from 'rrule-temporal';
import type { Occurrence } from './compiled-series.js';
import { type RecurrenceExceptionInput, type ScheduleItemInput, compileSeries } from './series-compiler.js';

// Property-based checks: (1) against rrule-temporal as an independent oracle on random rules in UTC; (2) invariants
// that need no oracle (sorted, no duplicates, every instant satisfies the rule, a window query equals the full
// expansion filtered by overlap), the last one also in zones with DST. Runs are bounded to keep the suite fast.

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WEEKDAYS = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'] as const;
const FREQS = ['SECONDLY', 'MINUTELY', 'HOURLY', 'DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY'] as const;
type Freq = (typeof FREQS)[number];

interface RandomRule {
  readonly freq: Freq;
  readonly interval: number;
  readonly end: { readonly count: number } | { readonly untilAfter: number } | null;
  readonly bySecond?: number[];
  readonly byMinute?: number[];
  readonly byHour?: number[];
  readonly byDay?: Array<{ weekday: number; ordinal: number }>;
  readonly byMonthDay?: number[];
  readonly byYearDay?: number[];
  readonly byWeekNo?: number[];
  readonly byMonth?: number[];
  readonly bySetPos?: number[];
  readonly wkst: number;
}

/** How far past DTSTART the comparison window reaches, per FREQ, so that windows hold a few dozen instances. */
const SPAN: Record<Freq, number> = {
  SECONDLY: 10 * MINUTE,
  MINUTELY: 8 * HOUR,
  HOURLY: 12 * DAY,
  DAILY: 300 * DAY,
  WEEKLY: 3 * 365 * DAY,
  MONTHLY: 8 * 365 * DAY,
  YEARLY: 40 * 365 * DAY,
};

const signed = (max: number) => fc.integer({ min: 1, max }).chain((n) => fc.constantFrom(n, -n));
const subset = <T>(arb: fc.Arbitrary<T>, max = 3) => fc.uniqueArray(arb, { minLength: 1, maxLength: max });
const maybe = <T>(arb: fc.Arbitrary<T>, p = 0.3) =>
  fc.option(arb, { freq: Math.round(1 / p), nil: undefined });

const ruleArb: fc.Arbitrary<RandomRule> = fc.constantFrom(...FREQS).chain((freq) => {
  const subDaily = freq === 'SECONDLY' || freq === 'MINUTELY' || freq === 'HOURLY';
  const numbered = freq === 'MONTHLY' || freq === 'YEARLY';
  return fc
    .record({
      freq: fc.constant(freq),
      interval: fc.integer({ min: 1, max: subDaily ? 7 : 3 }),
      end: fc.oneof(
        fc.record({ count: fc.integer({ min: 1, max: 25 }) }),
        fc.record({ untilAfter: fc.integer({ min: 0, max: SPAN[freq] }) }),
        fc.constant(null),
      ),
      bySecond: maybe(subset(fc.integer({ min: 0, max: 59 })), freq === 'SECONDLY' ? 0.5 : 0.2),
      byMinute: maybe(subset(fc.integer({ min: 0, max: 59 })), freq === 'MINUTELY' ? 0.5 : 0.25),
      byHour: maybe(subset(fc.integer({ min: 0, max: 23 })), 0.3),
      byDay: maybe(
        subset(
          fc.record({
            weekday: fc.integer({ min: 0, max: 6 }),
            ordinal: numbered
              ? fc.oneof(fc.constant(0), signed(freq === 'MONTHLY' ? 5 : 53))
              : fc.constant(0),
          }),
        ),
        0.4,
      ),
      byMonthDay: freq === 'WEEKLY' ? fc.constant(undefined) : maybe(subset(signed(31)), 0.3),
      byYearDay: subDaily || freq === 'YEARLY' ? maybe(subset(signed(366)), 0.2) : fc.constant(undefined),
      byWeekNo: freq === 'YEARLY' ? maybe(subset(signed(53)), 0.3) : fc.constant(undefined),
      byMonth: maybe(subset(fc.integer({ min: 1, max: 12 })), 0.3),
      bySetPos: maybe(subset(signed(6), 2), 0.25),
      wkst: fc.integer({ min: 0, max: 6 }),
    })
    .map((r) => {
      // With FREQ=YEARLY, rrule-temporal unites the days that BYWEEKNO, BYYEARDAY and BYMONTHDAY name, where
      // RFC 5545's expand/limit table (and dateutil, rrule.js and this engine) require a day to satisfy all of
      // them; the generator keeps at most one of the three so the oracle is only asked what it answers per RFC.
      const yearly = r.freq === 'YEARLY';
      const byWeekNo = r.byWeekNo;
      const byYearDay = yearly && byWeekNo ? undefined : r.byYearDay;
      const byMonthDay = yearly && (byWeekNo ?? byYearDay) ? undefined : r.byMonthDay;
      // RFC 5545: no numbered BYDAY together with BYWEEKNO; BYSETPOS only beside another BYxxx part. With
      // BYYEARDAY or BYMONTHDAY, RFC 5545 makes a YEARLY BYDAY a limit; rrule-temporal drops that limit beside
      // BYYEARDAY, and beside BYMONTHDAY when it has an ordinal; and it applies BYSETPOS to numbered BYDAY days
      // in BYDAY order rather than in time order. Those combinations are left out of the comparison (the
      // invariant property below still covers them).
      const plainDays = Boolean(byWeekNo) || (yearly && Boolean(byMonthDay)) || Boolean(r.bySetPos);
      const keptDays = yearly && byYearDay ? undefined : r.byDay;
      const byDay = plainDays && keptDays ? keptDays.map((d) => ({ ...d, ordinal: 0 })) : keptDays;
      const other =
        r.bySecond ?? r.byMinute ?? r.byHour ?? byDay ?? byMonthDay ?? byYearDay ?? byWeekNo ?? r.byMonth;
      const rule: RandomRule = {
        ...r,
        byYearDay,
        byMonthDay,
        byDay: dedupeDays(byDay),
        bySetPos: other ? r.bySetPos : undefined,
      };
      return rule;
    });
});

function dedupeDays(days: RandomRule['byDay']): RandomRule['byDay'] {
  if (!days) return undefined;
  const seen = new Set<string>();
  return days.filter((d) => !seen.has(`${d.ordinal}${d.weekday}`) && seen.add(`${d.ordinal}${d.weekday}`));
}

function basic(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

function toRRule(rule: RandomRule, dtstart: number): string {
  const parts = [`FREQ=${rule.freq}`, `INTERVAL=${rule.interval}`, `WKST=${WEEKDAYS[rule.wkst]}`];
  if (rule.end && 'count' in rule.end) parts.push(`COUNT=${rule.end.count}`);
  if (rule.end && 'untilAfter' in rule.end) parts.push(`UNTIL=${basic(dtstart + rule.end.untilAfter)}`);
  const list = (name: string, values: readonly number[] | undefined) => {
    if (values) parts.push(`${name}=${values.join(',')}`);
  };
  list('BYSECOND', rule.bySecond);
  list('BYMINUTE', rule.byMinute);
  list('BYHOUR', rule.byHour);
  if (rule.byDay)
    parts.push(
      `BYDAY=${rule.byDay.map((d) => `${d.ordinal === 0 ? '' : d.ordinal}${WEEKDAYS[d.weekday]}`).join(',')}`,
    );
  list('BYMONTHDAY', rule.byMonthDay);
  list('BYYEARDAY', rule.byYearDay);
  list('BYWEEKNO', rule.byWeekNo);
  list('BYMONTH', rule.byMonth);
  list('BYSETPOS', rule.bySetPos);
  return parts.join(';');
}

const dtstartArb = fc
  .integer({ min: Date.UTC(2020, 0, 1) / SECOND, max: Date.UTC(2030, 0, 1) / SECOND })
  .map((s) => s * SECOND);

function ours(item: ScheduleItemInput, from: number, to: number): number[] {
  return compileSeries(item)
    .occurrencesIn(from, to, 100_000)
    .map((o) => o.start);
}

function oracle(rrule: string, dtstart: number, from: number, to: number): number[] {
  const rule = new RRuleTemporal({
    rruleString: `DTSTART:${basic(dtstart)}\nRRULE:${rrule}`,
    includeDtstart: true,
  });
  // The oracle always expands from DTSTART: its own window jump moves DTSTART, which changes the weekday that
  // BYWEEKNO rules without BYDAY take from it. between(…, inc=true) is closed; instants are whole seconds, so
  // [dtstart, to - 1 ms] filtered to ≥ from equals our [from, to).
  let found = rule.between(new Date(dtstart), new Date(to - 1), true).map((z) => z.epochMilliseconds);
  // Two rrule-temporal quirks around a DTSTART that the rule does not match: it drops DTSTART when the rule
  // never matches, and with BYSETPOS it does not count DTSTART towards COUNT. RFC 5545 keeps DTSTART as the first
  // instance and counts it, so both are normalised here.
  if (found[0] !== dtstart) found.unshift(dtstart);
  const count = /COUNT=(\d+)/.exec(rrule);
  if (count) found = found.slice(0, Number(count[1]));
  return found.filter((t) => t >= from && t < to);
}

/**
 * rrule-temporal drops a plain weekday when the same weekday also comes numbered (BYDAY=MO,-1MO yields only the
 * last Monday of the year; RFC 5545 and this engine give every Monday): those rules are left out of the oracle
 * comparison (found by a CI run, seed -192594274).
 */
function mixesPlainAndNumberedDay(rule: RandomRule): boolean {
  const days = rule.byDay ?? [];
  return days.some((d) => d.ordinal === 0 && days.some((e) => e.ordinal !== 0 && e.weekday === d.weekday));
}

describe('property: engine = rrule-temporal on random rules in UTC', () => {
  it('the same instances from DTSTART over a window, and after a jump into the series', () => {
    fc.assert(
      fc.property(
        ruleArb.filter((rule) => !mixesPlainAndNumberedDay(rule)),
        dtstartArb,
        fc.double({ min: 0, max: 1, noNaN: true }),
        (rule, dtstart, jumpAt) => {
          const rrule = toRRule(rule, dtstart);
          const item: ScheduleItemInput = {
            Recurrence: { StartTime: new Date(dtstart).toISOString(), Pattern: rrule, Duration: 'PT0S' },
          };
          const span = SPAN[rule.freq];
          expect({ rrule, got: ours(item, dtstart, dtstart + span) }).toEqual({
            rrule,
            got: oracle(rrule, dtstart, dtstart, dtstart + span),
          });
          const from = dtstart + Math.floor((jumpAt * span) / SECOND) * SECOND;
          const to = from + Math.max(span / 4, SECOND);
          expect({ rrule, from, got: ours(item, from, to) }).toEqual({
            rrule,
            from,
            got: oracle(rrule, dtstart, from, to),
          });
        },
      ),
      { numRuns: 100 },
    );
  }, 30_000);
});

/** Independent check that a UTC instant satisfies every BYxxx part and the INTERVAL phase of a rule. */
function satisfies(rule: RandomRule, dtstart: number, at: number): boolean {
  const d = new Date(at);
  const s = new Date(dtstart);
  const year = d.getUTCFullYear();
  const month = d.getUTCMonth() + 1;
  const md = d.getUTCDate();
  const dim = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const yearLength = (Date.UTC(year + 1, 0, 1) - Date.UTC(year, 0, 1)) / DAY;
  const yd = (Date.UTC(year, month - 1, md) - Date.UTC(year, 0, 1)) / DAY + 1;
  const weekday = (d.getUTCDay() + 6) % 7;
  const has = (list: readonly number[] | undefined, ...values: number[]) =>
    !list || values.some((v) => list.includes(v));
  if (
    !has(rule.byMonth, month) ||
    !has(rule.byMonthDay, md, md - dim - 1) ||
    !has(rule.byYearDay, yd, yd - yearLength - 1)
  ) {
    return false;
  }
  if (rule.byDay) {
    const sameWeekdayBefore = (scopeFirst: number) =>
      Math.floor((Date.UTC(year, month - 1, md) - scopeFirst) / (7 * DAY));
    const inMonth = rule.freq === 'MONTHLY' || (rule.freq === 'YEARLY' && rule.byMonth !== undefined);
    const scopeFirst = inMonth ? Date.UTC(year, month - 1, 1) : Date.UTC(year, 0, 1);
    const scopeDays = inMonth ? dim : yearLength;
    const nth = sameWeekdayBefore(scopeFirst) + 1;
    const nthFromEnd = -(
      Math.floor((scopeDays - 1 - (Date.UTC(year, month - 1, md) - scopeFirst) / DAY) / 7) + 1
    );
    const ok = rule.byDay.some(
      (b) => b.weekday === weekday && (b.ordinal === 0 || b.ordinal === nth || b.ordinal === nthFromEnd),
    );
    if (!ok) return false;
  }
  // With BYWEEKNO a YEARLY period is a week-numbering year, whose days can lie in the next or previous year.
  let periodYear = year;
  if (rule.byWeekNo) {
    // Week 1 is the first week (starting on WKST) with at least 4 days in its year; find this day's week by search.
    const weekOneStart = (y: number) => {
      const jan1 = Date.UTC(y, 0, 1);
      const back = (((new Date(jan1).getUTCDay() + 6) % 7) - rule.wkst + 7) % 7;
      return back <= 3 ? jan1 - back * DAY : jan1 + (7 - back) * DAY;
    };
    const day = Date.UTC(year, month - 1, md);
    let wy = year + 1;
    while (weekOneStart(wy) > day) wy--;
    const week = Math.floor((day - weekOneStart(wy)) / (7 * DAY)) + 1;
    const weeks = (weekOneStart(wy + 1) - weekOneStart(wy)) / (7 * DAY);
    if (!has(rule.byWeekNo, week, week - weeks - 1)) return false;
    periodYear = wy;
  }
  const finer = FREQS.indexOf(rule.freq);
  const part = (list: readonly number[] | undefined, value: number, dtValue: number, level: number) =>
    list ? list.includes(value) : finer > level ? value === dtValue : true;
  if (!part(rule.bySecond, d.getUTCSeconds(), s.getUTCSeconds(), 0)) return false;
  if (!part(rule.byMinute, d.getUTCMinutes(), s.getUTCMinutes(), 1)) return false;
  if (!part(rule.byHour, d.getUTCHours(), s.getUTCHours(), 2)) return false;
  const dayDiff = Math.floor(at / DAY) - Math.floor(dtstart / DAY);
  switch (rule.freq) {
    case 'SECONDLY':
      return ((at - dtstart) / SECOND) % rule.interval === 0;
    case 'MINUTELY':
      return (Math.floor(at / MINUTE) - Math.floor(dtstart / MINUTE)) % rule.interval === 0;
    case 'HOURLY':
      return (Math.floor(at / HOUR) - Math.floor(dtstart / HOUR)) % rule.interval === 0;
    case 'DAILY':
      return dayDiff % rule.interval === 0;
    case 'WEEKLY': {
      const weekStart = (ms: number) =>
        Math.floor(ms / DAY) - ((((new Date(ms).getUTCDay() + 6) % 7) - rule.wkst + 7) % 7);
      return ((weekStart(at) - weekStart(dtstart)) / 7) % rule.interval === 0;
    }
    case 'MONTHLY':
      return (year * 12 + month - (s.getUTCFullYear() * 12 + s.getUTCMonth() + 1)) % rule.interval === 0;
    case 'YEARLY':
      return (periodYear - s.getUTCFullYear()) % rule.interval === 0;
  }
}

describe('property: invariants', () => {
  it('sorted, no duplicates, every instance but DTSTART satisfies the rule (UTC)', () => {
    fc.assert(
      fc.property(ruleArb, dtstartArb, (rule, dtstart) => {
        const rrule = toRRule(rule, dtstart);
        const got = ours(
          { Recurrence: { StartTime: new Date(dtstart).toISOString(), Pattern: rrule } },
          dtstart,
          dtstart + SPAN[rule.freq],
        );
        expect(got[0]).toBe(dtstart);
        for (let i = 1; i < got.length; i++) {
          expect(got[i]).toBeGreaterThan(got[i - 1]);
          expect({ rrule, at: new Date(got[i]).toISOString(), ok: satisfies(rule, dtstart, got[i]) }).toEqual(
            {
              rrule,
              at: new Date(got[i]).toISOString(),
              ok: true,
            },
          );
        }
        if (rule.end && 'count' in rule.end) expect(got.length).toBeLessThanOrEqual(rule.end.count);
      }),
      { numRuns: 200 },
    );
  }, 30_000);

  const zoneArb = fc.constantFrom(
    'UTC',
    'Europe/Berlin',
    'America/New_York',
    'Australia/Lord_Howe',
    'America/Sao_Paulo',
    'Asia/Kolkata',
  );
  const durationArb = fc.constantFrom('PT0S', 'PT30M', 'PT1H', 'PT25H', 'P1D', 'P1DT2H', 'P1W');
  const offsetArb = fc.constantFrom(undefined, 'PT15M', '-PT1H', 'P1D', '-P1D');
  // Windows around DST changes are the interesting ones; dates cluster in 2025 so the rule's DTSTART is near.
  const windowArb = fc.record({
    from: fc
      .integer({ min: Date.UTC(2024, 11, 1) / MINUTE, max: Date.UTC(2026, 0, 1) / MINUTE })
      .map((m) => m * MINUTE),
    length: fc.integer({ min: 1, max: (3 * DAY) / MINUTE }).map((m) => m * MINUTE),
  });

  it('hasOccurrenceIn agrees with occurrencesIn on windows placed around real occurrences', () => {
    fc.assert(
      fc.property(
        ruleArb.filter((r) => r.freq !== 'SECONDLY' && r.freq !== 'MINUTELY'),
        fc.constantFrom('UTC', 'Europe/Berlin', 'America/New_York', 'Pacific/Auckland', 'Asia/Kolkata'),
        durationArb,
        dtstartArb,
        fc.nat(),
        fc.integer({ min: -2 * DAY, max: 2 * DAY }),
        fc.integer({ min: 1, max: 2 * DAY }),
        (rule, zone, duration, dtstart, pick, shift, length) => {
          const rrule = toRRule(rule, dtstart);
          const series = compileSeries({
            StartTimeZone: zone,
            Start: new Date(dtstart).toISOString(),
            Recurrence: { Pattern: rrule, Duration: duration },
          });
          const some = series.occurrencesIn(dtstart, dtstart + SPAN[rule.freq], 200);
          const anchor = some[pick % some.length].start;
          const from = anchor + shift;
          const to = from + length;
          const listed = series.occurrencesIn(from, to, 1).length > 0;
          expect({ rrule, zone, from, has: series.hasOccurrenceIn(from, to) }).toEqual({
            rrule,
            zone,
            from,
            has: listed,
          });
        },
      ),
      { numRuns: 400 },
    );
  }, 30_000);

  it('a window query equals the full expansion filtered by overlap, in zones with DST, with exceptions', () => {
    const overlapping = (list: readonly Occurrence[], from: number, to: number) =>
      list.filter((o) => o.start < to && (o.end > from || (o.end === o.start && o.start >= from)));
    fc.assert(
      fc.property(
        ruleArb.filter((r) => r.freq !== 'SECONDLY' && r.freq !== 'MINUTELY'),
        zoneArb,
        durationArb,
        offsetArb,
        windowArb,
        fc.integer({ min: 0, max: 60 * 24 * 30 }),
        fc.integer({ min: 2, max: 5 }),
        (rule, zone, duration, offset, window, startMinute, deleteEvery) => {
          const dtstart = Date.UTC(2024, 11, 1) + startMinute * MINUTE;
          const rrule = toRRule(rule, dtstart);
          const item = (exceptions?: RecurrenceExceptionInput[]): ScheduleItemInput => ({
            StartTimeZone: zone,
            Start: new Date(dtstart).toISOString(),
            Recurrence: { Pattern: rrule, Duration: duration, Offset: offset, Exceptions: exceptions },
          });
          const from = window.from;
          const to = window.from + window.length;
          // Wide enough for every occurrence that can overlap the window (durations ≤ 1 week, offsets ≤ 1 day).
          const wideFrom = from - 10 * DAY;
          const wideTo = to + 10 * DAY;
          const series = compileSeries(item());
          const all = series.occurrencesIn(wideFrom, wideTo, 100_000);
          for (let i = 1; i < all.length; i++) expect(all[i].start).toBeGreaterThanOrEqual(all[i - 1].start);
          expect(new Set(all.map((o) => o.start)).size).toBe(all.length);
          const expected = overlapping(all, from, to);
          expect({ rrule, zone, got: series.occurrencesIn(from, to, 100_000) }).toEqual({
            rrule,
            zone,
            got: expected,
          });
          expect(series.hasOccurrenceIn(from, to)).toBe(expected.length > 0);

          // Delete every n-th occurrence near the window and move the one after each deleted one by 90 minutes.
          const deleted = all.filter((_, i) => i % deleteEvery === 0);
          const moved = all.filter((_, i) => i % deleteEvery === 1);
          const withExceptions = compileSeries(
            item([
              ...deleted.map((o) => ({ OriginalTime: new Date(o.start).toISOString(), IsDeleted: true })),
              ...moved.map((o) => ({
                OriginalTime: new Date(o.start).toISOString(),
                NewStartTime: new Date(o.start + 90 * MINUTE).toISOString(),
              })),
            ]),
          );
          expect(withExceptions.unmatchedExceptions).toEqual([]);
          const expectedAll = [
            ...all.filter((_, i) => i % deleteEvery > 1),
            ...moved.map((o) => ({
              ...o,
              start: o.start + 90 * MINUTE,
              end: o.end + 90 * MINUTE,
              isMoved: true,
            })),
          ];
          const expectedInWindow = overlapping(expectedAll, from, to).sort(
            (a, b) => a.start - b.start || a.originalStart - b.originalStart,
          );
          expect({ rrule, zone, got: withExceptions.occurrencesIn(from, to, 100_000) }).toEqual({
            rrule,
            zone,
            got: expectedInWindow,
          });
          expect(withExceptions.hasOccurrenceIn(from, to)).toBe(expectedInWindow.length > 0);
        },
      ),
      { numRuns: 150 },
    );
  }, 30_000);
});
