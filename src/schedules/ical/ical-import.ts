// iCalendar import (RFC 5545): a VCALENDAR (or several, concatenated) becomes schedule items, one per series (the service stores each as a
// schedule of its own, keyed by `ItemSource.key`). One item per VEVENT master (per UID):
// SUMMARY → Name, DTSTART/DTEND (or DURATION, §3.8.2.5) → Start/End, the zone of DTSTART → StartTimeZone,
// RRULE (§3.8.5.3) → Recurrence.Pattern, RDATE/EXDATE (§3.8.5.2/§3.8.5.1) → RecurrenceDates/ExceptionDates,
// RECURRENCE-ID overrides (§3.8.4.4) → Exceptions (moved, or IsDeleted for STATUS:CANCELLED). Times are written as
// local date-times with their UTC offset in the item's zone, so the stored text is unambiguous. A component the
// service cannot represent or that is broken (a to-do, a cancelled event, an impossible date, …) is skipped and
// reported with its line, UID and reason; only a calendar with nothing importable left is refused. Of several
// versions of one component (same UID and RECURRENCE-ID) the highest SEQUENCE wins (RFC 5546 §2.1.4), then the
// latest DTSTAMP, then the last in the file. The result still goes through the same DTO validation and recurrence
// engine as POST /api/v1/Schedule; `lineOf` maps the fields those name back to lines.
import { runInSlices, type TimeSlicer } from '../../common/time-slicer.js';
import { drain, IcalSyntaxError, parseCalendarSteps, type IcalComponent } from './ical-content.js';
import { collectComponents } from './ical-import-components.js';
import { ItemBuilder } from './ical-import-items.js';
import {
  IcalImportError,
  ImportReport,
  MAX_PROBLEMS,
  refuse,
  type ImportedCalendar,
  type ImportedItem,
  type ItemSource,
  type LineRef,
  type SkippedComponent,
} from './ical-import-report.js';
import { SeriesCollector } from './ical-import-series.js';
import { TimeReader, writtenAsDate } from './ical-import-times.js';
import { sequenceOf } from './ical-versions.js';

export {
  describeProblem,
  IcalImportError,
  type IcalProblem,
  type ImportedCalendar,
  type ImportedException,
  type ImportedItem,
  type ImportedRecurrence,
  type ItemSource,
  type LineRef,
  type SkippedComponent,
} from './ical-import-report.js';
export { MAX_OFFSET_MATCHES } from './ical-import-times.js';

/**
 * Events (series) in one import. Each becomes a schedule of its own (docs/decisions.md); the bound keeps one
 * request's work (~0.5 ms an event) well inside the request time-out.
 */
export const MAX_IMPORTED_ITEMS = 20_000;

/**
 * The calendar without the items the service refused after the import (the DTO or the engine named them), each
 * reported as skipped with its reason; field paths of the remaining items still lead to their lines.
 */
export function withoutItems(
  calendar: ImportedCalendar,
  reasons: ReadonlyMap<number, string>,
): ImportedCalendar {
  const kept: number[] = [];
  calendar.ScheduleItems.forEach((_item, index) => {
    if (!reasons.has(index)) kept.push(index);
  });
  const dropped: SkippedComponent[] = [...reasons].map(([index, reason]) => ({
    line: calendar.sources[index].line,
    component: 'VEVENT',
    uid: calendar.sources[index].uid,
    reason,
  }));
  return {
    ScheduleItems: kept.map((index) => calendar.ScheduleItems[index]),
    sources: kept.map((index) => calendar.sources[index]),
    skipped: [...calendar.skipped, ...dropped].sort((a, b) => a.line - b.line),
    lineOf(field: string): LineRef | undefined {
      const renamed = field.replace(/^ScheduleItems\[(\d+)\]/, (whole, index: string) => {
        const original = kept[Number(index)];
        return original === undefined ? whole : `ScheduleItems[${original}]`;
      });
      return calendar.lineOf(renamed);
    },
  };
}

/** The properties the import reads (besides everything inside VTIMEZONE); the rest is only checked for shape. */
const READ = new Set([
  'VERSION',
  'METHOD',
  'X-WR-TIMEZONE',
  'UID',
  'SUMMARY',
  'STATUS',
  'DTSTART',
  'DTEND',
  'DURATION',
  'RRULE',
  'RDATE',
  'EXDATE',
  'EXRULE',
  'RECURRENCE-ID',
]);

/**
 * Lines not in READ that are still kept: the version of an event and what tells events with one UID apart
 * (ical-versions.ts). The rest is only checked.
 */
const KEPT = new Set(['SEQUENCE', 'DTSTAMP', 'LOCATION', 'X-PLATFORM-SCHEDULE-ID']);

/** Read lines an event can do without: a malformed one is left out and reported (the item then has no Name). */
const OPTIONAL = new Set(['SUMMARY']);

/** `body`: the request's octets (decoded per `charset`, UTF-8 by default) or, in tests, text. */
export function importCalendar(body: string | Buffer, charset?: string): ImportedCalendar {
  return drain(importCalendarSteps(body, charset));
}

/**
 * `importCalendar` in slices, the event loop free in between whenever `slicer`'s budget is spent (a large calendar
 * takes seconds to map; no request may hold the loop for more than ~20 ms).
 */
export function importCalendarSliced(
  body: string | Buffer,
  charset?: string,
  slicer?: TimeSlicer,
): Promise<ImportedCalendar> {
  return runInSlices(importCalendarSteps(body, charset), slicer);
}

/** The import as steps: it pauses (yields) every few lines or events; see `drain` and `importCalendarSliced`. */
export function* importCalendarSteps(
  body: string | Buffer,
  charset?: string,
): Generator<void, ImportedCalendar> {
  let calendars: IcalComponent[];
  try {
    calendars = yield* parseCalendarSteps(body, READ, charset, KEPT, OPTIONAL);
  } catch (error) {
    if (error instanceof IcalSyntaxError) {
      throw new IcalImportError([{ line: error.line, property: error.property, message: error.message }]);
    }
    throw error;
  }
  return yield* new CalendarImport(calendars).run();
}

/** One import: read → components → series → items, and the result with each field's line. */
class CalendarImport {
  private readonly report = new ImportReport();
  private readonly times: TimeReader;
  private readonly series: SeriesCollector;
  private readonly items: ItemBuilder;
  private readonly fieldLines = new Map<string, LineRef>();

  constructor(private readonly calendars: readonly IcalComponent[]) {
    this.times = new TimeReader(calendars);
    this.series = new SeriesCollector(this.report, this.times);
    this.items = new ItemBuilder(this.report, this.times, this.series);
  }

  *run(): Generator<void, ImportedCalendar> {
    const events = yield* collectComponents(this.calendars, this.report, this.times);
    const entries = this.series.entriesOf(events);
    yield;
    yield* this.times.matchUnnamedZones();
    const items: ImportedItem[] = [];
    const sources: ItemSource[] = [];
    for (const { event, uid, key, overrides, orphan, shared, scheduleId } of entries) {
      yield;
      this.items.pendingLines = new Map();
      const index = items.length;
      const item = this.report.skipOnRefusal(event, uid, () =>
        this.items.buildItem(index, event, uid, overrides, orphan),
      );
      if (item === undefined) continue;
      if (items.length === MAX_IMPORTED_ITEMS) {
        this.report.attempt(() =>
          refuse(
            event,
            `the calendar has more than ${MAX_IMPORTED_ITEMS} events (VEVENTs without RECURRENCE-ID, one per UID); ` +
              `one import takes at most ${MAX_IMPORTED_ITEMS}: split the calendar`,
          ),
        );
        break;
      }
      for (const [field, at] of this.items.pendingLines) this.fieldLines.set(field, at);
      items.push(item);
      const start = event.properties.find((property) => property.name === 'DTSTART');
      const allDay = start !== undefined && writtenAsDate(start);
      // A series that shares its UID is known again by its start as read (an instant; a date when all-day), so a
      // producer that writes the same start another way (another TZID, UTC) updates it; `writtenKey` finds series
      // stored under the start as written.
      const normalised = shared && !orphan ? `${uid}\n${normalisedStart(item, allDay)}` : key;
      sources.push({
        line: event.line,
        uid,
        key: normalised,
        ...(normalised === key ? {} : { writtenKey: key }),
        ...(scheduleId === undefined ? {} : { scheduleId }),
        allDay,
        sequence: sequenceOf(event),
      });
    }
    if (this.report.problems.length > 0 || items.length === 0) {
      const problems = [...this.report.problems, ...this.report.skippedProblems];
      if (!this.calendars.some((calendar) => calendar.components.some(({ name }) => name === 'VEVENT'))) {
        problems.push({
          line: this.calendars[0].line,
          property: this.calendars[0].name,
          message: 'the calendar has no VEVENT; there is nothing to import',
        });
      }
      throw new IcalImportError(problems.slice(0, MAX_PROBLEMS));
    }
    return {
      ScheduleItems: items,
      sources,
      skipped: [...this.report.skipped].sort((a, b) => a.line - b.line),
      // Made outside this method: a closure made here would keep this import (and its parsed calendar) alive.
      lineOf: lineFinder(this.fieldLines),
    };
  }
}

/** The item's start as an instant in UTC (`2026-01-05T08:00:00.000Z`), or its local date when all-day. */
function normalisedStart(item: ImportedItem, allDay: boolean): string {
  if (allDay) return item.Start.slice(0, 10);
  const instant = Date.parse(item.Start);
  return Number.isNaN(instant) ? item.Start : new Date(instant).toISOString();
}

/** An RDATE/EXDATE entry: only the first entry of each line is noted; the others are on the line noted before them. */
const LIST_ENTRY = /^(.*\.(?:RecurrenceDates|ExceptionDates))\[(\d+)\]$/;

function lineFinder(fieldLines: ReadonlyMap<string, LineRef>): (field: string) => LineRef | undefined {
  return (field) => lineIn(fieldLines, field);
}

/** The line a field path came from: the path itself, or the nearest parent noted. */
function lineIn(fieldLines: ReadonlyMap<string, LineRef>, field: string): LineRef | undefined {
  for (let path = field; path !== ''; path = parentPath(path)) {
    const found = fieldLines.get(path);
    if (found !== undefined) return found;
    const entry = LIST_ENTRY.exec(path);
    if (entry === null) continue;
    for (let index = Number(entry[2]) - 1; index >= 0; index--) {
      const line = fieldLines.get(`${entry[1]}[${index}]`);
      if (line !== undefined) return line;
    }
  }
  return undefined;
}

/** `A.B[2].C` → `A.B[2]` → `A.B` → `A`. */
function parentPath(path: string): string {
  const cut = Math.max(path.lastIndexOf('.'), path.lastIndexOf('['));
  return cut <= 0 ? '' : path.slice(0, cut);
}
