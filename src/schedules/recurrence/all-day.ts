// All-day items: iCalendar DATE events (RFC 5545 §3.3.4 DATE, §3.6.1 "DTSTART with a DATE value … the event's
// duration is taken to be one day" and DTEND exclusive). The service stores such an item as the starts of its local
// days (midnight, or the first instant of a day whose midnight a DST change skips) in its StartTimeZone, and this
// file decides what "a day" is there: the checks on writes and the days the listing and the export write.
import { MS_PER_DAY, civilFromDays, packedDay, packedMonth, packedYear } from './calendar.js';
import { parseDateTime } from './iso-date-time.js';
import { type IsoDuration } from './iso-duration.js';
import { RecurrenceError } from './recurrence-error.js';
import type { RRuleParts } from './rrule-parser.js';
import type { ZoneRules } from './time-zone.js';

/** The local day (days since 1970-01-01) an instant falls on in the zone. */
export function localDay(zone: ZoneRules, instant: number): number {
  return Math.floor(zone.wallOf(instant) / MS_PER_DAY);
}

/** The first instant of a local day: its midnight, or (midnight in a DST gap) the instant the clock jumps to. */
export function dayStart(zone: ZoneRules, day: number): number {
  return zone.instantOf(day * MS_PER_DAY);
}

/** Whether the instant is the start of its local day in the zone. */
export function isDayStart(zone: ZoneRules, instant: number): boolean {
  return dayStart(zone, localDay(zone, instant)) === instant;
}

/** `2026-01-05` (ISO 8601 calendar date) of a day number. */
export function isoDate(day: number): string {
  const civil = civilFromDays(day);
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return `${pad(packedYear(civil), 4)}-${pad(packedMonth(civil))}-${pad(packedDay(civil))}`;
}

/** `20260105` (RFC 5545 §3.3.4 DATE) of a day number. */
export function basicDate(day: number): string {
  return isoDate(day).replaceAll('-', '');
}

/**
 * An all-day item's own length in whole days (End's day − Start's day). The engine uses it as the default duration of
 * its occurrences instead of the exact End − Start, so every occurrence ends at a day start also across DST.
 */
export function allDayDuration(zone: ZoneRules, start: number, end: number): IsoDuration {
  return { days: localDay(zone, end) - localDay(zone, start), exactMs: 0 };
}

/** The fields of an item the all-day checks read (already parsed by the compiler where it has parsed them). */
export interface AllDayFields {
  readonly start: number | undefined;
  readonly end: number | undefined;
  readonly startTime: unknown;
  readonly duration: IsoDuration | undefined;
  readonly offset: IsoDuration | undefined;
  readonly pattern: RRuleParts | undefined;
  readonly frequency: string | undefined;
  readonly recurrenceDates: readonly number[];
  readonly exceptionDates: readonly number[];
}

const SUB_DAILY = new Set(['SECONDLY', 'MINUTELY', 'HOURLY']);

/**
 * What `AllDay: true` requires, so that every occurrence is whole local days (exceptions may move one occurrence
 * to any time: that one is then listed and exported as timed). Throws RecurrenceError naming the field.
 */
export function checkAllDay(zone: ZoneRules, fields: AllDayFields): void {
  const dayStartText = `a start of a day in StartTimeZone ${zone.id} (local midnight)`;
  if (fields.start === undefined) throw new RecurrenceError('Start', 'is required');
  if (!isDayStart(zone, fields.start)) {
    throw new RecurrenceError('Start', `must be ${dayStartText} when AllDay is true`);
  }
  if (fields.end === undefined) {
    throw new RecurrenceError(
      'End',
      'is required when AllDay is true (the day after the last day, exclusive)',
    );
  }
  if (!isDayStart(zone, fields.end))
    throw new RecurrenceError('End', `must be ${dayStartText} when AllDay is true`);
  if (fields.end <= fields.start) {
    throw new RecurrenceError('End', 'must be after Start when AllDay is true (at least one whole day)');
  }
  if (fields.startTime !== undefined && fields.startTime !== null && typeof fields.startTime === 'string') {
    const parsed = parseDateTime(fields.startTime);
    const atMidnight =
      parsed !== undefined &&
      (parsed.kind === 'wall'
        ? parsed.ms % MS_PER_DAY === 0
        : parsed.kind === 'instant' && isDayStart(zone, parsed.ms));
    if (fields.startTime.trim() !== '' && !atMidnight) {
      throw new RecurrenceError('Recurrence.StartTime', `must be ${dayStartText} when AllDay is true`);
    }
  }
  if (fields.duration !== undefined && (fields.duration.exactMs !== 0 || fields.duration.days < 1)) {
    throw new RecurrenceError(
      'Recurrence.Duration',
      'must be whole days (P1D, P2D, …) when AllDay is true; an all-day occurrence lasts whole days',
    );
  }
  if (fields.offset !== undefined && fields.offset.exactMs !== 0) {
    throw new RecurrenceError(
      'Recurrence.Offset',
      'must be whole days (P1D, -P1D, …) when AllDay is true; hours would move the occurrences off their days',
    );
  }
  const freq = fields.pattern?.freq ?? fields.frequency;
  if (freq !== undefined && SUB_DAILY.has(freq)) {
    throw new RecurrenceError(
      'Recurrence.Pattern',
      `FREQ=${freq} repeats within a day; an all-day series (AllDay true) repeats DAILY or less often`,
    );
  }
  const p = fields.pattern;
  if (p?.byHour !== undefined || p?.byMinute !== undefined || p?.bySecond !== undefined) {
    throw new RecurrenceError(
      'Recurrence.Pattern',
      'BYHOUR, BYMINUTE and BYSECOND pick times of day; an all-day series (AllDay true) has none',
    );
  }
  for (const [field, list] of [
    ['Recurrence.RecurrenceDates', fields.recurrenceDates],
    ['Recurrence.ExceptionDates', fields.exceptionDates],
  ] as const) {
    list.forEach((instant, index) => {
      if (!isDayStart(zone, instant)) {
        throw new RecurrenceError(`${field}[${index}]`, `must be ${dayStartText} when AllDay is true`);
      }
    });
  }
}
