// Schedules → one RFC 5545 VCALENDAR (§3.4, §3.6.1 VEVENT, §3.6.5 VTIMEZONE). Each schedule item becomes a VEVENT
// whose recurrence set (§3.8.5: RRULE, RDATE, EXDATE) is the one the engine expands, and each moved exception a
// VEVENT with the same UID and a RECURRENCE-ID (§3.8.4.4). Content lines are folded at 75 octets (§3.1) with CRLF,
// TEXT values escaped (§3.3.11). Offset, which iCalendar lacks, is folded into DTSTART and the rule where that
// is exact (see docs/schedules.md, "iCalendar export"). Pure functions: no Nest, no database.
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
  buildExpansionRule,
  dayInRule,
  dayMatches,
} from '../recurrence/expansion-rule.js';
import { acquireCursor, releaseCursor } from '../recurrence/rule-cursor.js';
import { compileSeries, momentOf } from '../recurrence/series-compiler.js';
import type { ScheduleItemInput } from '../recurrence/series-compiler.js';
import { parseDateTime } from '../recurrence/iso-date-time.js';
import { type IsoDuration, ZERO_DURATION, addDuration, parseDuration } from '../recurrence/iso-duration.js';
import {
  type Frequency,
  FREQUENCIES,
  type RRuleParts,
  type WeekdayNum,
  parseRRule,
} from '../recurrence/rrule-parser.js';
import { type ZoneRules, resolveTimeZone, zoneRules } from '../recurrence/time-zone.js';
import { allDayDuration, basicDate, dayStart, isDayStart, localDay } from '../recurrence/all-day.js';
import { formatWall, tzidParameter, tzidProperty, vtimezoneLines } from './vtimezone.js';

export const PRODID = '-//platform-api//Schedules iCalendar export 1.0//EN';

/**
 * With its only occurrence deleted, an event is DTSTART excluded by EXDATE; ical.js applies EXDATE only to events
 * with a rule, so this one-instance rule (DTSTART itself) goes with it. The set stays empty per §3.8.5.3.
 */
const EMPTY_SET_RULE = 'RRULE:FREQ=DAILY;COUNT=1';

/** The most occurrences a finite series is listed with when its rule cannot carry the Offset. */
export const MAX_LISTED = 10_000;

/** A schedule item as the API shows it (ScheduleItemDto); only the engine's fields, its Id and Name are read. */
export interface ExportItem extends ScheduleItemInput {
  readonly Id: string;
  readonly Name?: string | null;
}

export interface ExportSchedule {
  readonly Id: string;
  readonly ScheduleItems: readonly ExportItem[];
}

/** A stored item that iCalendar cannot express exactly; `field` is its path in the schedule. */
export class IcalExportError extends Error {
  constructor(
    readonly scheduleId: string,
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'IcalExportError';
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Content lines (§3.1, §3.3.11)

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;

/** TEXT value escaping (§3.3.11): backslash, semicolon, comma and line breaks; other control characters dropped. */
export function escapeText(value: string): string {
  return value
    .replace(CONTROL, '')
    .replace(/\\/g, '\\\\')
    .replace(/;/g, '\\;')
    .replace(/,/g, '\\,')
    .replace(/\r\n|\r|\n/g, '\\n');
}

const MAX_OCTETS = 75;

function utf8Length(codePoint: number): number {
  return codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4;
}

/**
 * Folds one content line (§3.1): no line longer than 75 octets (CRLF excluded), continuation lines start with one
 * space, and a line never breaks inside a UTF-8 sequence (breaks fall between code points).
 */
export function foldLine(line: string): string {
  let octets = 0;
  for (let i = 0; i < line.length; i++) {
    const unit = line.charCodeAt(i);
    if (unit >= 0x80) {
      octets = -1;
      break;
    }
  }
  if (octets === 0 && line.length <= MAX_OCTETS) return line;
  if (octets === 0) {
    // ASCII: one octet per character.
    let out = line.slice(0, MAX_OCTETS);
    for (let at = MAX_OCTETS; at < line.length; at += MAX_OCTETS - 1) {
      out += `\r\n ${line.slice(at, at + MAX_OCTETS - 1)}`;
    }
    return out;
  }
  let out = '';
  let used = 0;
  for (const char of line) {
    const size = utf8Length(char.codePointAt(0) ?? 0);
    if (used + size > MAX_OCTETS) {
      out += '\r\n ';
      used = 1;
    }
    out += char;
    used += size;
  }
  return out;
}

/** Lines → the calendar text: each folded, each ended by CRLF. */
export function joinLines(lines: readonly string[]): string {
  let out = '';
  for (const line of lines) out += `${foldLine(line)}\r\n`;
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Values

const FREQ_ORDER: readonly Frequency[] = FREQUENCIES;
const SUB_DAILY: ReadonlySet<Frequency> = new Set(['SECONDLY', 'MINUTELY', 'HOURLY']);

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

function momentOfText(value: unknown, zone: ZoneRules): number | undefined {
  const t = text(value);
  const parsed = t === undefined ? undefined : parseDateTime(t);
  return parsed === undefined ? undefined : momentOf(parsed, zone);
}

function durationOf(value: unknown): IsoDuration | undefined {
  const t = text(value);
  if (t === undefined) return undefined;
  const parsed = parseDuration(t);
  return parsed.ok ? parsed.value : undefined;
}

const floorSecond = (ms: number): number => Math.floor(ms / MS_PER_SECOND) * MS_PER_SECOND;

/** `P1DT2H30M` (§3.3.6) for a non-negative duration. */
function formatDuration(d: IsoDuration): string {
  const seconds = Math.floor(d.exactMs / MS_PER_SECOND);
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  const time = `${h ? `${h}H` : ''}${m ? `${m}M` : ''}${s ? `${s}S` : ''}`;
  if (d.days === 0) return `PT${time || '0S'}`;
  return `P${d.days}D${time ? `T${time}` : ''}`;
}

/**
 * How the instants of one item are written: in its zone (TZID) or, for items without a zone, in UTC. For an all-day
 * item, day starts are written as DATEs (`;VALUE=DATE:20260105`, §3.3.4), other instants (an exception moved to a
 * time of day) as date-times; `wroteTimed` then says the zone's VTIMEZONE is needed.
 */
class ItemZone {
  wroteTimed = false;

  constructor(
    readonly tzid: string | undefined,
    readonly rules: ZoneRules,
    readonly allDay = false,
  ) {}

  /**
   * The writer of one occurrence's DTSTART and DTEND, which must have one value type (§3.6.1): this one for a timed
   * item or whole days; for an all-day item's occurrence moved to a time of day, a date-time writer (whose zone
   * this one's VTIMEZONE then has to describe).
   */
  span(start: number, end: number): ItemZone {
    if (!this.allDay) return this;
    if (end > start && isDayStart(this.rules, start) && isDayStart(this.rules, end)) return this;
    this.wroteTimed = true;
    return new ItemZone(this.tzid, this.rules);
  }

  /** `;TZID=Europe/Berlin:20260105T090000` or `:20260105T080000Z`; `name` prefixes it. */
  property(name: string, instant: number): string {
    const [params, value] = this.value(instant);
    return `${name}${params}:${value}`;
  }

  /** [parameters, value] of one DATE-TIME. An instant whose wall time does not name it alone is written in UTC. */
  value(instant: number): [string, string] {
    const at = floorSecond(instant);
    if (this.allDay && isDayStart(this.rules, at))
      return [';VALUE=DATE', basicDate(localDay(this.rules, at))];
    if (this.allDay) this.wroteTimed = true;
    if (this.tzid === undefined) return ['', `${formatWall(at)}Z`];
    const wall = this.rules.wallOf(at);
    if (this.rules.instantOf(wall) !== at) return ['', `${formatWall(at)}Z`];
    return [tzidParameter(this.tzid), formatWall(wall)];
  }

  /** A wall time as DTSTART (kept as given, even inside a DST gap: the rule repeats that clock reading). */
  wallProperty(name: string, wall: number): string {
    if (this.tzid === undefined) return `${name}:${formatWall(wall)}Z`;
    return `${name}${tzidParameter(this.tzid)}:${formatWall(wall)}`;
  }

  /** RDATE/EXDATE: one property per form (TZID or UTC), values comma-separated. */
  listProperties(name: string, instants: readonly number[]): string[] {
    const byParams = new Map<string, string[]>();
    for (const instant of [...new Set(instants.map(floorSecond))].sort((a, b) => a - b)) {
      const [params, value] = this.value(instant);
      const list = byParams.get(params) ?? [];
      list.push(value);
      byParams.set(params, list);
    }
    return [...byParams].map(([params, values]) => `${name}${params}:${values.join(',')}`);
  }
}

/** What the export needs of an item's recurrence, with the simple fields folded in as the engine folds them. */
interface RuleSpec {
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

function shiftRule(rule: RuleSpec, dtWall: number, offset: IsoDuration): Shifted | undefined {
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
function formatRule(
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
function ruleGeneratesDtstart(rule: ExpansionRule): boolean | undefined {
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
function withYearlyDay(freq: Frequency, parts: RRuleParts, dtWall: number): RRuleParts {
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
function sameRegularStarts(item: ExportItem, tzid: string, dtWall: number, rrule: string): boolean {
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
function countedEnd(rule: ExpansionRule, count: number): number {
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

// ---------------------------------------------------------------------------------------------------------------
// Items → VEVENTs

/** The instants a zone's VTIMEZONE must cover. */
interface ZoneUse {
  readonly rules: ZoneRules;
  from: number;
  to: number;
}

class CalendarBuilder {
  readonly events: string[] = [];
  readonly zones = new Map<string, ZoneUse>();
  /** The zones (UTC included) whose local days the all-day items' DATEs are. */
  readonly allDayZones = new Set<string>();

  constructor(private readonly dtstamp: string) {}

  addItem(scheduleId: string, itemIndex: number, item: ExportItem): void {
    const at = `ScheduleItems[${itemIndex}]`;
    // Stored items were compiled on write; compiling again gives the unmatched exceptions (left out here).
    const series = compileSeries(item);
    const zoneText = text(item.StartTimeZone);
    const tzid = zoneText === undefined ? undefined : (resolveTimeZone(zoneText) ?? zoneText);
    const rules = zoneRules(tzid ?? 'UTC');
    const recurrence = item.Recurrence ?? undefined;
    const start = momentOfText(item.Start, rules) ?? 0;
    const end = momentOfText(item.End, rules);
    // Stored all-day items passed the checks of all-day.ts; the guard keeps an unchecked one timed.
    const allDay =
      item.AllDay === true &&
      end !== undefined &&
      end > start &&
      isDayStart(rules, start) &&
      isDayStart(rules, end);
    const zone = new ItemZone(rules.id === 'UTC' ? undefined : tzid, rules, allDay);
    if (allDay) this.allDayZones.add(zone.tzid ?? 'UTC');
    const itemDuration: IsoDuration =
      end === undefined
        ? ZERO_DURATION
        : allDay
          ? allDayDuration(rules, start, end)
          : { days: 0, exactMs: Math.max(0, end - start) };
    const patternText = text(recurrence?.Pattern);
    const typeText = text(recurrence?.RecurrenceType)?.trim().toUpperCase();
    const hasRule =
      recurrence !== undefined &&
      (patternText !== undefined || (typeText !== undefined && typeText !== 'NONE'));

    let dtWall: number;
    let dtInstant: number;
    let duration = itemDuration;
    let offset = ZERO_DURATION;
    let rrule: string | undefined;
    let until: number | undefined;
    let unsynchronized = false;
    /** Whether the rule (or, without one, DTSTART) generates this instant before Offset; COUNT applied. */
    let generates = (instant: number): boolean => instant === start;
    if (hasRule) {
      const parts = patternText === undefined ? {} : parseRRule(patternText, 'Recurrence.Pattern');
      const freq = parts.freq ?? FREQ_ORDER.find((f) => f === typeText);
      if (freq === undefined) throw new Error(`${at}: no FREQ`);
      const intervalText = recurrence.Interval;
      const interval =
        parts.interval ??
        (intervalText === undefined || intervalText === null || String(intervalText).trim() === ''
          ? 1
          : Number(intervalText));
      const endCount = Number(recurrence.EndCount ?? 0) || undefined;
      const untilParsed =
        parts.until ?? (text(recurrence.EndTime) ? parseDateTime(String(recurrence.EndTime)) : undefined);
      const rule: RuleSpec = {
        freq,
        interval,
        count: parts.count ?? endCount,
        until: untilParsed === undefined ? undefined : momentOf(untilParsed, rules),
        parts,
      };
      const startTime = text(recurrence.StartTime);
      const parsedStart = startTime === undefined ? undefined : parseDateTime(startTime);
      if (parsedStart?.kind === 'wall') {
        dtWall = parsedStart.ms;
        dtInstant = rules.instantOf(parsedStart.ms);
      } else {
        dtInstant = parsedStart?.kind === 'instant' ? parsedStart.ms : start;
        dtWall = rules.wallOf(dtInstant);
      }
      duration = durationOf(recurrence.Duration) ?? itemDuration;
      offset = durationOf(recurrence.Offset) ?? ZERO_DURATION;
      const shifted = shiftRule(rule, zone.tzid === undefined ? dtInstant : dtWall, offset);
      if (!shifted && (rule.count !== undefined || rule.until !== undefined)) {
        // A finite series is written as its occurrences instead: exact, only longer.
        const listed = this.addListed(
          scheduleId,
          item,
          series,
          zone,
          durationOf(recurrence.Duration) ?? itemDuration,
        );
        if (listed) return;
      }
      if (!shifted) {
        throw new IcalExportError(
          scheduleId,
          `${at}.Recurrence.Offset`,
          `${at}.Recurrence.Offset ${String(recurrence.Offset)} cannot be written in iCalendar for the rule ` +
            `${formatRule(rule, rule.parts, rule.until)}: it moves occurrences across days the rule picks by ` +
            'date, or splits its times of day, and the series is unbounded or longer than ' +
            `${MAX_LISTED} occurrences (see docs/schedules.md, iCalendar export)`,
        );
      }
      const expansion = buildExpansionRule(
        {
          freq,
          interval,
          count: rule.count ?? 0,
          untilInstant: rule.until ?? Infinity,
          wkst: parts.wkst ?? 0,
          bySecond: parts.bySecond,
          byMinute: parts.byMinute,
          byHour: parts.byHour,
          byDay: parts.byDay,
          byMonthDay: parts.byMonthDay,
          byYearDay: parts.byYearDay,
          byWeekNo: parts.byWeekNo,
          byMonth: parts.byMonth,
          bySetPos: parts.bySetPos,
        },
        rules,
        dtWall,
        dtInstant,
      );
      let written = rule;
      let countEnd: number | undefined;
      const lastCounted = (count: number) => (countEnd ??= countedEnd(expansion, count));
      generates = (instant) => {
        const cursor = acquireCursor();
        try {
          cursor.start(expansion, instant, instant);
          if (cursor.next() !== instant) return false;
        } finally {
          releaseCursor(cursor);
        }
        // Counting walks the rule from DTSTART, so it comes last.
        return rule.count === undefined || instant <= lastCounted(rule.count);
      };
      unsynchronized = ruleGeneratesDtstart(expansion) === false;
      if (unsynchronized && rule.count !== undefined) {
        // DTSTART is written as an RDATE too; readers that do not count it would count one more instance, so
        // COUNT becomes UNTIL at the COUNT-th instance, which every reader reads alike.
        written = { ...rule, count: undefined, until: lastCounted(rule.count) };
      }
      until = written.until === undefined ? undefined : addDuration(rules, written.until, offset);
      rrule = formatRule(
        written,
        withYearlyDay(freq, shifted.parts, shifted.dtWall),
        until,
        allDay ? rules : undefined,
      );
      if (
        offset.exactMs !== 0 &&
        zone.tzid !== undefined &&
        (rule.count !== undefined || rule.until !== undefined) &&
        !sameRegularStarts(item, zone.tzid, shifted.dtWall, rrule)
      ) {
        // The Offset's hours span a DST change for some occurrence, where a wall-time shift is an hour off: a
        // finite series is listed instead.
        const duration = durationOf(recurrence.Duration) ?? itemDuration;
        if (this.addListed(scheduleId, item, series, zone, duration)) return;
      }
      dtInstant = addDuration(rules, dtInstant, offset);
      dtWall = zone.tzid === undefined ? dtInstant : shifted.dtWall;
    } else {
      // DTSTART plus RDATEs is a set like any other: the engine gives every start the recurrence's Duration and
      // Offset (series-compiler.ts); a single occurrence keeps End − Start and no Offset.
      if (recurrence !== undefined && (recurrence.RecurrenceDates ?? []).length > 0) {
        duration = durationOf(recurrence.Duration) ?? itemDuration;
        offset = durationOf(recurrence.Offset) ?? ZERO_DURATION;
      }
      dtInstant = addDuration(rules, start, offset);
      dtWall = rules.wallOf(dtInstant);
    }
    const shift = (instant: number) => addDuration(rules, instant, offset);
    const rawRdates = (recurrence?.RecurrenceDates ?? []).map((t) => momentOfText(t, rules) ?? 0);
    // RDATEs the rule generates anyway are left out: the set is the same (§3.8.5.3), and ical.js lists such an
    // instance twice.
    const rdates = rawRdates.filter((instant) => !generates(instant)).map(shift);
    // Without an RRULE, DTSTART is still the first instance (§3.8.5.2), but ical.js expands only the RDATEs then;
    // and a DTSTART the rule does not match is dropped by ical.js and others. Repeating it as an RDATE changes
    // nothing per §3.8.5.3 (duplicates count once) and keeps those readers right.
    if ((rrule === undefined && rdates.length > 0) || unsynchronized) rdates.push(dtInstant);
    // EXDATEs that remove nothing are left out, as the engine ignores them: ical.js, meeting one, skips the
    // EXDATE after it too when that one names the very next occurrence.
    const rdateSet = new Set(rawRdates);
    const exdates = (recurrence?.ExceptionDates ?? [])
      .map((t) => momentOfText(t, rules) ?? 0)
      .filter((instant) => rdateSet.has(instant) || generates(instant))
      .map(shift);
    const endOf = (instant: number) => addDuration(rules, instant, duration);

    const unmatched = new Set(series.unmatchedExceptions);
    const overrides: string[] = [];
    const use = this.zoneUse(zone, dtInstant);
    const name = text(item.Name);
    const summary = name === undefined ? [] : [`SUMMARY:${escapeText(name)}`];
    for (const [index, exception] of (recurrence?.Exceptions ?? []).entries()) {
      if (unmatched.has(index)) continue;
      const original = momentOfText(exception.OriginalTime, rules);
      if (original === undefined) continue;
      if (exception.IsDeleted === true) {
        exdates.push(original);
        continue;
      }
      const newStart =
        momentOfText(exception.NewStartTime, rules) ?? momentOfText(exception.NewStart, rules) ?? original;
      const newEnd =
        momentOfText(exception.NewEndTime, rules) ??
        momentOfText(exception.NewEnd, rules) ??
        newStart + (endOf(original) - original);
      this.widen(use, Math.min(original, newStart), newEnd);
      overrides.push(
        'BEGIN:VEVENT',
        `UID:${item.Id}`,
        `DTSTAMP:${this.dtstamp}`,
        zone.property('RECURRENCE-ID', original),
        zone.span(newStart, newEnd).property('DTSTART', newStart),
        ...(newEnd > newStart ? [zone.span(newStart, newEnd).property('DTEND', newEnd)] : []),
        ...summary,
        `X-PLATFORM-SCHEDULE-ID:${scheduleId}`,
        'END:VEVENT',
      );
    }
    for (const instant of [...rdates, ...exdates]) this.widen(use, instant, instant);
    if (rrule === undefined || (!/COUNT=/.test(rrule) && until === undefined)) {
      if (rrule !== undefined) use.to = Infinity;
    } else if (until !== undefined) {
      this.widen(use, until, until);
    } else {
      // COUNT: the last counted instant is not known without expanding; cover what the listing would reach.
      use.to = Infinity;
    }
    this.widen(use, dtInstant, endOf(dtInstant));
    for (const rdate of rdates) this.widen(use, rdate, endOf(rdate));

    this.events.push(
      'BEGIN:VEVENT',
      `UID:${item.Id}`,
      `DTSTAMP:${this.dtstamp}`,
      allDay
        ? zone.property('DTSTART', dtInstant)
        : zone.tzid === undefined
          ? `DTSTART:${formatWall(floorSecond(dtInstant))}Z`
          : zone.wallProperty('DTSTART', dtWall),
      ...this.endLines(zone, dtInstant, duration),
      ...summary,
      ...(rrule !== undefined
        ? [`RRULE:${rrule}`]
        : rdates.length === 0 && exdates.length > 0
          ? [EMPTY_SET_RULE]
          : []),
      ...zone.listProperties('RDATE', rdates),
      ...zone.listProperties('EXDATE', exdates),
      `X-PLATFORM-SCHEDULE-ID:${scheduleId}`,
      'END:VEVENT',
      ...overrides,
    );
    this.adoptTimed(zone, use);
  }

  /** DTEND for an exact duration (the same exact length for every occurrence, §3.8.5.3), DURATION for days. */
  /**
   * A finite series as DTSTART + RDATEs of its occurrence starts (deleted ones left out, moved ones as
   * RECURRENCE-ID overrides), for an Offset the rule cannot absorb. False when it has more than MAX_LISTED.
   */
  private addListed(
    scheduleId: string,
    item: ExportItem,
    series: ReturnType<typeof compileSeries>,
    zone: ItemZone,
    duration: IsoDuration,
  ): boolean {
    const occurrences = series.occurrencesIn(-8.64e15, 8.64e15, MAX_LISTED + 1);
    if (occurrences.length > MAX_LISTED) return false;
    const starts = occurrences.map((o) => o.originalStart).sort((a, b) => a - b);
    // Every occurrence deleted: DTSTART is written and excluded, an empty set (§3.8.5.1).
    const first = starts[0] ?? series.first;
    const use = this.zoneUse(zone, first);
    const name = text(item.Name);
    const summary = name === undefined ? [] : [`SUMMARY:${escapeText(name)}`];
    const overrides: string[] = [];
    for (const o of occurrences) {
      this.widen(use, Math.min(o.start, o.originalStart), Math.max(o.end, o.originalStart));
      if (!o.isMoved) continue;
      overrides.push(
        'BEGIN:VEVENT',
        `UID:${item.Id}`,
        `DTSTAMP:${this.dtstamp}`,
        zone.property('RECURRENCE-ID', o.originalStart),
        zone.span(o.start, o.end).property('DTSTART', o.start),
        ...(o.end > o.start ? [zone.span(o.start, o.end).property('DTEND', o.end)] : []),
        ...summary,
        `X-PLATFORM-SCHEDULE-ID:${scheduleId}`,
        'END:VEVENT',
      );
    }
    this.events.push(
      'BEGIN:VEVENT',
      `UID:${item.Id}`,
      `DTSTAMP:${this.dtstamp}`,
      zone.property('DTSTART', first),
      ...this.endLines(zone, first, duration),
      ...summary,
      // DTSTART repeated as an RDATE, as for any event without RRULE (ical.js expands only the RDATEs then).
      ...zone.listProperties('RDATE', starts.length > 1 ? starts : []),
      ...(starts.length === 0 ? [EMPTY_SET_RULE, ...zone.listProperties('EXDATE', [first])] : []),
      `X-PLATFORM-SCHEDULE-ID:${scheduleId}`,
      'END:VEVENT',
      ...overrides,
    );
    this.adoptTimed(zone, use);
    return true;
  }

  /**
   * An all-day item needs no VTIMEZONE for its DATEs; one with an exception moved to a time of day wrote that
   * one as a TZID date-time, and its zone's VTIMEZONE then covers the item's instants.
   */
  private adoptTimed(zone: ItemZone, use: ZoneUse): void {
    if (!zone.allDay || !zone.wroteTimed || zone.tzid === undefined) return;
    const registered = this.zoneUse(new ItemZone(zone.tzid, zone.rules), use.from);
    this.widen(registered, use.from, use.to);
  }

  private endLines(zone: ItemZone, dtInstant: number, duration: IsoDuration): string[] {
    if (zone.allDay && duration.exactMs === 0 && duration.days > 0) {
      // Whole days from a DATE: DTEND;VALUE=DATE, exclusive (§3.6.1), the same number of days for every instance.
      return [`DTEND;VALUE=DATE:${basicDate(localDay(zone.rules, dtInstant) + duration.days)}`];
    }
    if (duration.days === 0 && duration.exactMs <= 0) return [];
    if (duration.days !== 0) return [`DURATION:${formatDuration(duration)}`];
    return [zone.property('DTEND', dtInstant + duration.exactMs)];
  }

  private zoneUse(zone: ItemZone, instant: number): ZoneUse {
    // An all-day item's DATEs need no VTIMEZONE (adoptTimed registers one if it wrote a date-time).
    if (zone.tzid === undefined || zone.allDay) return { rules: zone.rules, from: instant, to: instant };
    let use = this.zones.get(zone.tzid);
    if (!use) {
      use = { rules: zone.rules, from: instant, to: instant };
      this.zones.set(zone.tzid, use);
    }
    return use;
  }

  private widen(use: ZoneUse, from: number, to: number): void {
    if (from < use.from) use.from = from;
    if (to > use.to) use.to = to;
  }
}

/**
 * One VCALENDAR with a VEVENT per schedule item (plus one per moved exception) and a VTIMEZONE per zone used.
 * `now` is the DTSTAMP. Throws IcalExportError for an item iCalendar cannot express exactly.
 */
export function exportCalendar(schedules: readonly ExportSchedule[], now: number): string {
  const steps = calendarSteps(schedules, now);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * exportCalendar as steps: the generator pauses after each schedule and each VTIMEZONE, so a caller can give the
 * event loop a turn between them (1,000 schedules are tens of milliseconds of work) and returns the calendar.
 */
export function* calendarSteps(
  schedules: readonly ExportSchedule[],
  now: number,
): Generator<void, string, void> {
  const builder = new CalendarBuilder(`${formatWall(floorSecond(now))}Z`);
  for (const schedule of schedules) {
    schedule.ScheduleItems.forEach((item, index) => builder.addItem(schedule.Id, index, item));
    yield;
  }
  const lines = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    `PRODID:${PRODID}`,
    'CALSCALE:GREGORIAN',
    'METHOD:PUBLISH',
  ];
  // DATEs are floating (§3.3.4); importers, this service's too, read them in X-WR-TIMEZONE (Google's and Apple's
  // calendar property), else in UTC. Written when every all-day item has one zone other than UTC.
  const [dayZone] = builder.allDayZones;
  if (builder.allDayZones.size === 1 && dayZone !== 'UTC') lines.push(`X-WR-TIMEZONE:${dayZone}`);
  for (const [tzid, use] of builder.zones) {
    const component = vtimezoneLines(use.rules, use.from, use.to);
    // The component is built under the engine's canonical id; the events name the zone as resolved.
    lines.push(...component.map((line) => (line.startsWith('TZID:') ? tzidProperty(tzid) : line)));
    yield;
  }
  lines.push(...builder.events, 'END:VCALENDAR');
  return joinLines(lines);
}
