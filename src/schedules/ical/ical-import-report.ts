// The import's report: what it refused (problems with the calendar as a whole) and what it skipped (components
// left out, each with the line and reason), and the shapes of its result.
import type { IcalComponent, IcalProperty } from './ical-content.js';
import { uidOf } from './ical-versions.js';

/** Enough to fix a file in one go; a file with 10,000 bad lines does not need 10,000 messages. */
export const MAX_PROBLEMS = 100;

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
   * the UID and the start as read (an instant in UTC, or the date of an all-day event); for overrides without
   * master the UID and the RECURRENCE-ID as written.
   */
  readonly key: string;
  /** For a series that shares its UID: its key with the start as written (how earlier imports stored it). */
  readonly writtenKey?: string;
  /** The schedule id this service's export wrote on the VEVENT (`X-PLATFORM-SCHEDULE-ID`), lower-case. */
  readonly scheduleId?: string;
  /** A date-only (all-day) event: DTSTART;VALUE=DATE (stored as `schedule_items.all_day`). */
  readonly allDay: boolean;
  /** The master's SEQUENCE (0 when absent), stored with the UID so the export writes both back. */
  readonly sequence: number;
}

export interface ImportedCalendar {
  readonly ScheduleItems: ImportedItem[];
  readonly sources: readonly ItemSource[];
  /** Components left out, in file order. */
  readonly skipped: readonly SkippedComponent[];
  /** The line behind a ScheduleInput field path (`ScheduleItems[2].Recurrence.Pattern`), or its nearest parent's. */
  lineOf(field: string): LineRef | undefined;
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
export class Refusal extends Error {
  constructor(
    readonly line: number,
    readonly property: string,
    message: string,
  ) {
    super(message);
  }
}

export function refuse(at: IcalProperty | IcalComponent, message: string): never {
  throw new Refusal(at.line, at.name, message);
}

/** Collects the refusals and skipped components of one import. */
export class ImportReport {
  /** Problems with the calendar as a whole: any of them refuses the import. */
  readonly problems: IcalProblem[] = [];
  readonly skipped: SkippedComponent[] = [];
  /** The refusals behind `skipped`: the answer's errors when nothing importable remains. */
  readonly skippedProblems: IcalProblem[] = [];

  /** A refusal of the calendar as a whole. */
  attempt<T>(work: () => T): T | undefined {
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
  skipOnRefusal<T>(component: IcalComponent, uid: string | null, work: () => T): T | undefined {
    try {
      return work();
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      this.skip(component, uid, { line: error.line, property: error.property, message: error.message });
      return undefined;
    }
  }

  skip(component: IcalComponent, uid: string | null, problem: IcalProblem): void {
    this.skipped.push({
      line: component.line,
      component: component.name,
      uid,
      reason: describeProblem(problem),
    });
    this.skippedProblems.push(problem);
  }

  /**
   * A line of a kept component that was changed or left out (a SUMMARY cut to the limit, a malformed line nothing
   * stores): reported in `skipped` with the line's own line and name; named among the errors too when the import is
   * refused (nothing importable remains).
   */
  skipLine(uid: string | null, problem: IcalProblem): void {
    this.skipped.push({
      line: problem.line,
      component: problem.property,
      uid,
      reason: describeProblem(problem),
    });
    this.skippedProblems.push(problem);
  }

  /** A component with a line ical.js could not parse is skipped (named by its first broken line). */
  skipIfBroken(component: IcalComponent): boolean {
    const broken = component.broken[0];
    if (broken === undefined) return false;
    this.skip(component, uidOf(component) ?? null, {
      line: broken.line,
      property: broken.property,
      message: broken.message,
    });
    return true;
  }
}
