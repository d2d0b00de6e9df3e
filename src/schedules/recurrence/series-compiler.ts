// Turns a schedule item as the API receives it into a CompiledSeries (the service's rules on top of RFC 5545 §3.3.10 and
// §3.8.5.3): the simple fields (RecurrenceType, Interval, EndCount, EndTime) fill what `Pattern` lacks, and any
// contradiction between them is an error naming the field. All validation happens here, once; the result is
// immutable and can be cached by the caller.
import { allDayDuration, checkAllDay } from './all-day.js';
import { MS_PER_DAY } from './calendar.js';
import { type ExceptionSpec, type CompiledSeries, SeriesImpl } from './compiled-series.js';
import { type ParsedDateTime, parseDateTime } from './iso-date-time.js';
import { type IsoDuration, ZERO_DURATION, parseDuration } from './iso-duration.js';
import { RecurrenceError } from './recurrence-error.js';
import { buildExpansionRule } from './expansion-rule.js';
import {
  type Frequency,
  FREQUENCIES,
  type RRuleParts,
  parseRRule,
  validateRuleForFrequency,
} from './rrule-parser.js';
import { type ZoneRules, resolveTimeZone, zoneRules } from './time-zone.js';

/** Longer than any rule worth writing (every BYxxx list in full fits in ~600 characters). */
export const MAX_PATTERN_LENGTH = 1_000;
/** A whole number sent as text (Interval): nine digits and some padding; the document states it as maxLength. */
export const MAX_INTEGER_TEXT = 20;

export interface RecurrenceExceptionInput {
  readonly OriginalTime?: string | null;
  readonly IsDeleted?: boolean | null;
  readonly NewStart?: string | null;
  readonly NewEnd?: string | null;
  readonly NewStartTime?: string | null;
  readonly NewEndTime?: string | null;
}

export interface RecurrenceInput {
  readonly StartTime?: string | null;
  readonly EndTime?: string | null;
  readonly Offset?: string | null;
  readonly EndCount?: number | string | null;
  readonly RecurrenceType?: string | null;
  readonly Interval?: string | number | null;
  readonly Duration?: string | null;
  /** An RRULE; the interface leaves its type open, so anything but a string is rejected with a clear message. */
  readonly Pattern?: unknown;
  readonly RecurrenceDates?: readonly string[] | null;
  readonly ExceptionDates?: readonly string[] | null;
  readonly Exceptions?: readonly RecurrenceExceptionInput[] | null;
}

/** At most this many RDATE and as many EXDATE values per item (the request DTO says the same). */
export const MAX_DATE_LIST = 1_000;

export interface ScheduleItemInput {
  readonly Start?: string | null;
  readonly End?: string | null;
  readonly StartTimeZone?: string | null;
  /** Whole local days (an iCalendar DATE event): checked by checkAllDay, and its default duration is in days. */
  readonly AllDay?: boolean | null;
  readonly Recurrence?: RecurrenceInput | null;
}

const MO = 0;

function present(value: string | null | undefined): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

function requireText(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new RecurrenceError(field, 'must be a string');
  return value.trim() === '' ? undefined : value;
}

/** A date-time that must name a moment: with an offset it is one, without one it is read in the item's zone. */
function parseMoment(value: unknown, field: string, zone: ZoneRules): number | undefined {
  const text = requireText(value, field);
  if (text === undefined) return undefined;
  const parsed = parseDateTime(text);
  if (!parsed || parsed.kind === 'date') {
    throw new RecurrenceError(field, `"${text}" is not an ISO 8601 date-time such as 2025-03-09T02:30:00Z`);
  }
  return momentOf(parsed, zone);
}

/** An instant from API text: an instant, a wall time in the zone, or a date meaning the end of that local day. */
export function momentOf(parsed: ParsedDateTime, zone: ZoneRules): number {
  switch (parsed.kind) {
    case 'instant':
      return parsed.ms;
    case 'wall':
      return zone.instantOf(parsed.ms);
    case 'date':
      // A date as series end includes that whole local day.
      return zone.earliestInstantFrom((parsed.days + 1) * MS_PER_DAY) - 1;
  }
}

function parseFrequency(value: unknown): Frequency | 'NONE' | undefined {
  const text = requireText(value, 'Recurrence.RecurrenceType');
  if (text === undefined) return undefined;
  const upper = text.trim().toUpperCase();
  if (upper === 'NONE') return 'NONE';
  const freq = FREQUENCIES.find((f) => f === upper);
  if (!freq) {
    throw new RecurrenceError(
      'Recurrence.RecurrenceType',
      `"${text}" is not one of None, Secondly, Minutely, Hourly, Daily, Weekly, Monthly, Yearly`,
    );
  }
  return freq;
}

function parsePositiveInt(value: unknown, field: string, allowZero: boolean): number | undefined {
  if (value === undefined || value === null) return undefined;
  const n =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && value.length <= MAX_INTEGER_TEXT && /^\s*\d{1,9}\s*$/.test(value)
        ? Number(value)
        : NaN;
  if (!Number.isSafeInteger(n) || n < (allowZero ? 0 : 1)) {
    throw new RecurrenceError(
      field,
      allowZero ? 'must be a whole number ≥ 0' : 'must be a positive whole number',
    );
  }
  return n;
}

function parseDurationField(value: unknown, field: string, allowNegative: boolean): IsoDuration | undefined {
  const text = requireText(value, field);
  if (text === undefined) return undefined;
  const parsed = parseDuration(text);
  if (!parsed.ok) throw new RecurrenceError(field, parsed.reason);
  if (!allowNegative && (parsed.value.days < 0 || parsed.value.exactMs < 0)) {
    throw new RecurrenceError(field, 'must not be negative');
  }
  return parsed.value;
}

function compileExceptions(list: unknown, zone: ZoneRules): ExceptionSpec[] {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new RecurrenceError('Recurrence.Exceptions', 'must be an array');
  const specs: ExceptionSpec[] = [];
  const seen = new Map<number, number>();
  (list as readonly unknown[]).forEach((raw, index) => {
    const at = `Recurrence.Exceptions[${index}]`;
    if (typeof raw !== 'object' || raw === null) throw new RecurrenceError(at, 'must be an object');
    const e = raw as RecurrenceExceptionInput;
    const originalTime = parseMoment(e.OriginalTime, `${at}.OriginalTime`, zone);
    if (originalTime === undefined) throw new RecurrenceError(`${at}.OriginalTime`, 'is required');
    const earlier = seen.get(originalTime);
    if (earlier !== undefined) {
      throw new RecurrenceError(
        `${at}.OriginalTime`,
        `names the same occurrence as Recurrence.Exceptions[${earlier}]`,
      );
    }
    seen.set(originalTime, index);
    if (e.IsDeleted !== undefined && e.IsDeleted !== null && typeof e.IsDeleted !== 'boolean') {
      throw new RecurrenceError(`${at}.IsDeleted`, 'must be a boolean');
    }
    const isDeleted = e.IsDeleted === true;
    // Instants win; the local wall-time fields are the fallback (NewStart/NewEnd, read in the item's zone).
    const newStart =
      parseMoment(e.NewStartTime, `${at}.NewStartTime`, zone) ??
      parseMoment(e.NewStart, `${at}.NewStart`, zone);
    const newEnd =
      parseMoment(e.NewEndTime, `${at}.NewEndTime`, zone) ?? parseMoment(e.NewEnd, `${at}.NewEnd`, zone);
    if (!isDeleted && newStart === undefined && newEnd === undefined) {
      throw new RecurrenceError(
        `${at}.NewStartTime`,
        'an exception that is not deleted must move the occurrence (NewStartTime/NewEndTime or NewStart/NewEnd)',
      );
    }
    if (!isDeleted && newStart !== undefined && newEnd !== undefined && newEnd < newStart) {
      throw new RecurrenceError(
        present(e.NewEndTime) ? `${at}.NewEndTime` : `${at}.NewEnd`,
        'is before the new start',
      );
    }
    specs.push({ index, originalTime, isDeleted, newStart, newEnd });
  });
  return specs;
}

/** RDATE or EXDATE values (RFC 5545 §3.8.5.1–2) as instants; each written like an exception's OriginalTime. */
function compileDateList(list: unknown, field: string, zone: ZoneRules): number[] {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new RecurrenceError(field, 'must be an array of date-times');
  if (list.length > MAX_DATE_LIST) {
    throw new RecurrenceError(field, `has ${list.length} entries; at most ${MAX_DATE_LIST} are allowed`);
  }
  return (list as readonly unknown[]).map((value, index) => {
    const at = `${field}[${index}]`;
    const instant = parseMoment(value, at, zone);
    if (instant === undefined) throw new RecurrenceError(at, 'must be a date-time');
    return instant;
  });
}

/**
 * Validates and compiles one schedule item. Throws RecurrenceError naming the offending field. The result is
 * immutable and reusable across queries.
 */
export function compileSeries(item: ScheduleItemInput): CompiledSeries {
  const zoneText = requireText(item.StartTimeZone, 'StartTimeZone');
  let zoneId = 'UTC';
  if (zoneText !== undefined) {
    const resolved = resolveTimeZone(zoneText);
    if (resolved === undefined) {
      throw new RecurrenceError(
        'StartTimeZone',
        `"${zoneText}" is neither an IANA nor a Windows time zone id nor a POSIX TZ string` +
          (/^(?:UTC|GMT|UT|UCT)\s*[+-]/i.test(zoneText.trim())
            ? ' (an offset after UTC or GMT is ambiguous, POSIX inverts its sign: write Etc/GMT-1 or <+01>-1 for UTC+1)'
            : ''),
      );
    }
    zoneId = resolved;
  }
  const zone = zoneRules(zoneId);
  const start = parseMoment(item.Start, 'Start', zone);
  const end = parseMoment(item.End, 'End', zone);
  if (start !== undefined && end !== undefined && end < start) {
    throw new RecurrenceError('End', 'is before Start');
  }
  const recurrence = item.Recurrence ?? undefined;
  if (recurrence !== undefined && (typeof recurrence !== 'object' || Array.isArray(recurrence))) {
    throw new RecurrenceError('Recurrence', 'must be an object');
  }
  const exceptions = compileExceptions(recurrence?.Exceptions, zone);
  const recurrenceDates = compileDateList(recurrence?.RecurrenceDates, 'Recurrence.RecurrenceDates', zone);
  const exceptionDates = compileDateList(recurrence?.ExceptionDates, 'Recurrence.ExceptionDates', zone);
  const rawPattern: unknown = recurrence?.Pattern;
  if (typeof rawPattern === 'string' && rawPattern.length > MAX_PATTERN_LENGTH) {
    throw new RecurrenceError(
      'Recurrence.Pattern',
      `is ${rawPattern.length} characters long; at most ${MAX_PATTERN_LENGTH} are allowed`,
    );
  }
  const patternText = requireText(rawPattern, 'Recurrence.Pattern');
  const type = parseFrequency(recurrence?.RecurrenceType);
  const allDay = item.AllDay === true;
  // An all-day item lasts whole local days, so its occurrences end at a day start also across a DST change.
  const itemDuration: IsoDuration =
    start !== undefined && end !== undefined
      ? allDay
        ? allDayDuration(zone, start, end)
        : { days: 0, exactMs: end - start }
      : ZERO_DURATION;
  const checkDays = (pattern: RRuleParts | undefined, frequency: string | undefined) => {
    if (!allDay) return;
    checkAllDay(zone, {
      start,
      end,
      startTime: recurrence?.StartTime,
      duration: parseDurationField(recurrence?.Duration, 'Recurrence.Duration', false),
      offset: parseDurationField(recurrence?.Offset, 'Recurrence.Offset', true),
      pattern,
      frequency,
      recurrenceDates,
      exceptionDates,
    });
  };

  if (!recurrence || (patternText === undefined && (type === undefined || type === 'NONE'))) {
    if (start === undefined) throw new RecurrenceError('Start', 'is required');
    checkDays(undefined, undefined);
    // DTSTART plus RDATEs is a recurrence set like any other: its Duration and Offset apply to every start. A
    // single occurrence keeps the behaviour it always had (End − Start, no Offset).
    const isSet = recurrenceDates.length > 0;
    return new SeriesImpl(
      zone,
      undefined,
      start,
      (isSet && parseDurationField(recurrence?.Offset, 'Recurrence.Offset', true)) || ZERO_DURATION,
      (isSet && parseDurationField(recurrence?.Duration, 'Recurrence.Duration', false)) || itemDuration,
      exceptions,
      recurrenceDates,
      exceptionDates,
    );
  }

  const pattern: RRuleParts = patternText === undefined ? {} : parseRRule(patternText, 'Recurrence.Pattern');
  const typeFreq = type === 'NONE' ? undefined : type;
  if (pattern.freq && typeFreq && pattern.freq !== typeFreq) {
    throw new RecurrenceError(
      'Recurrence.RecurrenceType',
      `contradicts FREQ=${pattern.freq} in Recurrence.Pattern`,
    );
  }
  const freq = pattern.freq ?? typeFreq;
  if (!freq)
    throw new RecurrenceError('Recurrence.Pattern', 'has no FREQ and RecurrenceType does not give one');

  const interval = parsePositiveInt(
    typeof recurrence.Interval === 'string' && recurrence.Interval.trim() === ''
      ? undefined
      : recurrence.Interval,
    'Recurrence.Interval',
    false,
  );
  if (interval !== undefined && pattern.interval !== undefined && interval !== pattern.interval) {
    throw new RecurrenceError(
      'Recurrence.Interval',
      `contradicts INTERVAL=${pattern.interval} in Recurrence.Pattern`,
    );
  }

  const endCount = parsePositiveInt(recurrence.EndCount, 'Recurrence.EndCount', true) || undefined;
  if (endCount !== undefined && pattern.count !== undefined && endCount !== pattern.count) {
    throw new RecurrenceError(
      'Recurrence.EndCount',
      `contradicts COUNT=${pattern.count} in Recurrence.Pattern`,
    );
  }
  const endTimeText = requireText(recurrence.EndTime, 'Recurrence.EndTime');
  let endTime: number | undefined;
  if (endTimeText !== undefined) {
    const parsed = parseDateTime(endTimeText);
    if (!parsed)
      throw new RecurrenceError(
        'Recurrence.EndTime',
        `"${endTimeText}" is not an ISO 8601 date or date-time`,
      );
    endTime = momentOf(parsed, zone);
  }
  const patternUntil = pattern.until === undefined ? undefined : momentOf(pattern.until, zone);
  if (endTime !== undefined && patternUntil !== undefined && endTime !== patternUntil) {
    throw new RecurrenceError('Recurrence.EndTime', 'contradicts UNTIL in Recurrence.Pattern');
  }
  const count = pattern.count ?? endCount;
  const until = patternUntil ?? endTime;
  if (count !== undefined && until !== undefined) {
    throw new RecurrenceError(
      endCount !== undefined ? 'Recurrence.EndCount' : 'Recurrence.EndTime',
      'a series ends either after a count (EndCount/COUNT) or at a time (EndTime/UNTIL), not both',
    );
  }
  validateRuleForFrequency(pattern, freq, 'Recurrence.Pattern');

  const startTimeText = requireText(recurrence.StartTime, 'Recurrence.StartTime');
  let dtWall: number;
  let dtInstant: number;
  if (startTimeText !== undefined) {
    const parsed = parseDateTime(startTimeText);
    if (!parsed || parsed.kind === 'date') {
      throw new RecurrenceError('Recurrence.StartTime', `"${startTimeText}" is not an ISO 8601 date-time`);
    }
    // A wall time keeps its clock reading for every occurrence, even when the first one falls into a gap.
    dtWall = parsed.kind === 'wall' ? parsed.ms : zone.wallOf(parsed.ms);
    dtInstant = parsed.kind === 'wall' ? zone.instantOf(parsed.ms) : parsed.ms;
  } else if (start !== undefined) {
    dtInstant = start;
    dtWall = zone.wallOf(start);
  } else {
    throw new RecurrenceError('Start', 'is required (or Recurrence.StartTime)');
  }

  checkDays(pattern, freq);
  const duration = parseDurationField(recurrence.Duration, 'Recurrence.Duration', false) ?? itemDuration;
  const offset = parseDurationField(recurrence.Offset, 'Recurrence.Offset', true) ?? ZERO_DURATION;
  const rule = buildExpansionRule(
    {
      freq,
      interval: pattern.interval ?? interval ?? 1,
      count: count ?? 0,
      untilInstant: until ?? Infinity,
      wkst: pattern.wkst ?? MO,
      bySecond: pattern.bySecond,
      byMinute: pattern.byMinute,
      byHour: pattern.byHour,
      byDay: pattern.byDay,
      byMonthDay: pattern.byMonthDay,
      byYearDay: pattern.byYearDay,
      byWeekNo: pattern.byWeekNo,
      byMonth: pattern.byMonth,
      bySetPos: pattern.bySetPos,
    },
    zone,
    dtWall,
    dtInstant,
  );
  return new SeriesImpl(zone, rule, dtInstant, offset, duration, exceptions, recurrenceDates, exceptionDates);
}
