// The recurrence rule as the export writes it: Offset folded into the rule where exact (shiftRule), RRULE text
// (formatRule), and the checks that decide when DTSTART or the listed occurrences must be written instead.
import {
  MS_PER_DAY,
  MS_PER_HOUR,
  MS_PER_MINUTE,
  MS_PER_SECOND,
  WEEKDAY_CODES,
  civilFromDays,
  mod,
  packedDay,
  packedMonth,
  weekdayOfDays,
} from '../recurrence/calendar.js';
import {
  DAILY,
  type ExpansionRule,
  SUB_DAILY_UNIT,
  dayInRule,
  dayMatches,
} from '../recurrence/expansion-rule.js';
import { acquireCursor, releaseCursor } from '../recurrence/rule-cursor.js';
import { compileSeries } from '../recurrence/series-compiler.js';
import { type IsoDuration } from '../recurrence/iso-duration.js';
import { type Frequency, type RRuleParts, type WeekdayNum } from '../recurrence/rrule-parser.js';
import { type ZoneRules } from '../recurrence/time-zone.js';
import { basicDate, dayStart, localDay } from '../recurrence/all-day.js';
import { formatWall } from './vtimezone.js';
import { type ExportItem, MAX_LISTED } from './ical-export-model.js';
import { floorSecond } from './ical-export-zone.js';

const SUB_DAILY: ReadonlySet<Frequency> = new Set(['SECONDLY', 'MINUTELY', 'HOURLY']);

/** What the export needs of an item's recurrence, with the simple fields folded in as the engine folds them. */
export interface RuleSpec {
  readonly freq: Frequency;
  readonly interval: number;
  readonly count: number | undefined;
  readonly until: number | undefined;
  readonly parts: RRuleParts;
}

/** A rule, DTSTART wall time and Offset → the same occurrences without Offset, or undefined when not exact. */
interface Shifted {
  readonly parts: RRuleParts;
  readonly dtWall: number;
}

export function shiftRule(rule: RuleSpec, dtWall: number, offset: IsoDuration): Shifted | undefined {
  const shift = offset.days * MS_PER_DAY + offset.exactMs;
  if (shift === 0) return { parts: rule.parts, dtWall };
  const p = rule.parts;
  const hasByTime = p.byHour !== undefined || p.byMinute !== undefined || p.bySecond !== undefined;
  const hasByDay =
    p.byMonth !== undefined ||
    p.byMonthDay !== undefined ||
    p.byYearDay !== undefined ||
    p.byWeekNo !== undefined ||
    p.bySetPos !== undefined ||
    p.byDay !== undefined;
  if (SUB_DAILY.has(rule.freq)) {
    // Periods count from DTSTART, so moving DTSTART moves every occurrence; BYxxx parts would not move with it.
    return hasByTime || hasByDay ? undefined : { parts: p, dtWall: dtWall + shift };
  }
  // Times of day: every combination of BYHOUR × BYMINUTE × BYSECOND (DTSTART's where absent), each moved.
  const dtTime = mod(dtWall, MS_PER_DAY);
  const hours = p.byHour ?? [Math.floor(dtTime / MS_PER_HOUR)];
  const minutes = p.byMinute ?? [Math.floor((dtTime % MS_PER_HOUR) / MS_PER_MINUTE)];
  const seconds = p.bySecond ?? [Math.floor((dtTime % MS_PER_MINUTE) / MS_PER_SECOND)];
  const subSecond = dtTime % MS_PER_SECOND;
  const timeShift = mod(shift, MS_PER_DAY);
  const carries = new Set<number>();
  const moved = new Set<number>();
  for (const h of hours)
    for (const m of minutes)
      for (const s of seconds) {
        const t = h * MS_PER_HOUR + m * MS_PER_MINUTE + s * MS_PER_SECOND + subSecond + timeShift;
        carries.add(t >= MS_PER_DAY ? 1 : 0);
        moved.add(t % MS_PER_DAY);
      }
  // DTSTART moves with the same carry, or the parts the rule takes from it (its weekday, day of month) would move
  // differently from the occurrences (possible when DTSTART is not one of the rule's times).
  const dtCarry = dtTime + timeShift >= MS_PER_DAY ? 1 : 0;
  if (carries.size !== 1 || !carries.has(dtCarry)) return undefined;
  const newHours = new Set([...moved].map((t) => Math.floor(t / MS_PER_HOUR)));
  const newMinutes = new Set([...moved].map((t) => Math.floor((t % MS_PER_HOUR) / MS_PER_MINUTE)));
  const newSeconds = new Set([...moved].map((t) => Math.floor((t % MS_PER_MINUTE) / MS_PER_SECOND)));
  // The moved times must again be a product of BYHOUR, BYMINUTE and BYSECOND sets.
  if (newHours.size * newMinutes.size * newSeconds.size !== moved.size) return undefined;
  const dayShift = Math.floor(shift / MS_PER_DAY) + [...carries][0];
  const sorted = (set: Set<number>) => [...set].sort((a, b) => a - b);
  // A part the rule left to DTSTART stays implicit only if the moved DTSTART still supplies the right value.
  const newDtTime = (dtTime + timeShift) % MS_PER_DAY;
  const explicit = (given: unknown, set: Set<number>, fromDt: number) =>
    given !== undefined || set.size > 1 || !set.has(fromDt) ? sorted(set) : undefined;
  let parts: RRuleParts = {
    ...p,
    byHour: explicit(p.byHour, newHours, Math.floor(newDtTime / MS_PER_HOUR)),
    byMinute: explicit(p.byMinute, newMinutes, Math.floor((newDtTime % MS_PER_HOUR) / MS_PER_MINUTE)),
    bySecond: explicit(p.bySecond, newSeconds, Math.floor((newDtTime % MS_PER_MINUTE) / MS_PER_SECOND)),
  };
  if (dayShift !== 0) {
    // Moving whole days keeps the set only where days are picked by weekday alone, every period alike.
    const onlyWeekdays =
      p.byMonth === undefined &&
      p.byMonthDay === undefined &&
      p.byYearDay === undefined &&
      p.byWeekNo === undefined &&
      p.bySetPos === undefined &&
      (p.byDay ?? []).every((d) => d.ordinal === 0);
    if (!onlyWeekdays || (rule.freq !== 'DAILY' && rule.freq !== 'WEEKLY')) return undefined;
    const byDay: WeekdayNum[] | undefined = p.byDay?.map((d) => ({
      weekday: mod(d.weekday + dayShift, 7),
      ordinal: 0,
    }));
    parts = {
      ...parts,
      byDay,
      wkst: rule.freq === 'WEEKLY' ? mod((p.wkst ?? 0) + dayShift, 7) : p.wkst,
    };
  }
  return { parts, dtWall: dtWall + shift };
}

/**
 * `allDay`: the zone of an all-day series, whose UNTIL is a DATE (§3.3.10: UNTIL has DTSTART's value type): the
 * last local day whose start is not after `until`.
 */
export function formatRule(
  rule: RuleSpec,
  parts: RRuleParts,
  until: number | undefined,
  allDay?: ZoneRules,
): string {
  const out = [`FREQ=${rule.freq}`];
  if (rule.interval !== 1) out.push(`INTERVAL=${rule.interval}`);
  if (rule.count !== undefined) out.push(`COUNT=${rule.count}`);
  if (until !== undefined && allDay !== undefined) {
    const day = localDay(allDay, until);
    out.push(`UNTIL=${basicDate(dayStart(allDay, day) <= until ? day : day - 1)}`);
  } else if (until !== undefined) {
    // §3.3.10: UNTIL in UTC when DTSTART has a TZID (and when it is in UTC).
    out.push(`UNTIL=${formatWall(floorSecond(until))}Z`);
  }
  // Lists are sets (§3.3.10); written sorted, because ical.js misexpands some unsorted ones (BYMINUTE=40,0).
  const list = (name: string, values: readonly number[] | undefined) => {
    if (values !== undefined) out.push(`${name}=${[...values].sort((a, b) => a - b).join(',')}`);
  };
  list('BYSECOND', parts.bySecond);
  list('BYMINUTE', parts.byMinute);
  list('BYHOUR', parts.byHour);
  if (parts.byDay !== undefined) {
    out.push(`BYDAY=${parts.byDay.map((d) => `${d.ordinal || ''}${WEEKDAY_CODES[d.weekday]}`).join(',')}`);
  }
  list('BYMONTHDAY', parts.byMonthDay);
  list('BYYEARDAY', parts.byYearDay);
  list('BYWEEKNO', parts.byWeekNo);
  list('BYMONTH', parts.byMonth);
  list('BYSETPOS', parts.bySetPos);
  if (parts.wkst !== undefined) out.push(`WKST=${WEEKDAY_CODES[parts.wkst]}`);
  return out.join(';');
}

/**
 * Whether the rule itself generates DTSTART. The engine (like RFC 5545 §3.8.5.3, "DTSTART always counts as the
 * first occurrence") lists DTSTART either way, but ical.js and other readers drop a DTSTART the rule does not
 * match. Undefined where this is not worked out (BYSETPOS): such a DTSTART is written as usual.
 */
export function ruleGeneratesDtstart(rule: ExpansionRule): boolean | undefined {
  if (rule.bySetPos !== undefined) return undefined;
  const day = Math.floor(rule.dtWall / MS_PER_DAY);
  const msOfDay = rule.dtWall - day * MS_PER_DAY;
  if (rule.freq >= DAILY) return dayInRule(rule, day) && rule.times.includes(msOfDay);
  const unit = SUB_DAILY_UNIT[rule.freq];
  const allowed = (table: readonly boolean[] | undefined, value: number) =>
    table === undefined || table[value];
  return (
    dayMatches(rule, day, 0) &&
    allowed(rule.hourLimit, Math.floor(msOfDay / MS_PER_HOUR)) &&
    allowed(rule.minuteLimit, Math.floor((msOfDay % MS_PER_HOUR) / MS_PER_MINUTE)) &&
    allowed(rule.secondLimit, Math.floor((msOfDay % MS_PER_MINUTE) / MS_PER_SECOND)) &&
    rule.times.includes(mod(rule.dtWall, unit))
  );
}

/**
 * A YEARLY rule without day parts takes month and day from DTSTART (§3.3.10); they are written out, which
 * changes nothing, because ical.js moves a 29 February DTSTART to 1 March in other years instead of skipping them.
 * Likewise BYWEEKNO without BYDAY: the engine takes DTSTART's weekday (as FREQ=WEEKLY does), which is written out,
 * because python-dateutil and rrule.js expand such a rule to every day of the week, and ical.js to none.
 */
export function withYearlyDay(freq: Frequency, parts: RRuleParts, dtWall: number): RRuleParts {
  if (
    freq === 'YEARLY' &&
    parts.byWeekNo !== undefined &&
    parts.byDay === undefined &&
    parts.byMonthDay === undefined &&
    parts.byYearDay === undefined
  ) {
    return { ...parts, byDay: [{ weekday: weekdayOfDays(Math.floor(dtWall / MS_PER_DAY)), ordinal: 0 }] };
  }
  if (
    freq !== 'YEARLY' ||
    parts.byMonthDay !== undefined ||
    parts.byYearDay !== undefined ||
    parts.byWeekNo !== undefined ||
    parts.byDay !== undefined
  ) {
    return parts;
  }
  const civil = civilFromDays(Math.floor(dtWall / MS_PER_DAY));
  return { ...parts, byMonth: parts.byMonth ?? [packedMonth(civil)], byMonthDay: [packedDay(civil)] };
}

/**
 * Whether the written rule (DTSTART wall time + RRULE, no Offset) generates the same starts as the item's own
 * rule with its Offset, RDATE/EXDATE and exceptions aside: the engine reads both. For finite series only.
 */
export function sameRegularStarts(item: ExportItem, tzid: string, dtWall: number, rrule: string): boolean {
  const recurrence = item.Recurrence ?? {};
  const plain = { Exceptions: null, RecurrenceDates: null, ExceptionDates: null };
  const original = compileSeries({ ...item, Recurrence: { ...recurrence, ...plain } });
  const written = compileSeries({
    StartTimeZone: tzid,
    Recurrence: { StartTime: formatWallIso(dtWall), Pattern: rrule },
  });
  const a = original.occurrencesIn(-8.64e15, 8.64e15, MAX_LISTED + 1);
  const b = written.occurrencesIn(-8.64e15, 8.64e15, MAX_LISTED + 1);
  return a.length === b.length && a.every((o, i) => floorSecond(o.start) === b[i].start);
}

/** A wall time as ISO text without offset (`2026-01-05T09:00:00`), read in the item's zone. */
function formatWallIso(wallMs: number): string {
  return new Date(floorSecond(wallMs)).toISOString().slice(0, 19);
}

/** The COUNT-th instant of a rule, DTSTART counted first (as the engine counts). */
export function countedEnd(rule: ExpansionRule, count: number): number {
  const cursor = acquireCursor();
  try {
    cursor.start(rule, -Infinity, Infinity);
    let last = rule.dtInstant;
    for (let i = 0; i < count; i++) {
      const next = cursor.next();
      if (next === Infinity) break;
      last = next;
    }
    return last;
  } finally {
    releaseCursor(cursor);
  }
}
