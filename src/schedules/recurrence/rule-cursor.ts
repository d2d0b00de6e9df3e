// RFC 5545 §3.8.5.3 recurrence set, walked in local wall time from any instant:
// - periods of FREQ × INTERVAL are generated in wall-clock time (sub-daily steps too, so a repeated fall-back hour
//   is produced once); BYSETPOS picks positions within one period's sorted set;
// - wall times become instants with the service's zone rules (gap → shifted forward, ambiguous → first
//   instant); because a shifted time can land after later wall times, instants are held back until no later
//   period can produce a smaller one, then emitted sorted and without duplicates;
// - DTSTART is always the first occurrence; candidates at or before it (in wall time or as an instant) are dropped;
// - a cursor starts at any instant by jumping to the period holding it instead of walking from DTSTART.
import {
  MS_PER_DAY,
  MS_PER_HOUR,
  MS_PER_MINUTE,
  MS_PER_SECOND,
  civilFromDays,
  daysFromCivil,
  daysInMonth,
  firstDayOfWeekOne,
  packedMonth,
  packedYear,
} from './calendar.js';
import {
  DAILY,
  type ExpansionRule,
  HOURLY,
  MAX_WALL,
  MONTHLY,
  SECONDLY,
  SUB_DAILY_UNIT,
  WEEKLY,
  YEARLY,
  dayInRule,
  dayMatches,
  sortedUnique,
  weekYearOf,
} from './expansion-rule.js';
import { MAX_YEAR } from './time-zone.js';

/**
 * Periods in a row that may produce nothing before a scan gives up. A day-level rule's periods repeat within the
 * 400-year Gregorian cycle (at most 146,097 of them), so an empty run longer than that means the rule cannot
 * match again. Sub-daily rules skip non-matching days, hours and minutes in one step each, and rules whose
 * INTERVAL can never reach an allowed time are caught at compile time (someAlignedTimeAllowed), so the same
 * budget bounds their scans; it only ends scans of rules that have no further occurrence.
 */
const EMPTY_PERIOD_BUDGET = 500_000;

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
