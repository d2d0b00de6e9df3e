// Size limits of an iCalendar import, applied while the text is read: each content line is measured
// before it is joined from its folds, each list value is counted before ical.js splits it, and components are
// counted at their BEGIN — so an oversize part is refused (400 naming its line) or its component skipped and
// reported without the part ever being built. The costs behind each number are in docs/security.md.

/** Longest content line (unfolded, in characters) read at all; a longer one is not joined, only measured. */
export const MAX_LINE_LENGTH = 1024 * 1024;
/** Longest line the import parses with ical.js (DTSTART, RDATE, SUMMARY, …; every line inside a VTIMEZONE). */
export const MAX_READ_LINE_LENGTH = 64 * 1024;
/** Longest RRULE/EXRULE line: the engine takes patterns of at most 1,000 characters (series-compiler.ts). */
export const MAX_RULE_LINE_LENGTH = 2_000;
/** RDATE (and EXDATE) values of one event, over all its lines: the DTO's limit on RecurrenceDates/ExceptionDates. */
export const MAX_DATE_VALUES = 1_000;
/**
 * RDATE and EXDATE values of one calendar, over all its events: each value read costs ~0.6 KB until the import
 * is stored (more on Node 24), so this bounds what one import holds (~60 MB) whatever its events share of them:
 * at 200,000 the largest calendar it let through took the service +312 MB on Node 24, over the 300 MB an import
 * may add.
 */
export const MAX_IMPORT_DATE_VALUES = 100_000;
/**
 * Properties kept from one calendar (those the import reads and DTSTAMP/SEQUENCE), in all its components: ~0.4 KB
 * each until the import is stored. 20,000 events with a dozen each, or 75,000 components with four, fit.
 */
export const MAX_IMPORT_PROPERTIES = 300_000;
/** Components in one calendar, nested ones included (20,000 events with alarms and overrides fit). */
export const MAX_COMPONENTS = 100_000;
/** Nesting depth of BEGIN…END (VCALENDAR › VTIMEZONE › STANDARD is 3). */
export const MAX_DEPTH = 8;
/** Properties in one component (a meeting with a few thousand ATTENDEEs fits). */
export const MAX_PROPERTIES_PER_COMPONENT = 10_000;
/** Components nested in one component (VALARMs of an event, STANDARD/DAYLIGHT of a VTIMEZONE). */
export const MAX_NESTED_PER_COMPONENT = 1_000;

const LIST_PROPERTIES = new Set(['RDATE', 'EXDATE']);
const RULE_PROPERTIES = new Set(['RRULE', 'EXRULE']);

/** Why a line the import reads (through ical.js) is too long, or undefined. */
export function readLineProblem(name: string, length: number): string | undefined {
  const limit = RULE_PROPERTIES.has(name) ? MAX_RULE_LINE_LENGTH : MAX_READ_LINE_LENGTH;
  if (length <= limit) return undefined;
  return `is ${length.toLocaleString('en')} characters long; at most ${limit.toLocaleString('en')} are read`;
}

/**
 * Why a line longer than MAX_LINE_LENGTH is refused (it was measured, never joined). `length` is unknown when the
 * body was refused as it arrived, the moment the line passed the limit (the rest was never read).
 */
export function overlongLineProblem(length?: number): string {
  const measured = length === undefined ? '' : ` (${length.toLocaleString('en')})`;
  return (
    `is more than ${MAX_LINE_LENGTH.toLocaleString('en')} characters long${measured}; ` +
    'no line of a calendar may be that long'
  );
}

/**
 * The values of an RDATE/EXDATE line (0 for other properties), counted from its commas before ical.js splits them,
 * and only up to one more than `room`: an oversize list costs no more than the limit to refuse.
 */
export function listValuesOf(name: string, content: string, valueAt: number, room: number): number {
  if (!LIST_PROPERTIES.has(name) || valueAt < 0) return 0;
  let count = 1;
  for (let at = content.indexOf(',', valueAt); at >= 0 && count <= room; at = content.indexOf(',', at + 1))
    count++;
  return count;
}

export function tooManyValues(name: string): string {
  return `brings the event's ${name} values to more than ${MAX_DATE_VALUES.toLocaleString('en')}, the most one event may have`;
}

export function tooManyValuesInAll(): string {
  return (
    `brings the calendar's RDATE and EXDATE values to more than ${MAX_IMPORT_DATE_VALUES.toLocaleString('en')}, ` +
    'the most one import may have: split the calendar'
  );
}

export function tooManyProperties(): string {
  return (
    `brings the properties the import keeps (UID, DTSTART, RDATE, DTSTAMP, …) to more than ` +
    `${MAX_IMPORT_PROPERTIES.toLocaleString('en')}, the most one import may have: split the calendar`
  );
}
