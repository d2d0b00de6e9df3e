// iCalendar import (RFC 5545): one VCALENDAR becomes schedule items, one per series (the service stores each as a
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
import ICAL from 'ical.js';
import { runInSlices, type TimeSlicer } from '../../common/time-slicer.js';
import { MS_PER_DAY, daysFromCivil, daysInMonth } from '../recurrence/calendar.js';
import { parseDuration } from '../recurrence/iso-duration.js';
import { zoneRules } from '../recurrence/time-zone.js';
import {
  drain,
  IcalSyntaxError,
  paramOf,
  parseCalendarSteps,
  textOf,
  type IcalComponent,
  type IcalProperty,
} from './ical-content.js';
import { compareVersions, derivedUid, isVersionOf, sequenceOf, uidOf } from './ical-versions.js';
import { resolveTzid, zoneFromName, zoneFromOffsetsSteps } from './ical-zones.js';

/**
 * Events (series) in one import. Each becomes a schedule of its own (docs/decisions.md); the bound keeps one
 * request's work (~0.5 ms an event) well inside the request time-out.
 */
export const MAX_IMPORTED_ITEMS = 20_000;
/** The DTO's limit on Exceptions, RecurrenceDates and ExceptionDates per item. */
const MAX_LIST = 1_001;
/** Enough to fix a file in one go; a file with 10,000 bad lines does not need 10,000 messages. */
const MAX_PROBLEMS = 100;
/**
 * Unnamed VTIMEZONEs matched by their offsets per calendar: each match compares ~420 zones (~300 ms the first time a
 * year is seen), and real calendars have one or two such zones.
 */
export const MAX_OFFSET_MATCHES = 10;

export interface ImportedException {
  OriginalTime: string;
  IsDeleted?: boolean;
  NewStartTime?: string;
  NewEndTime?: string;
}

export interface ImportedRecurrence {
  StartTime?: string;
  RecurrenceType?: string;
  Interval?: string;
  Duration?: string;
  Pattern?: string;
  RecurrenceDates?: string[];
  ExceptionDates?: string[];
  Exceptions?: ImportedException[];
}

export interface ImportedItem {
  Name: string | null;
  Start: string;
  End: string;
  StartTimeZone: string;
  /** Only on all-day (DATE) events that last at least one day; absent on the others. */
  AllDay?: true;
  Recurrence: ImportedRecurrence | null;
}

export interface LineRef {
  readonly line: number;
  /** The property (DTSTART) or component (VEVENT) on that line. */
  readonly property: string;
}

/** A component left out of the import, and why. */
export interface SkippedComponent {
  /** Line of its BEGIN. */
  readonly line: number;
  /** VEVENT, VTODO, VTIMEZONE, … */
  readonly component: string;
  readonly uid: string | null;
  /** `line 12: DTSTART: "20261301T090000" is not a date-time …`: the line and property at fault. */
  readonly reason: string;
}

/** Where an item came from: its VEVENT's line and UID (as written, or derived when the VEVENT had none). */
export interface ItemSource {
  readonly line: number;
  readonly uid: string;
  /**
   * The series' key, stable across imports of the calendar: its UID; for a UID the file gives to several events
   * (different masters, or overrides without master) the UID and the DTSTART (or RECURRENCE-ID) as written.
   */
  readonly key: string;
  /** A date-only (all-day) event: DTSTART;VALUE=DATE (stored as `schedule_items.all_day`). */
  readonly allDay: boolean;
}

export interface ImportedCalendar {
  readonly ScheduleItems: ImportedItem[];
  readonly sources: readonly ItemSource[];
  /** Components left out, in file order. */
  readonly skipped: readonly SkippedComponent[];
  /** The line behind a ScheduleInput field path (`ScheduleItems[2].Recurrence.Pattern`), or its nearest parent's. */
  lineOf(field: string): LineRef | undefined;
}

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

export interface IcalProblem {
  readonly line: number;
  readonly property: string;
  readonly message: string;
}

export class IcalImportError extends Error {
  constructor(readonly problems: readonly IcalProblem[]) {
    super(problems.map(describeProblem).join('; '));
  }
}

/** `line 12: DTSTART: "2026-13-01" is not a date-time`. */
export function describeProblem(problem: IcalProblem): string {
  return `line ${problem.line}: ${problem.property === '' ? '' : `${problem.property}: `}${problem.message}`;
}

/** A refusal of one line; collected per event so one answer names every bad event. */
class Refusal extends Error {
  constructor(
    readonly line: number,
    readonly property: string,
    message: string,
  ) {
    super(message);
  }
}

function refuse(at: IcalProperty | IcalComponent, message: string): never {
  throw new Refusal(at.line, at.name, message);
}

/** A DATE or DATE-TIME value as written: its wall-clock reading (ms since 1970-01-01T00:00 wall) and its kind. */
interface IcalTime {
  readonly kind: 'date' | 'utc' | 'zoned' | 'floating';
  readonly wallMs: number;
  /** IANA zone of a TZID value. */
  readonly zone?: string;
}

// Google's birthday calendar writes `RDATE:20131210Z`: a date with a Z, read as that date.
const DATE = /^(\d{4})(\d{2})(\d{2})Z?$/i;
const DATE_TIME = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(Z?)$/i;
const FREQUENCIES = ['SECONDLY', 'MINUTELY', 'HOURLY', 'DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY'];
/** Components of a VCALENDAR that hold no events; skipped and reported. */
const UNREPRESENTABLE: Record<string, string> = {
  VTODO: 'to-dos',
  VJOURNAL: 'journal entries',
  VFREEBUSY: 'free/busy time',
  VAVAILABILITY: 'availability',
};

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

/** Properties whose date values may name a series' occurrence by its date alone (Outlook's `EXDATE:20200116`). */
const OCCURRENCE_LISTS = new Set(['RDATE', 'EXDATE', 'RECURRENCE-ID']);

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
  let calendar: IcalComponent;
  try {
    calendar = yield* parseCalendarSteps(body, READ, charset);
  } catch (error) {
    if (error instanceof IcalSyntaxError) {
      throw new IcalImportError([{ line: error.line, property: error.property, message: error.message }]);
    }
    throw error;
  }
  return yield* new CalendarImport(calendar).run();
}

interface EventEntry {
  event: IcalComponent;
  uid: string;
  key: string;
  overrides: IcalComponent[];
  orphan: boolean;
}

class CalendarImport {
  /** Problems with the calendar as a whole: any of them refuses the import. */
  private readonly problems: IcalProblem[] = [];
  private readonly skipped: SkippedComponent[] = [];
  /** The refusals behind `skipped`: the answer's errors when nothing importable remains. */
  private readonly skippedProblems: IcalProblem[] = [];
  private readonly fieldLines = new Map<string, LineRef>();
  /** Notes of the item being built, kept only if it is built. */
  private pendingLines = new Map<string, LineRef>();
  private readonly vtimezones = new Map<string, IcalComponent>();
  /** Wall-time span of the values using each TZID: the span its VTIMEZONE is compared over. */
  private readonly tzidSpans = new Map<string, { from: number; to: number }>();
  private readonly tzidZones = new Map<string, string>();
  private floating: string | undefined;
  private offsetMatches = 0;

  constructor(private readonly calendar: IcalComponent) {}

  *run(): Generator<void, ImportedCalendar> {
    const events = this.collectComponents();
    yield;
    const entries = this.entriesOf(events);
    yield;
    yield* this.matchUnnamedZones();
    const items: ImportedItem[] = [];
    const sources: ItemSource[] = [];
    for (const { event, uid, key, overrides, orphan } of entries) {
      yield;
      this.pendingLines = new Map();
      const index = items.length;
      const item = this.skipOnRefusal(event, uid, () => this.buildItem(index, event, uid, overrides, orphan));
      if (item === undefined) continue;
      if (items.length === MAX_IMPORTED_ITEMS) {
        this.attempt(() =>
          refuse(
            event,
            `the calendar has more than ${MAX_IMPORTED_ITEMS} events (VEVENTs without RECURRENCE-ID, one per UID); ` +
              `one import takes at most ${MAX_IMPORTED_ITEMS}: split the calendar`,
          ),
        );
        break;
      }
      for (const [field, at] of this.pendingLines) this.fieldLines.set(field, at);
      items.push(item);
      const start = event.properties.find((property) => property.name === 'DTSTART');
      sources.push({ line: event.line, uid, key, allDay: start?.type === 'date' });
    }
    if (this.problems.length > 0 || items.length === 0) {
      const problems = [...this.problems, ...this.skippedProblems];
      if (events.length === 0) {
        problems.push({
          line: this.calendar.line,
          property: this.calendar.name,
          message: 'the calendar has no VEVENT; there is nothing to import',
        });
      }
      throw new IcalImportError(problems.slice(0, MAX_PROBLEMS));
    }
    const fieldLines = this.fieldLines;
    return {
      ScheduleItems: items,
      sources,
      skipped: [...this.skipped].sort((a, b) => a.line - b.line),
      lineOf(field: string): LineRef | undefined {
        for (let path = field; path !== ''; path = parentPath(path)) {
          const found = fieldLines.get(path);
          if (found !== undefined) return found;
        }
        return undefined;
      },
    };
  }

  /** A refusal of the calendar as a whole. */
  private attempt<T>(work: () => T): T | undefined {
    try {
      return work();
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      if (this.problems.length < MAX_PROBLEMS) {
        this.problems.push({ line: error.line, property: error.property, message: error.message });
      }
      return undefined;
    }
  }

  /** Runs `work` for one component; a refusal skips that component and reports it. */
  private skipOnRefusal<T>(component: IcalComponent, uid: string | null, work: () => T): T | undefined {
    try {
      return work();
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      this.skip(component, uid, { line: error.line, property: error.property, message: error.message });
      return undefined;
    }
  }

  private skip(component: IcalComponent, uid: string | null, problem: IcalProblem): void {
    this.skipped.push({
      line: component.line,
      component: component.name,
      uid,
      reason: describeProblem(problem),
    });
    this.skippedProblems.push(problem);
  }

  /** A component with a line ical.js could not parse is skipped (named by its first broken line). */
  private skipIfBroken(component: IcalComponent): boolean {
    const broken = component.broken[0];
    if (broken === undefined) return false;
    this.skip(component, uidOf(component) ?? null, {
      line: broken.line,
      property: broken.property,
      message: broken.message,
    });
    return true;
  }

  /** VTIMEZONEs by TZID and the VEVENTs; to-dos, journals, … are skipped (X- components are extensions). */
  private collectComponents(): IcalComponent[] {
    const calendar = this.calendar;
    for (const property of calendar.properties) {
      if (property.name === 'VERSION' && property.raw.trim() !== '2.0') {
        this.attempt(() =>
          refuse(property, `"${property.raw}" is not 2.0; only iCalendar 2.0 (RFC 5545) can be imported`),
        );
      }
      const method = property.name === 'METHOD' ? property.raw.trim().toUpperCase() : undefined;
      // iTIP (RFC 5546): PUBLISH and REQUEST carry events; CANCEL, REPLY, COUNTER, … are messages about them.
      if (method !== undefined && !['PUBLISH', 'REQUEST', 'ADD'].includes(method)) {
        this.attempt(() =>
          refuse(
            property,
            `METHOD:${method} is a scheduling message about events (RFC 5546), not a calendar of events to import`,
          ),
        );
      }
    }
    const events: IcalComponent[] = [];
    for (const component of calendar.components) {
      if (component.name === 'VEVENT') {
        if (!this.skipIfBroken(component)) events.push(component);
      } else if (component.name === 'VTIMEZONE') {
        if (this.skipIfBroken(component)) continue;
        const tzid = component.properties.find((property) => property.name === 'TZID');
        if (tzid === undefined) {
          this.skip(component, null, {
            line: component.line,
            property: component.name,
            message: 'a VTIMEZONE without TZID',
          });
        } else this.vtimezones.set(textOf(tzid), component);
      } else if (!component.name.startsWith('X-')) {
        const what = UNREPRESENTABLE[component.name];
        this.skip(component, uidOf(component) ?? null, {
          line: component.line,
          property: component.name,
          message:
            `${what === undefined ? `${component.name} components` : `${component.name} components (${what})`} ` +
            'cannot be represented: a schedule holds events (VEVENT) only',
        });
      }
    }
    for (const event of events) this.noteTzidSpans(event);
    return events;
  }

  /**
   * Compares the VTIMEZONEs that name no known zone with every zone ahead of the events, in steps (the first match
   * of one is ~30 ms of work); zoneOf then finds the result in zoneFromOffsets' cache. At most MAX_OFFSET_MATCHES,
   * as zoneOf allows.
   */
  private *matchUnnamedZones(): Generator<void, void> {
    let matched = 0;
    for (const [tzid, span] of this.tzidSpans) {
      const vtimezone = this.vtimezones.get(tzid);
      if (vtimezone === undefined || zoneFromName(tzid) !== undefined) continue;
      const component = new ICAL.Component(vtimezone.jcal);
      const location = component.getFirstPropertyValue('x-lic-location');
      if (typeof location === 'string' && zoneFromName(location) !== undefined) continue;
      if (++matched > MAX_OFFSET_MATCHES) return;
      yield* zoneFromOffsetsSteps(component, span.from, span.to);
    }
  }

  private noteTzidSpans(event: IcalComponent): void {
    for (const property of event.properties) {
      const tzid = paramOf(property, 'tzid');
      if (tzid === undefined) continue;
      for (const token of property.raw.split(',')) {
        const match = DATE_TIME.exec(token.trim());
        if (match === null) continue;
        const wall = wallOf(match);
        if (wall === undefined) continue;
        const span = this.tzidSpans.get(tzid);
        if (span === undefined) this.tzidSpans.set(tzid, { from: wall, to: wall });
        else {
          span.from = Math.min(span.from, wall);
          span.to = Math.max(span.to, wall);
        }
      }
    }
  }

  /**
   * The events to build, in the order each first appears: per UID its masters (VEVENTs without RECURRENCE-ID) with
   * the overrides, or — when the file has no master for the UID (an invitation to some instances only) — each
   * override as an event of its own. Versions of one component are reduced to the winner (`newer`); the others are
   * reported as skipped. Two masters with one UID are versions of each other when their SEQUENCE differs (a revision,
   * RFC 5546 §2.1.4) or when their DTSTART is the same (a copy or an edit that did not move it); otherwise they are
   * different events that a feed gave one UID, and each is imported (overrides go with the first of them).
   */
  private entriesOf(events: IcalComponent[]): EventEntry[] {
    const groups = new Map<string, { masters: IcalComponent[]; overrides: Map<string, IcalComponent> }>();
    for (const event of events) {
      const uid = uidOf(event) ?? derivedUid(event);
      let group = groups.get(uid);
      if (group === undefined) {
        group = { masters: [], overrides: new Map() };
        groups.set(uid, group);
      }
      const recurrenceId = event.properties.find((property) => property.name === 'RECURRENCE-ID');
      if (recurrenceId !== undefined) {
        const key = `${paramOf(recurrenceId, 'tzid') ?? ''}|${recurrenceId.raw.trim().toUpperCase()}`;
        const other = group.overrides.get(key);
        group.overrides.set(key, other === undefined ? event : this.newerOf(other, event, uid));
        continue;
      }
      const at = group.masters.findIndex((master) => isVersionOf(master, event));
      if (at < 0) group.masters.push(event);
      else group.masters[at] = this.newerOf(group.masters[at], event, uid);
    }
    const entries: EventEntry[] = [];
    for (const [uid, group] of groups) {
      const overrides = [...group.overrides.values()].sort((a, b) => a.line - b.line);
      const several = group.masters.length > 1 || (group.masters.length === 0 && overrides.length > 1);
      const keyOf = (event: IcalComponent, property: string): string => {
        if (!several) return uid;
        const start = event.properties.find((candidate) => candidate.name === property);
        return start === undefined
          ? `${uid}\n${event.line}`
          : `${uid}\n${paramOf(start, 'tzid') ?? ''}|${start.raw.trim().toUpperCase()}`;
      };
      if (group.masters.length === 0) {
        for (const event of overrides) {
          entries.push({ event, uid, key: keyOf(event, 'RECURRENCE-ID'), overrides: [], orphan: true });
        }
        continue;
      }
      group.masters.forEach((event, index) =>
        entries.push({
          event,
          uid,
          key: keyOf(event, 'DTSTART'),
          overrides: index === 0 ? overrides : [],
          orphan: false,
        }),
      );
    }
    return entries.sort((a, b) => a.event.line - b.event.line);
  }

  /** The newer of two versions of one component (the later in the file on a tie); the other is reported. */
  private newerOf(earlier: IcalComponent, later: IcalComponent, uid: string): IcalComponent {
    const [older, newer] = compareVersions(earlier, later) > 0 ? [later, earlier] : [earlier, later];
    this.skip(older, uid, {
      line: older.line,
      property: older.name,
      message:
        `an older version (SEQUENCE ${sequenceOf(older)}) of the ${newer.name} at line ${newer.line} ` +
        `(SEQUENCE ${sequenceOf(newer)}), which replaces it`,
    });
    return newer;
  }

  private note(field: string, at: IcalProperty | IcalComponent): void {
    this.pendingLines.set(field, { line: at.line, property: at.name });
  }

  private buildItem(
    index: number,
    event: IcalComponent,
    uid: string,
    overrides: IcalComponent[],
    orphan: boolean,
  ): ImportedItem {
    const path = `ScheduleItems[${index}]`;
    this.note(path, event);
    const props = propertiesByName(event);
    for (const name of ['DTSTART', 'DTEND', 'DURATION', 'SUMMARY', 'RRULE', 'STATUS']) {
      const list = props.get(name) ?? [];
      if (list.length > 1) {
        refuse(
          list[1],
          name === 'RRULE'
            ? `more than one RRULE in a VEVENT (first at line ${list[0].line}) cannot be represented; a schedule ` +
                'item has one rule (merge them or split the event)'
            : `appears more than once in this VEVENT (first at line ${list[0].line})`,
        );
      }
    }
    const exrule = props.get('EXRULE')?.[0];
    if (exrule !== undefined) {
      refuse(
        exrule,
        'EXRULE (deprecated by RFC 5545) cannot be represented; list the removed starts as EXDATE',
      );
    }
    const status = props.get('STATUS')?.[0];
    if (status !== undefined && status.raw.trim().toUpperCase() === 'CANCELLED') {
      refuse(status, 'a cancelled event (STATUS:CANCELLED) has no occurrences to schedule');
    }
    if (orphan) {
      const range = props.get('RECURRENCE-ID')?.[0];
      if (range !== undefined) this.refuseRange(range);
    }

    const timing = this.timingOf(event, props);
    const zone = timing.zone;
    const summary = props.get('SUMMARY')?.[0];
    if (summary !== undefined) this.note(`${path}.Name`, summary);
    this.note(`${path}.Start`, timing.startProperty);
    this.note(`${path}.StartTimeZone`, timing.startProperty);
    this.note(`${path}.Recurrence.StartTime`, timing.startProperty);
    this.note(`${path}.End`, timing.endProperty ?? timing.startProperty);
    this.note(`${path}.Recurrence.Duration`, timing.endProperty ?? timing.startProperty);

    const recurrence: ImportedRecurrence = {};
    const rrule = props.get('RRULE')?.[0];
    if (rrule !== undefined) {
      this.note(`${path}.Recurrence`, rrule);
      this.note(`${path}.Recurrence.Pattern`, rrule);
      for (const simple of ['RecurrenceType', 'Interval', 'EndCount', 'EndTime']) {
        this.note(`${path}.Recurrence.${simple}`, rrule);
      }
      const pattern = rrule.raw.trim();
      // §3.3.10: UNTIL has DTSTART's value type. A date UNTIL on a timed series is read differently by different
      // readers (inclusive of that day, or up to its midnight), so it is refused rather than guessed.
      if (timing.startProperty?.type === 'date-time' && /(?:^|;)UNTIL=\d{8}(?:;|$)/i.test(pattern)) {
        refuse(
          rrule,
          'UNTIL is a date but DTSTART is a date-time; RFC 5545 §3.3.10 requires the same value type (UNTIL=…T…Z)',
        );
      }
      recurrence.Pattern = pattern;
      const freq = /(?:^|;)FREQ=([A-Z]+)/i.exec(pattern)?.[1]?.toUpperCase();
      if (freq !== undefined && FREQUENCIES.includes(freq)) {
        recurrence.RecurrenceType = freq.charAt(0) + freq.slice(1).toLowerCase();
      }
      recurrence.Interval = /(?:^|;)INTERVAL=(\d{1,9})(?:;|$)/i.exec(pattern)?.[1] ?? '1';
    }
    const recurrenceDates = this.dateList(path, 'RecurrenceDates', props.get('RDATE') ?? [], timing);
    if (recurrenceDates.length > 0) recurrence.RecurrenceDates = recurrenceDates;
    const exceptionDates = this.dateList(path, 'ExceptionDates', props.get('EXDATE') ?? [], timing);
    if (exceptionDates.length > 0) recurrence.ExceptionDates = exceptionDates;
    const exceptions: ImportedException[] = [];
    if (overrides.length > 0) {
      // The DTO names the list when it is too long: point at the first override over its 1,000.
      this.note(`${path}.Recurrence.Exceptions`, overrides[Math.min(overrides.length, MAX_LIST) - 1]);
    }
    for (const override of this.latestVersions(overrides, timing, uid)) {
      // A broken override is skipped alone; the series and its other overrides are imported.
      const exception = this.skipOnRefusal(override, uid, () =>
        this.exceptionOf(path, exceptions.length, override, timing),
      );
      if (exception !== undefined && exception !== null) exceptions.push(exception);
    }
    if (exceptions.length > 0) recurrence.Exceptions = exceptions;
    const recurs = rrule !== undefined || recurrenceDates.length > 0;
    if (recurs && timing.durationText !== undefined) recurrence.Duration = timing.durationText;
    const wall = timing.start.wallMs;
    if (recurs && timing.start.kind !== 'utc' && zoneRules(zone).wallOf(timing.startInstant) !== wall) {
      // DTSTART in a DST gap: the rule keeps its clock reading for the other occurrences (RFC 5545 §3.3.10).
      recurrence.StartTime = formatWall(wall);
    }
    return {
      Name: summary === undefined ? null : textOf(summary),
      Start: formatIn(timing.startInstant, zone),
      End: formatIn(timing.endInstant, zone),
      StartTimeZone: zone,
      // A DATE event is stored all-day (whole local days of the floating zone); one whose DTEND is its DTSTART
      // lasts no day and stays a zero-length item at midnight.
      ...(timing.start.kind === 'date' && timing.endInstant > timing.startInstant
        ? { AllDay: true as const }
        : {}),
      Recurrence: Object.keys(recurrence).length === 0 ? null : recurrence,
    };
  }

  /** Start, end, zone and (for recurring items) the per-occurrence duration of a VEVENT. */
  private timingOf(event: IcalComponent, props: Map<string, IcalProperty[]>): Timing {
    const startProperty = props.get('DTSTART')?.[0];
    if (startProperty === undefined) refuse(event, 'a VEVENT without DTSTART');
    const start = this.singleTime(startProperty);
    const zone = start.kind === 'zoned' ? start.zone! : start.kind === 'utc' ? 'UTC' : this.floatingZone();
    const startInstant = this.instantOf(start);
    const endProperty = props.get('DTEND')?.[0];
    const durationProperty = props.get('DURATION')?.[0];
    if (endProperty !== undefined && durationProperty !== undefined) {
      refuse(durationProperty, `a VEVENT may have DTEND (line ${endProperty.line}) or DURATION, not both`);
    }
    const { endInstant, durationText } = this.endOf(start, startInstant, zone, endProperty, durationProperty);
    return {
      start,
      startInstant,
      startProperty,
      zone,
      endInstant,
      endProperty: endProperty ?? durationProperty,
      durationText,
    };
  }

  private endOf(
    start: IcalTime,
    startInstant: number,
    zone: string,
    endProperty: IcalProperty | undefined,
    durationProperty: IcalProperty | undefined,
  ): { endInstant: number; durationText: string | undefined } {
    const allDay = start.kind === 'date';
    if (endProperty !== undefined) {
      const end = this.singleTime(endProperty);
      if ((end.kind === 'date') !== allDay) {
        refuse(
          endProperty,
          allDay
            ? 'must be a date (VALUE=DATE) like DTSTART'
            : 'must be a date-time like DTSTART, not a date',
        );
      }
      const endInstant = this.instantOf(end);
      if (endInstant < startInstant) refuse(endProperty, 'is before DTSTART');
      // All-day events last whole days, also across a DST change.
      const durationText = allDay ? `P${Math.round((end.wallMs - start.wallMs) / MS_PER_DAY)}D` : undefined;
      return { endInstant, durationText };
    }
    if (durationProperty !== undefined) {
      const text = durationProperty.raw.trim();
      const parsed = parseDuration(text);
      if (!parsed.ok) refuse(durationProperty, parsed.reason);
      if (parsed.value.days < 0 || parsed.value.exactMs < 0) refuse(durationProperty, 'must not be negative');
      if (allDay && parsed.value.exactMs !== 0) {
        refuse(
          durationProperty,
          'must be whole days or weeks (P1D, P1W) when DTSTART is a date (RFC 5545 §3.8.2.5: dur-day or dur-week)',
        );
      }
      const rules = zoneRules(zone);
      const endInstant =
        rules.instantOf(rules.wallOf(startInstant) + parsed.value.days * MS_PER_DAY) + parsed.value.exactMs;
      return { endInstant, durationText: text.toUpperCase() };
    }
    // RFC 5545 §3.6.1: no DTEND and no DURATION is one day for a date, no time at all for a date-time.
    if (allDay) {
      const rules = zoneRules(zone);
      return { endInstant: rules.instantOf(start.wallMs + MS_PER_DAY), durationText: 'P1D' };
    }
    return { endInstant: startInstant, durationText: undefined };
  }

  /** RDATE or EXDATE lines (several lines, comma lists) as entries of the series, each noted with its line. */
  private dateList(
    path: string,
    field: 'RecurrenceDates' | 'ExceptionDates',
    properties: IcalProperty[],
    timing: Timing,
  ): string[] {
    const entries: string[] = [];
    for (const property of properties) {
      if (property.type === 'period') {
        refuse(
          property,
          'VALUE=PERIOD cannot be represented: every occurrence of an item lasts the item’s duration; ' +
            'give start times only',
        );
      }
      if (entries.length === 0) this.note(`${path}.Recurrence.${field}`, property);
      for (const time of this.timesOf(property)) {
        this.note(`${path}.Recurrence.${field}[${entries.length}]`, property);
        if (entries.length + 1 === MAX_LIST) this.note(`${path}.Recurrence.${field}`, property);
        entries.push(formatIn(this.seriesInstant(time, property, timing), timing.zone));
      }
    }
    return entries;
  }

  /**
   * Overrides of one occurrence written differently (`RECURRENCE-ID:20260107T080000Z` and
   * `RECURRENCE-ID;TZID=Europe/Berlin:20260107T090000`) are versions too: the newest is kept, the others reported.
   * Overrides whose RECURRENCE-ID cannot be read are kept, so building them reports why.
   */
  private latestVersions(overrides: IcalComponent[], timing: Timing, uid: string): IcalComponent[] {
    const chosen = new Map<number, IcalComponent>();
    const unread = new Set<IcalComponent>();
    for (const override of overrides) {
      const recurrenceId = override.properties.find((property) => property.name === 'RECURRENCE-ID')!;
      let original: number;
      try {
        original = this.seriesInstant(this.singleTime(recurrenceId), recurrenceId, timing);
      } catch (error) {
        if (!(error instanceof Refusal)) throw error;
        unread.add(override);
        continue;
      }
      const other = chosen.get(original);
      chosen.set(original, other === undefined ? override : this.newerOf(other, override, uid));
    }
    const kept = new Set(chosen.values());
    return overrides.filter((override) => kept.has(override) || unread.has(override));
  }

  /** A RECURRENCE-ID override as an exception; null when it changes neither start nor end. */
  private exceptionOf(
    path: string,
    index: number,
    override: IcalComponent,
    timing: Timing,
  ): ImportedException | null {
    const props = propertiesByName(override);
    const recurrenceId = props.get('RECURRENCE-ID')![0];
    this.refuseRange(recurrenceId);
    for (const name of ['RRULE', 'RDATE', 'EXDATE', 'EXRULE']) {
      const line = props.get(name)?.[0];
      if (line !== undefined) {
        refuse(
          line,
          `an override (RECURRENCE-ID, line ${recurrenceId.line}) with its own ${name} cannot be represented; ` +
            'only the series (the VEVENT without RECURRENCE-ID) may recur',
        );
      }
    }
    const original = this.seriesInstant(this.singleTime(recurrenceId), recurrenceId, timing);
    const at = `${path}.Recurrence.Exceptions[${index}]`;
    const status = props.get('STATUS')?.[0];
    if (status !== undefined && status.raw.trim().toUpperCase() === 'CANCELLED') {
      this.noteException(at, override, recurrenceId, status, status);
      return { OriginalTime: formatIn(original, timing.zone), IsDeleted: true };
    }
    const overrideTiming = this.timingOf(override, props);
    if (
      overrideTiming.startInstant === original &&
      overrideTiming.endInstant - overrideTiming.startInstant === timing.endInstant - timing.startInstant
    ) {
      return null;
    }
    this.noteException(
      at,
      override,
      recurrenceId,
      overrideTiming.startProperty,
      overrideTiming.endProperty ?? overrideTiming.startProperty,
    );
    return {
      OriginalTime: formatIn(original, timing.zone),
      NewStartTime: formatIn(overrideTiming.startInstant, timing.zone),
      NewEndTime: formatIn(overrideTiming.endInstant, timing.zone),
    };
  }

  private noteException(
    at: string,
    override: IcalComponent,
    recurrenceId: IcalProperty,
    start: IcalProperty,
    end: IcalProperty,
  ): void {
    this.note(at, override);
    this.note(`${at}.OriginalTime`, recurrenceId);
    this.note(`${at}.IsDeleted`, start);
    this.note(`${at}.NewStartTime`, start);
    this.note(`${at}.NewStart`, start);
    this.note(`${at}.NewEndTime`, end);
    this.note(`${at}.NewEnd`, end);
  }

  private refuseRange(recurrenceId: IcalProperty): void {
    const range = paramOf(recurrenceId, 'range');
    if (range !== undefined && range.toUpperCase() === 'THISANDFUTURE') {
      refuse(
        recurrenceId,
        'RANGE=THISANDFUTURE cannot be represented: an exception changes one occurrence; split the series ' +
          'into two events instead',
      );
    }
  }

  /**
   * The instant a RECURRENCE-ID, RDATE or EXDATE names in a series. On an all-day series a date-time names its
   * calendar date (Exchange writes `RECURRENCE-ID;TZID=…:20200416T000000` on all-day series); on a timed series a
   * date names the occurrence on that date.
   */
  private seriesInstant(time: IcalTime, property: IcalProperty, timing: Timing): number {
    if (timing.start.kind === 'date') {
      const wall = time.kind === 'utc' ? zoneRules(timing.zone).wallOf(time.wallMs) : time.wallMs;
      return zoneRules(timing.zone).instantOf(Math.floor(wall / MS_PER_DAY) * MS_PER_DAY);
    }
    if (time.kind === 'date') {
      // Outlook writes `EXDATE:20200116` in a timed series: the occurrence on that local date, i.e. the series'
      // time of day on that date in DTSTART's zone.
      const start = timing.start;
      const timeOfDay =
        (start.kind === 'utc' ? zoneRules(timing.zone).wallOf(timing.startInstant) : start.wallMs) %
        MS_PER_DAY;
      return zoneRules(timing.zone).instantOf(time.wallMs + timeOfDay);
    }
    return this.instantOf(time);
  }

  private singleTime(property: IcalProperty): IcalTime {
    const times = this.timesOf(property);
    if (times.length !== 1) refuse(property, 'must have exactly one value');
    return times[0];
  }

  /** The DATE or DATE-TIME values of a property (§3.3.4, §3.3.5), checked strictly. */
  private timesOf(property: IcalProperty): IcalTime[] {
    const isDate = property.type === 'date';
    if (!isDate && property.type !== 'date-time') {
      refuse(property, `VALUE=${property.type.toUpperCase()} is not a date or date-time`);
    }
    const tzid = paramOf(property, 'tzid');
    const times: IcalTime[] = [];
    for (const raw of property.raw.split(',')) {
      const token = raw.trim();
      const bareDate = !isDate && OCCURRENCE_LISTS.has(property.name) ? DATE.exec(token) : null;
      if (bareDate !== null && wallOf(bareDate) !== undefined) {
        // A date without VALUE=DATE naming an occurrence (`EXDATE:20200116`): read as the date it is.
        times.push({ kind: 'date', wallMs: wallOf(bareDate)! });
        continue;
      }
      const match = (isDate ? DATE : DATE_TIME).exec(token);
      const wall = match === null ? undefined : wallOf(match);
      if (wall === undefined) {
        refuse(
          property,
          isDate
            ? `"${token}" is not a date (YYYYMMDD)`
            : DATE.exec(token) !== null && wallOf(DATE.exec(token)!) !== undefined
              ? `"${token}" is a date but the value type is DATE-TIME; write ${property.name};VALUE=DATE:${token}`
              : `"${token}" is not a date-time (YYYYMMDDTHHMMSS, Z for UTC)`,
        );
      }
      if (!isDate && match![7] !== '' && tzid !== undefined) {
        refuse(
          property,
          `"${token}" is a UTC time and cannot carry TZID (RFC 5545 §3.2.19); drop the Z or the TZID`,
        );
      }
      if (isDate) times.push({ kind: 'date', wallMs: wall });
      else if (match![7] !== '') times.push({ kind: 'utc', wallMs: wall });
      else if (tzid !== undefined)
        times.push({ kind: 'zoned', wallMs: wall, zone: this.zoneOf(tzid, property) });
      else times.push({ kind: 'floating', wallMs: wall });
    }
    return times;
  }

  private instantOf(time: IcalTime): number {
    switch (time.kind) {
      case 'utc':
        return time.wallMs;
      case 'zoned':
        return zoneRules(time.zone!).instantOf(time.wallMs);
      case 'date':
      case 'floating':
        return zoneRules(this.floatingZone()).instantOf(time.wallMs);
    }
  }

  /** Floating times and dates are read in the calendar's X-WR-TIMEZONE (what Google and Apple write), else UTC. */
  private floatingZone(): string {
    if (this.floating !== undefined) return this.floating;
    const property = this.calendar.properties.find((candidate) => candidate.name === 'X-WR-TIMEZONE');
    if (property === undefined) return (this.floating = 'UTC');
    const name = textOf(property);
    const zone = zoneFromName(name);
    if (zone === undefined) refuse(property, `"${name}" is neither an IANA nor a Windows zone id`);
    return (this.floating = zone);
  }

  private zoneOf(tzid: string, property: IcalProperty): string {
    const known = this.tzidZones.get(tzid);
    if (known !== undefined) return known;
    const vtimezone = this.vtimezones.get(tzid);
    const span = this.tzidSpans.get(tzid) ?? { from: 0, to: 0 };
    if (
      vtimezone !== undefined &&
      zoneFromName(tzid) === undefined &&
      ++this.offsetMatches > MAX_OFFSET_MATCHES
    ) {
      refuse(
        property,
        `TZID "${tzid}": more than ${MAX_OFFSET_MATCHES} VTIMEZONEs without a known zone name in one calendar; ` +
          'name the zones with IANA ids (or X-LIC-LOCATION)',
      );
    }
    const resolved = resolveTzid(
      tzid,
      vtimezone === undefined ? undefined : new ICAL.Component(vtimezone.jcal),
      span.from,
      span.to,
    );
    if (resolved === undefined) {
      refuse(
        property,
        vtimezone === undefined
          ? `TZID "${tzid}" is neither an IANA nor a Windows zone id, and the calendar has no VTIMEZONE for it`
          : `TZID "${tzid}": its VTIMEZONE (line ${vtimezone.line}) names no known zone, no IANA zone has ` +
              'its UTC offsets around these events, and its own rules are not two yearly rules a POSIX TZ string ' +
              "can hold (or they change within the events' span)",
      );
    }
    this.tzidZones.set(tzid, resolved.zone);
    return resolved.zone;
  }
}

interface Timing {
  start: IcalTime;
  startInstant: number;
  startProperty: IcalProperty;
  /** The item's zone: DTSTART's TZID, UTC for a UTC DTSTART, the floating zone for floating times and dates. */
  zone: string;
  endInstant: number;
  endProperty: IcalProperty | undefined;
  /** Recurrence.Duration for recurring items: DURATION as written, or whole days for all-day events. */
  durationText: string | undefined;
}

function propertiesByName(component: IcalComponent): Map<string, IcalProperty[]> {
  const byName = new Map<string, IcalProperty[]>();
  for (const property of component.properties) {
    const list = byName.get(property.name);
    if (list === undefined) byName.set(property.name, [property]);
    else list.push(property);
  }
  return byName;
}

/** Wall ms of a DATE or DATE-TIME match, undefined when a field is out of range. */
function wallOf(match: RegExpExecArray): number | undefined {
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  const hour = match[4] === undefined ? 0 : Number(match[4]);
  const minute = match[5] === undefined ? 0 : Number(match[5]);
  const second = match[6] === undefined ? 0 : Number(match[6]);
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  return daysFromCivil(year, month, day) * MS_PER_DAY + ((hour * 60 + minute) * 60 + second) * 1000;
}

function formatWall(wallMs: number): string {
  return new Date(wallMs).toISOString().slice(0, 19);
}

/** `2026-01-05T09:00:00+01:00` in the zone (`…Z` in UTC): the instant, readable as the local time it was given as. */
function formatIn(instant: number, zone: string): string {
  if (zone === 'UTC') return `${formatWall(instant)}Z`;
  const offset = zoneRules(zone).offsetAt(instant);
  // Local mean times of the 19th century have offsets with seconds, which ISO 8601 offsets cannot write.
  if (offset % 60_000 !== 0) return `${formatWall(instant)}Z`;
  const minutes = Math.abs(offset) / 60_000;
  const sign = offset < 0 ? '-' : '+';
  const hh = String(Math.floor(minutes / 60)).padStart(2, '0');
  const mm = String(minutes % 60).padStart(2, '0');
  return `${formatWall(instant + offset)}${sign}${hh}:${mm}`;
}

/** `A.B[2].C` → `A.B[2]` → `A.B` → `A`. */
function parentPath(path: string): string {
  const cut = Math.max(path.lastIndexOf('.'), path.lastIndexOf('['));
  return cut <= 0 ? '' : path.slice(0, cut);
}
