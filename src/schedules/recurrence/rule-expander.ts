// RFC 5545 §3.3.10 RECUR expansion and §3.8.5.3 recurrence set semantics, in local wall time:
// - periods of FREQ × INTERVAL are walked in wall-clock time (sub-daily steps too, so a repeated fall-back hour is
//   produced once); BYxxx parts expand or limit as in the RFC's table, which for days is the same as filtering every
//   day of the period; BYSETPOS picks positions within one period's sorted set;
// - wall times are turned into instants with the zone rules of DESIGN §3 (gap → shifted forward, ambiguous →
//   first instant); because a shifted time can land after later wall times, instants are held back until no later
//   period can produce a smaller one, then emitted sorted and without duplicates;
// - DTSTART is always the first occurrence; candidates at or before it (in wall time or as an instant) are dropped;
// - a cursor can start at any instant: it jumps to the period holding it instead of walking from DTSTART.
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
import type { Frequency, WeekdayNum } from './rrule-parser.js';
import { MAX_YEAR, type ZoneRules } from './time-zone.js';

export const SECONDLY = 0;
export const MINUTELY = 1;
export const HOURLY = 2;
export const DAILY = 3;
export const WEEKLY = 4;
export const MONTHLY = 5;
export const YEARLY = 6;

const FREQ_INDEX: Record<Frequency, number> = { SECONDLY, MINUTELY, HOURLY, DAILY, WEEKLY, MONTHLY, YEARLY };
const SUB_DAILY_UNIT = [MS_PER_SECOND, MS_PER_MINUTE, MS_PER_HOUR];
const MAX_WALL = daysFromCivil(MAX_YEAR + 1, 1, 1) * MS_PER_DAY;
/**
 * Periods in a row that may produce nothing before a scan gives up. A day-level rule's periods repeat within the
 * 400-year Gregorian cycle (at most 146,097 of them), so an empty run longer than that means the rule cannot
 * match again. Sub-daily rules skip non-matching days, hours and minutes in one step each, and rules whose
 * INTERVAL can never reach an allowed time are caught at compile time (someAlignedTimeAllowed), so the same
 * budget bounds their scans; it only ends scans of rules that have no further occurrence.
 */
const EMPTY_PERIOD_BUDGET = 500_000;

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

function sortedUnique(values: readonly number[]): number[] {
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
  return {
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
function weekYearOf(day: number, wkst: number): number {
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
function dayMatches(rule: ExpansionRule, day: number, nthScope: number): boolean {
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

/**
 * A position in a rule's expansion. Mutable and reusable (see acquireCursor); the rule it walks is
 * never changed.
 */
export class RuleCursor {
  private rule!: ExpansionRule;
  /** Number of the next period to generate, counted in FREQ units from DTSTART's period (a multiple of INTERVAL). */
  private n = 0;
  // Scratch buffers used with explicit lengths, so the hot path neither allocates nor resizes arrays.
  private readonly pending: number[] = [];
  private pendingLength = 0;
  private pi = 0;
  /** Every instant a period not yet generated can produce is at least this. */
  private lowerBound = -Infinity;
  private last = -Infinity;
  private minInstant = -Infinity;
  private maxInstant = Infinity;
  private dtPending = false;
  private exhausted = false;
  private emptyRun = 0;
  private readonly walls: number[] = [];
  private wallCount = 0;
  private cachedDay = NaN;
  private cachedDayOk = false;

  /**
   * Positions the cursor so that next() returns, in order, the occurrences with fromInstant ≤ t ≤ maxInstant
   * (UNTIL is applied on top). It jumps straight to the period holding fromInstant.
   */
  start(rule: ExpansionRule, fromInstant: number, maxInstant: number): void {
    this.rule = rule;
    this.pendingLength = 0;
    this.pi = 0;
    this.last = -Infinity;
    this.minInstant = fromInstant;
    this.maxInstant = Math.min(maxInstant, rule.untilInstant);
    this.exhausted = false;
    this.emptyRun = 0;
    this.cachedDay = NaN;
    if (fromInstant <= rule.dtInstant) {
      this.n = 0;
      this.dtPending = true;
    } else {
      this.dtPending = false;
      // Wall times below from + (smallest nearby offset) all map to instants before `from`.
      const wall = fromInstant + rule.zone.minOffsetNear(fromInstant);
      this.n = this.periodNumberAt(wall);
    }
    this.lowerBound = this.periodLowerBound(this.n);
  }

  /** The next occurrence instant, or Infinity when there is none. */
  next(): number {
    const rule = this.rule;
    if (this.dtPending) {
      this.dtPending = false;
      this.last = rule.dtInstant;
      return rule.dtInstant;
    }
    for (;;) {
      const pending = this.pending;
      while (this.pi < this.pendingLength) {
        const v = pending[this.pi];
        if (v > this.lowerBound) break;
        this.pi++;
        if (v <= this.last) continue;
        this.last = v;
        if (v > this.maxInstant) {
          this.finish();
          return Infinity;
        }
        if (v >= this.minInstant) return v;
      }
      if (this.exhausted) return Infinity;
      this.generate();
    }
  }

  private finish(): void {
    this.exhausted = true;
    this.lowerBound = Infinity;
    this.pendingLength = 0;
    this.pi = 0;
  }

  private periodNumberAt(wall: number): number {
    const rule = this.rule;
    let raw: number;
    if (rule.freq < DAILY) {
      raw = Math.floor((wall - rule.baseWall) / SUB_DAILY_UNIT[rule.freq]);
    } else {
      const day = Math.floor(wall / MS_PER_DAY);
      if (rule.freq === DAILY) raw = day - rule.dtDay;
      else if (rule.freq === WEEKLY) raw = Math.floor((day - rule.dtWeekStart) / 7);
      else {
        const civil = civilFromDays(day);
        if (rule.freq === MONTHLY) raw = packedYear(civil) * 12 + packedMonth(civil) - 1 - rule.dtMonthIndex;
        else raw = (rule.byWeekNo ? weekYearOf(day, rule.wkst) : packedYear(civil)) - rule.dtYear;
      }
    }
    return raw <= 0 ? 0 : Math.floor(raw / rule.interval) * rule.interval;
  }

  private periodStartWall(n: number): number {
    const rule = this.rule;
    switch (rule.freq) {
      case YEARLY: {
        const year = rule.dtYear + n;
        if (year > MAX_YEAR) return MAX_WALL;
        return (rule.byWeekNo ? firstDayOfWeekOne(year, rule.wkst) : daysFromCivil(year, 1, 1)) * MS_PER_DAY;
      }
      case MONTHLY: {
        const index = rule.dtMonthIndex + n;
        const year = Math.floor(index / 12);
        return year > MAX_YEAR ? MAX_WALL : daysFromCivil(year, (index % 12) + 1, 1) * MS_PER_DAY;
      }
      case WEEKLY:
        return (rule.dtWeekStart + 7 * n) * MS_PER_DAY;
      case DAILY:
        return (rule.dtDay + n) * MS_PER_DAY;
      default:
        return rule.baseWall + n * SUB_DAILY_UNIT[rule.freq];
    }
  }

  private periodLowerBound(n: number): number {
    const wall = this.periodStartWall(n);
    return wall >= MAX_WALL ? Infinity : this.rule.zone.earliestInstantFrom(wall);
  }

  /** Generates the next period (or skips empty ones) and queues its instants. */
  private generate(): void {
    const rule = this.rule;
    if (rule.neverMatches || this.lowerBound > this.maxInstant || this.emptyRun > EMPTY_PERIOD_BUDGET) {
      this.finish();
      return;
    }
    this.wallCount = 0;
    if (rule.freq < DAILY) this.fillSubDaily();
    else {
      this.fillDays();
      this.n += rule.interval;
    }
    this.lowerBound = this.periodLowerBound(this.n);
    if (rule.bySetPos && this.wallCount > 0)
      this.wallCount = applySetPos(this.walls, this.wallCount, rule.bySetPos);
    if (this.wallCount === 0) {
      this.emptyRun++;
      return;
    }
    this.emptyRun = 0;
    this.queue();
  }

  private queue(): void {
    const rule = this.rule;
    const pending = this.pending;
    const walls = this.walls;
    // Keep what is still held back (a DST gap can hold instants across periods) at the front.
    let length = 0;
    for (let i = this.pi; i < this.pendingLength; i++) pending[length++] = pending[i];
    this.pi = 0;
    let sorted = true;
    for (let i = 0; i < this.wallCount; i++) {
      const wall = walls[i];
      if (wall <= rule.dtWall) continue;
      const instant = rule.zone.instantOf(wall);
      if (instant <= rule.dtInstant) continue;
      if (length > 0 && instant < pending[length - 1]) sorted = false;
      pending[length++] = instant;
    }
    this.pendingLength = length;
    // Only a DST gap (a shifted wall time overtaking later ones) gets here.
    if (!sorted) sortPrefix(pending, length);
  }

  private push(wall: number): void {
    this.walls[this.wallCount++] = wall;
  }

  private fillDays(): void {
    const rule = this.rule;
    const n = this.n;
    switch (rule.freq) {
      case DAILY:
        this.pushDay(rule.dtDay + n, 0);
        return;
      case WEEKLY: {
        const weekStart = rule.dtWeekStart + 7 * n;
        if (rule.weekOffsets) {
          for (const offset of rule.weekOffsets) {
            const base = (weekStart + offset) * MS_PER_DAY;
            for (const t of rule.times) this.push(base + t);
          }
        } else {
          for (let i = 0; i < 7; i++) this.pushDay(weekStart + i, 0);
        }
        return;
      }
      case MONTHLY: {
        const index = rule.dtMonthIndex + n;
        const year = Math.floor(index / 12);
        const month = (index % 12) + 1;
        if (year > MAX_YEAR) return;
        if (rule.byMonthMask !== 0 && (rule.byMonthMask & (1 << month)) === 0) return;
        const first = daysFromCivil(year, month, 1);
        const last = first + daysInMonth(year, month);
        for (let day = first; day < last; day++) this.pushDay(day, 1);
        return;
      }
      default: {
        const year = rule.dtYear + n;
        if (year > MAX_YEAR) return;
        if (rule.byWeekNo) {
          // BYWEEKNO names weeks of this year, whose days may lie in the neighbouring calendar years.
          const last = firstDayOfWeekOne(year + 1, rule.wkst);
          for (let day = firstDayOfWeekOne(year, rule.wkst); day < last; day++) this.pushDay(day, 2);
          return;
        }
        // With BYMONTH, BYDAY ordinals count within the month (RFC 5545 §3.3.10 note 2).
        const scope = rule.byMonthMask !== 0 ? 1 : 2;
        for (let month = 1; month <= 12; month++) {
          if (rule.byMonthMask !== 0 && (rule.byMonthMask & (1 << month)) === 0) continue;
          const first = daysFromCivil(year, month, 1);
          const last = first + daysInMonth(year, month);
          for (let day = first; day < last; day++) this.pushDay(day, scope);
        }
      }
    }
  }

  private pushDay(day: number, nthScope: number): void {
    if (!dayMatches(this.rule, day, nthScope)) return;
    const base = day * MS_PER_DAY;
    for (const t of this.rule.times) this.push(base + t);
  }

  /** One sub-daily period, skipping whole days, hours or minutes that a limit excludes. */
  private fillSubDaily(): void {
    const rule = this.rule;
    const unit = SUB_DAILY_UNIT[rule.freq];
    const wall = rule.baseWall + this.n * unit;
    const day = Math.floor(wall / MS_PER_DAY);
    if (day !== this.cachedDay) {
      this.cachedDay = day;
      this.cachedDayOk = dayMatches(rule, day, 0);
    }
    if (!this.cachedDayOk) {
      this.skipTo((day + 1) * MS_PER_DAY);
      return;
    }
    const msOfDay = wall - day * MS_PER_DAY;
    const hour = Math.floor(msOfDay / MS_PER_HOUR);
    if (rule.hourLimit && !rule.hourLimit[hour]) {
      this.skipTo(day * MS_PER_DAY + (hour + 1) * MS_PER_HOUR);
      return;
    }
    if (rule.freq < HOURLY) {
      const minute = Math.floor((msOfDay % MS_PER_HOUR) / MS_PER_MINUTE);
      if (rule.minuteLimit && !rule.minuteLimit[minute]) {
        this.skipTo(wall - (msOfDay % MS_PER_MINUTE) + MS_PER_MINUTE);
        return;
      }
      if (rule.freq === SECONDLY && rule.secondLimit) {
        const second = Math.floor((msOfDay % MS_PER_MINUTE) / MS_PER_SECOND);
        if (!rule.secondLimit[second]) {
          this.n += rule.interval;
          return;
        }
      }
    }
    for (const t of rule.times) this.push(wall + t);
    this.n += rule.interval;
  }

  /** Moves to the first period (a multiple of INTERVAL) starting at or after `wall`. */
  private skipTo(wall: number): void {
    const rule = this.rule;
    const unit = SUB_DAILY_UNIT[rule.freq];
    const raw = Math.ceil((wall - rule.baseWall) / unit);
    const next = Math.ceil(raw / rule.interval) * rule.interval;
    this.n = Math.max(next, this.n + rule.interval);
  }
}

/**
 * Keeps only the BYSETPOS positions (1-based, negative from the end) of the sorted period set in
 * walls[0, length), in place; returns the new length.
 */
function applySetPos(walls: number[], length: number, positions: readonly number[]): number {
  const picked: number[] = [];
  for (const p of positions) {
    const i = p > 0 ? p - 1 : length + p;
    if (i >= 0 && i < length) picked.push(walls[i]);
  }
  const unique = sortedUnique(picked);
  for (let i = 0; i < unique.length; i++) walls[i] = unique[i];
  return unique.length;
}

/** Sorts values[0, length) ascending in place (insertion sort: only a handful are ever out of order). */
function sortPrefix(values: number[], length: number): void {
  for (let i = 1; i < length; i++) {
    const v = values[i];
    let j = i - 1;
    while (j >= 0 && values[j] > v) {
      values[j + 1] = values[j];
      j--;
    }
    values[j + 1] = v;
  }
}

/** Whether `day` lies in a generated period (INTERVAL phase) and passes every day-level part. Day-level FREQ only. */
function dayInRule(rule: ExpansionRule, day: number): boolean {
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

/** Longest range scanCandidates walks day by day; longer ones go through a cursor, which can skip empty periods. */
const DAY_SCAN_LIMIT = 400 * MS_PER_DAY;

/**
 * Existence check without a cursor, for the hot path: calls `hit(g)` for the instants g the rule generates in
 * [fromInstant, toInstant] (DTSTART included; UNTIL applied), in no particular order and possibly twice, until
 * `hit` returns true. Without BYSETPOS a day-level rule's days can be tested one by one, so no period has to be
 * built, sorted or deduplicated. Returns undefined when the cursor must answer instead (sub-daily FREQ, BYSETPOS,
 * ranges over DAY_SCAN_LIMIT).
 */
export function scanCandidates(
  rule: ExpansionRule,
  fromInstant: number,
  toInstant: number,
  hit: (g: number) => boolean,
): boolean | undefined {
  if (rule.freq < DAILY || rule.bySetPos || !(toInstant - fromInstant <= DAY_SCAN_LIMIT)) return undefined;
  if (rule.dtInstant >= fromInstant && rule.dtInstant <= toInstant && hit(rule.dtInstant)) return true;
  if (rule.neverMatches) return false;
  const zone = rule.zone;
  const maxInstant = Math.min(toInstant, rule.untilInstant);
  if (maxInstant < fromInstant) return false;
  // Every wall time whose instant lies in [from, max] lies in [from + smallest offset, max + largest offset].
  const firstDay = Math.max(
    Math.floor((fromInstant + zone.minOffsetNear(fromInstant)) / MS_PER_DAY),
    rule.dtDay,
  );
  const lastDay = Math.floor((maxInstant + zone.maxOffsetNear(maxInstant)) / MS_PER_DAY);
  const times = rule.times;
  for (let day = firstDay; day <= lastDay; day++) {
    if (!dayInRule(rule, day)) continue;
    const base = day * MS_PER_DAY;
    for (let i = 0; i < times.length; i++) {
      const wall = base + times[i];
      if (wall <= rule.dtWall) continue;
      const g = zone.instantOf(wall);
      if (g > rule.dtInstant && g >= fromInstant && g <= maxInstant && hit(g)) return true;
    }
  }
  return false;
}

const pool: RuleCursor[] = [];

/**
 * A scratch cursor from a small pool; give it back with releaseCursor. Cursors hold no rule between uses, so
 * compiled rules stay small and immutable, and nested scans (one query computing another's cache) still work.
 */
export function acquireCursor(): RuleCursor {
  return pool.pop() ?? new RuleCursor();
}

export function releaseCursor(cursor: RuleCursor): void {
  if (pool.length < 8) pool.push(cursor);
}
