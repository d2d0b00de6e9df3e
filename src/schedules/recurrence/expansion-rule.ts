// RFC 5545 §3.3.10 RECUR compiled for expansion: which parts the rule leaves to DTSTART ("information not
// contained in the rule"), the time-of-day set each period expands to, and the day-level BYxxx parts. For days the
// RFC's expand/limit table amounts to filtering every day of a period (a day must satisfy every part given);
// BYDAY ordinals count within the month (MONTHLY, or YEARLY with BYMONTH) or the year, BYWEEKNO weeks start on WKST
// with week 1 holding at least four days of the year.
import {
  MS_PER_DAY,
  MS_PER_HOUR,
  MS_PER_MINUTE,
  MS_PER_SECOND,
  civilFromDays,
  daysFromCivil,
  daysInMonth,
  daysInYear,
  firstDayOfWeekOne,
  mod,
  packedDay,
  packedMonth,
  packedYear,
  weekdayOfDays,
} from './calendar.js';
import { someDayMatches } from './day-satisfiability.js';
import { RecurrenceError } from './recurrence-error.js';
import type { Frequency, WeekdayNum } from './rrule-parser.js';
import { MAX_YEAR, type ZoneRules } from './time-zone.js';

/** The most candidate occurrences one period of a rule may have (a yearly rule with every hour: 8,784). */
export const MAX_CANDIDATES_PER_PERIOD = 100_000;

export const SECONDLY = 0;
export const MINUTELY = 1;
export const HOURLY = 2;
export const DAILY = 3;
export const WEEKLY = 4;
export const MONTHLY = 5;
export const YEARLY = 6;

const FREQ_INDEX: Record<Frequency, number> = { SECONDLY, MINUTELY, HOURLY, DAILY, WEEKLY, MONTHLY, YEARLY };
const freqName = (freq: number): string =>
  Object.entries(FREQ_INDEX).find(([, index]) => index === freq)?.[0] ?? String(freq);
export const SUB_DAILY_UNIT = [MS_PER_SECOND, MS_PER_MINUTE, MS_PER_HOUR];
export const MAX_WALL = daysFromCivil(MAX_YEAR + 1, 1, 1) * MS_PER_DAY;

/** Everything a cursor needs, fixed at compile time. Immutable and shareable. */
export interface ExpansionRule {
  readonly freq: number;
  readonly interval: number;
  readonly zone: ZoneRules;
  readonly dtWall: number;
  readonly dtInstant: number;
  /** Inclusive UNTIL as an instant; Infinity when absent. */
  readonly untilInstant: number;
  /** COUNT, 0 when absent. */
  readonly count: number;
  readonly wkst: number;
  /** Bit m set for each BYMONTH month m; 0 when absent. */
  readonly byMonthMask: number;
  readonly byWeekNo: readonly number[] | undefined;
  readonly byYearDay: readonly number[] | undefined;
  readonly byMonthDay: readonly number[] | undefined;
  /** Bit w set for each BYDAY weekday without ordinal. */
  readonly byDayMask: number;
  /** BYDAY entries with an ordinal. */
  readonly byDayNth: readonly WeekdayNum[] | undefined;
  readonly hasByDay: boolean;
  /** Limits at or above the frequency's own unit (sub-daily frequencies only): index → allowed. */
  readonly hourLimit: readonly boolean[] | undefined;
  readonly minuteLimit: readonly boolean[] | undefined;
  readonly secondLimit: readonly boolean[] | undefined;
  /** Offsets (ms) within a period's finest expanded unit: within the day for DAILY+, within the hour for HOURLY… */
  readonly times: readonly number[];
  readonly bySetPos: readonly number[] | undefined;
  /** WEEKLY fast path: day offsets within the week when BYDAY is the only day-level part. */
  readonly weekOffsets: readonly number[] | undefined;
  readonly needsCivil: boolean;
  /** The rule can produce nothing beyond DTSTART (no time of day left, or BYSETPOS beyond any period's size). */
  readonly neverMatches: boolean;
  // DTSTART's period coordinates.
  readonly baseWall: number;
  readonly dtDay: number;
  readonly dtWeekStart: number;
  readonly dtMonthIndex: number;
  readonly dtYear: number;
}

export interface RuleSpec {
  readonly freq: Frequency;
  readonly interval: number;
  readonly count: number;
  readonly untilInstant: number;
  readonly wkst: number;
  readonly bySecond?: readonly number[];
  readonly byMinute?: readonly number[];
  readonly byHour?: readonly number[];
  readonly byDay?: readonly WeekdayNum[];
  readonly byMonthDay?: readonly number[];
  readonly byYearDay?: readonly number[];
  readonly byWeekNo?: readonly number[];
  readonly byMonth?: readonly number[];
  readonly bySetPos?: readonly number[];
}

export function sortedUnique(values: readonly number[]): number[] {
  return [...new Set(values)].sort((a, b) => a - b);
}

function limitTable(values: readonly number[] | undefined, size: number): boolean[] | undefined {
  if (!values) return undefined;
  const table = new Array<boolean>(size).fill(false);
  for (const v of values) if (v < size) table[v] = true;
  return table;
}

/** Builds the immutable expansion data of a rule anchored at DTSTART (a wall time and its instant). */
export function buildExpansionRule(
  spec: RuleSpec,
  zone: ZoneRules,
  dtWall: number,
  dtInstant: number,
): ExpansionRule {
  const freq = FREQ_INDEX[spec.freq];
  const dtDay = Math.floor(dtWall / MS_PER_DAY);
  const msOfDay = dtWall - dtDay * MS_PER_DAY;
  const dtHour = Math.floor(msOfDay / MS_PER_HOUR);
  const dtMinute = Math.floor((msOfDay % MS_PER_HOUR) / MS_PER_MINUTE);
  const dtSecond = Math.floor((msOfDay % MS_PER_MINUTE) / MS_PER_SECOND);
  // Sub-second precision of DTSTART is carried onto every occurrence; RECUR itself has none.
  const dtMillis = msOfDay % MS_PER_SECOND;
  const civil = civilFromDays(dtDay);

  let byMonth = spec.byMonth;
  let byMonthDay = spec.byMonthDay;
  let byDay = spec.byDay;
  // Parts the rule leaves open come from DTSTART (RFC 5545 §3.3.10, "information not contained in the rule").
  if (!spec.byWeekNo && !spec.byYearDay && !byMonthDay && !byDay) {
    if (freq === YEARLY) {
      byMonth ??= [packedMonth(civil)];
      byMonthDay = [packedDay(civil)];
    } else if (freq === MONTHLY) {
      byMonthDay = [packedDay(civil)];
    } else if (freq === WEEKLY) {
      byDay = [{ weekday: weekdayOfDays(dtDay), ordinal: 0 }];
    }
  } else if (freq === YEARLY && spec.byWeekNo && !spec.byYearDay && !byMonthDay && !byDay) {
    // BYWEEKNO names weeks, not days: the day within the week is DTSTART's weekday, as for FREQ=WEEKLY.
    byDay = [{ weekday: weekdayOfDays(dtDay), ordinal: 0 }];
  }
  const hours = freq >= DAILY ? sortedUnique(spec.byHour ?? [dtHour]) : undefined;
  const minutes = freq >= HOURLY ? sortedUnique(spec.byMinute ?? [dtMinute]) : undefined;
  // A leap second (BYSECOND=60) names a time that does not exist in the civil time scale and is ignored.
  const seconds =
    freq >= MINUTELY ? sortedUnique(spec.bySecond ?? [dtSecond]).filter((s) => s < 60) : undefined;

  const timesPerDay =
    freq === SECONDLY ? 1 : (hours?.length ?? 1) * (minutes?.length ?? 1) * (seconds?.length ?? 1);
  const candidatesPerPeriod =
    timesPerDay * (freq === YEARLY ? 366 : freq === MONTHLY ? 31 : freq === WEEKLY ? 7 : 1);
  if (candidatesPerPeriod > MAX_CANDIDATES_PER_PERIOD) {
    // Each period's candidates are generated (and, with BYSETPOS, sorted) at once: bound what one period costs,
    // before building anything of that size.
    throw new RecurrenceError(
      'Recurrence.Pattern',
      `expands to up to ${candidatesPerPeriod.toLocaleString('en')} occurrences in one ${freqName(freq)} period; ` +
        `at most ${MAX_CANDIDATES_PER_PERIOD.toLocaleString('en')} are allowed (use a finer FREQ)`,
    );
  }

  const times: number[] = [];
  for (const h of hours ?? [0]) {
    for (const m of minutes ?? [0]) {
      for (const s of seconds ?? [0]) {
        times.push(h * MS_PER_HOUR + m * MS_PER_MINUTE + s * MS_PER_SECOND + dtMillis);
      }
    }
  }

  let byMonthMask = 0;
  for (const m of byMonth ?? []) byMonthMask |= 1 << m;
  let byDayMask = 0;
  const nth: WeekdayNum[] = [];
  for (const d of byDay ?? []) {
    if (d.ordinal === 0) byDayMask |= 1 << d.weekday;
    else nth.push(d);
  }

  const onlyByDay = !byMonth && !byMonthDay && !spec.byYearDay && !spec.byWeekNo && nth.length === 0;
  const weekOffsets =
    freq === WEEKLY && onlyByDay
      ? sortedUnique((byDay ?? []).map((d) => mod(d.weekday - spec.wkst, 7)))
      : undefined;

  const unit = freq < DAILY ? SUB_DAILY_UNIT[freq] : MS_PER_DAY;
  const periodTimes = freq === SECONDLY ? 1 : times.length;
  const maxPerPeriod =
    periodTimes * (freq === YEARLY ? 366 : freq === MONTHLY ? 31 : freq === WEEKLY ? 7 : 1);
  const hourLimit = freq < DAILY ? limitTable(spec.byHour, 24) : undefined;
  const minuteLimit = freq < HOURLY ? limitTable(spec.byMinute, 60) : undefined;
  const secondLimit = freq < MINUTELY ? limitTable(spec.bySecond, 61) : undefined;
  const neverMatches =
    periodTimes === 0 ||
    (spec.bySetPos?.every((p) => Math.abs(p) > maxPerPeriod) ?? false) ||
    (freq < DAILY &&
      !someAlignedTimeAllowed(freq, spec.interval, dtWall, hourLimit, minuteLimit, secondLimit));
  const rule: ExpansionRule = {
    freq,
    interval: spec.interval,
    zone,
    dtWall,
    dtInstant,
    untilInstant: spec.untilInstant,
    count: spec.count,
    wkst: spec.wkst,
    byMonthMask,
    byWeekNo: spec.byWeekNo,
    byYearDay: spec.byYearDay,
    byMonthDay,
    byDayMask,
    byDayNth: nth.length > 0 ? nth : undefined,
    hasByDay: byDay !== undefined,
    hourLimit,
    minuteLimit,
    secondLimit,
    times: freq === SECONDLY ? [dtMillis] : times,
    bySetPos: spec.bySetPos,
    weekOffsets,
    neverMatches,
    needsCivil:
      byMonth !== undefined || byMonthDay !== undefined || spec.byYearDay !== undefined || nth.length > 0,
    baseWall: Math.floor(dtWall / unit) * unit,
    dtDay,
    dtWeekStart: dtDay - mod(weekdayOfDays(dtDay) - spec.wkst, 7),
    dtMonthIndex: packedYear(civil) * 12 + packedMonth(civil) - 1,
    // INTERVAL counts years from DTSTART's calendar year, also when BYWEEKNO makes a period its week-year.
    dtYear: packedYear(civil),
  };
  return rule.neverMatches || daysCanMatch(rule) ? rule : { ...rule, neverMatches: true };
}

/**
 * Whether the rule's day-level parts name any day (day-satisfiability.ts): decided before any expansion, so a rule
 * such as `FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30` is known never to match in microseconds.
 */
function daysCanMatch(rule: ExpansionRule): boolean {
  if (!rule.needsCivil && rule.byWeekNo === undefined) return true;
  const nthScope = rule.freq === MONTHLY ? 1 : rule.freq === YEARLY ? (rule.byMonthMask !== 0 ? 1 : 2) : 0;
  const key = JSON.stringify([
    nthScope,
    rule.wkst,
    rule.byMonthMask,
    rule.byMonthDay,
    rule.byYearDay,
    rule.byWeekNo,
    rule.hasByDay ? rule.byDayMask : -1,
    rule.byDayNth,
  ]);
  return someDayMatches(key, rule.hasByDay || rule.byWeekNo !== undefined, (day) =>
    dayMatches(rule, day, nthScope),
  );
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/**
 * Sub-daily periods step through the day in wall-clock units, so within a day only the units congruent to
 * DTSTART's modulo gcd(INTERVAL, units per day) are ever reached (FREQ=SECONDLY;INTERVAL=2 never sees an odd
 * second). False when none of those passes the BYHOUR/BYMINUTE/BYSECOND limits: the rule can never match.
 */
function someAlignedTimeAllowed(
  freq: number,
  interval: number,
  dtWall: number,
  hourLimit: readonly boolean[] | undefined,
  minuteLimit: readonly boolean[] | undefined,
  secondLimit: readonly boolean[] | undefined,
): boolean {
  const unit = SUB_DAILY_UNIT[freq];
  const perDay = MS_PER_DAY / unit;
  const step = gcd(interval % perDay, perDay) || perDay;
  if (step === 1) return true;
  const first = Math.floor(mod(dtWall, MS_PER_DAY) / unit) % step;
  for (let p = first; p < perDay; p += step) {
    const ms = p * unit;
    if (hourLimit && !hourLimit[Math.floor(ms / MS_PER_HOUR)]) continue;
    if (minuteLimit && !minuteLimit[Math.floor((ms % MS_PER_HOUR) / MS_PER_MINUTE)]) continue;
    if (secondLimit && !secondLimit[Math.floor((ms % MS_PER_MINUTE) / MS_PER_SECOND)]) continue;
    return true;
  }
  return false;
}

/** The week-numbering year (RFC 5545 §3.3.10 BYWEEKNO, weeks starting on WKST) that `day` belongs to. */
export function weekYearOf(day: number, wkst: number): number {
  const year = packedYear(civilFromDays(day));
  if (day < firstDayOfWeekOne(year, wkst)) return year - 1;
  return day >= firstDayOfWeekOne(year + 1, wkst) ? year + 1 : year;
}

/** Position of `day` among the same weekdays of [scopeStart, scopeEnd): +n from the start and −n from the end. */
function matchesNth(
  nth: readonly WeekdayNum[],
  day: number,
  weekday: number,
  scopeStart: number,
  scopeEnd: number,
) {
  const fromStart = Math.floor((day - scopeStart) / 7) + 1;
  const fromEnd = -(Math.floor((scopeEnd - 1 - day) / 7) + 1);
  for (const d of nth) {
    if (d.weekday === weekday && (d.ordinal === fromStart || d.ordinal === fromEnd)) return true;
  }
  return false;
}

function includesEither(values: readonly number[], positive: number, negative: number): boolean {
  for (const v of values) if (v === positive || v === negative) return true;
  return false;
}

/** Week number of `day` under WKST, negative form included, against the precomputed week-one starts. */
function matchesWeekNo(rule: ExpansionRule, day: number, year: number): boolean {
  const list = rule.byWeekNo;
  if (!list) return true;
  let start = firstDayOfWeekOne(year, rule.wkst);
  let next = firstDayOfWeekOne(year + 1, rule.wkst);
  if (day < start) {
    next = start;
    start = firstDayOfWeekOne(year - 1, rule.wkst);
  } else if (day >= next) {
    start = next;
    next = firstDayOfWeekOne(year + 2, rule.wkst);
  }
  const week = Math.floor((day - start) / 7) + 1;
  const weeks = (next - start) / 7;
  return includesEither(list, week, week - weeks - 1);
}

/**
 * Whether a day passes every day-level BYxxx part. `nthScope` selects what BYDAY ordinals count within:
 * 0 none (they cannot occur), 1 the month, 2 the year.
 */
export function dayMatches(rule: ExpansionRule, day: number, nthScope: number): boolean {
  let weekday = -1;
  if (rule.hasByDay && rule.byDayNth === undefined) {
    weekday = weekdayOfDays(day);
    if ((rule.byDayMask & (1 << weekday)) === 0) return false;
  }
  if (!rule.needsCivil && rule.byWeekNo === undefined) return true;
  const civil = civilFromDays(day);
  const year = packedYear(civil);
  const month = packedMonth(civil);
  if (rule.byMonthMask !== 0 && (rule.byMonthMask & (1 << month)) === 0) return false;
  if (rule.byMonthDay) {
    const md = packedDay(civil);
    if (!includesEither(rule.byMonthDay, md, md - daysInMonth(year, month) - 1)) return false;
  }
  if (rule.byYearDay) {
    const yd = day - daysFromCivil(year, 1, 1) + 1;
    if (!includesEither(rule.byYearDay, yd, yd - daysInYear(year) - 1)) return false;
  }
  if (rule.byWeekNo && !matchesWeekNo(rule, day, year)) return false;
  if (rule.byDayNth) {
    if (weekday < 0) weekday = weekdayOfDays(day);
    if ((rule.byDayMask & (1 << weekday)) !== 0) return true;
    if (nthScope === 1) {
      const first = day - packedDay(civil) + 1;
      return matchesNth(rule.byDayNth, day, weekday, first, first + daysInMonth(year, month));
    }
    const first = daysFromCivil(year, 1, 1);
    return matchesNth(rule.byDayNth, day, weekday, first, first + daysInYear(year));
  }
  return true;
}

/** Whether `day` lies in a generated period (INTERVAL phase) and passes every day-level part. Day-level FREQ only. */
export function dayInRule(rule: ExpansionRule, day: number): boolean {
  let period: number;
  let nthScope = 0;
  switch (rule.freq) {
    case DAILY:
      period = day - rule.dtDay;
      break;
    case WEEKLY:
      period = Math.floor((day - rule.dtWeekStart) / 7);
      break;
    case MONTHLY: {
      const civil = civilFromDays(day);
      period = packedYear(civil) * 12 + packedMonth(civil) - 1 - rule.dtMonthIndex;
      nthScope = 1;
      break;
    }
    default:
      period = (rule.byWeekNo ? weekYearOf(day, rule.wkst) : packedYear(civilFromDays(day))) - rule.dtYear;
      nthScope = rule.byMonthMask !== 0 ? 1 : 2;
  }
  return period >= 0 && period % rule.interval === 0 && dayMatches(rule, day, nthScope);
}
