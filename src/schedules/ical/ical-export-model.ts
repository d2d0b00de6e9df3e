// What the iCalendar export reads (a schedule as the API shows it) and the error it throws.
import type { ScheduleItemInput } from '../recurrence/series-compiler.js';

/**
 * With its only occurrence deleted, an event is DTSTART excluded by EXDATE; ical.js applies EXDATE only to events
 * with a rule, so this one-instance rule (DTSTART itself) goes with it. The set stays empty per §3.8.5.3.
 */
export const EMPTY_SET_RULE = 'RRULE:FREQ=DAILY;COUNT=1';

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
  /** The UID an import read (`schedules.ical_uid`); absent: derived from `Id` (ical-identity.ts). */
  readonly Uid?: string | null;
  /** The SEQUENCE an import read (`schedules.ical_sequence`); written when above 0. */
  readonly Sequence?: number | null;
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
