// iCalendar import (issues 16, 24): the calendar is mapped to a ScheduleInput by the pure importer
// (ical/ical-import.ts), then goes through exactly what POST /api/v1/Schedule runs: the request DTO's validation and
// SchedulesService.create (recurrence engine, one transaction). Every field those name is mapped back to the
// calendar line it came from. An event they refuse is skipped and reported like the components the importer skips;
// the import is refused only when nothing importable remains.
import { Injectable } from '@nestjs/common';
import type { TransactionalRecord } from '../database/transaction.js';
import { PlatformError, PlatformErrorCode, type FieldError } from '../errors/api-error.js';
import { compileDtoCached } from '../validation/compile-dto.js';
import type { IcalSkippedComponent } from './dto/ical.dto.js';
import { ScheduleInput } from './dto/schedule.dto.js';
import {
  describeProblem,
  IcalImportError,
  importCalendar,
  withoutItems,
  type ImportedCalendar,
} from './ical/ical-import.js';
import { UnsupportedCharsetError } from './ical/ical-content.js';
import { ScheduleError, ScheduleErrorCode } from './schedules.errors.js';
import { SchedulesService, type WriteResult } from './schedules.service.js';

const EXCEPTION_PATH = /ScheduleItems\[\d+\]\.Recurrence\.Exceptions\[\d+\]/g;
const ITEM_PATH = /^ScheduleItems\[(\d+)\]/;
/** Skipped components named in Message; all of them are in `Skipped`. */
const MAX_NAMED_IN_MESSAGE = 10;

export interface ImportResult extends WriteResult {
  /** The answer's `Skipped`. */
  readonly skipped: IcalSkippedComponent[];
}

@Injectable()
export class SchedulesImportService {
  constructor(private readonly schedules: SchedulesService) {}

  async importIcal(
    body: string | Buffer,
    charset?: string,
    idempotency?: TransactionalRecord,
  ): Promise<ImportResult> {
    let calendar: ImportedCalendar;
    try {
      calendar = importCalendar(body, charset);
    } catch (error) {
      if (error instanceof UnsupportedCharsetError) {
        throw new PlatformError(
          PlatformErrorCode.UnsupportedMediaType,
          `${error.message} (or a charset this service decodes, e.g. iso-8859-1 or windows-1252).`,
        );
      }
      if (!(error instanceof IcalImportError)) throw error;
      throw ScheduleError.invalid(
        error.problems.map((problem) => ({
          Field: `line ${problem.line}`,
          Message: describeProblem(problem),
        })),
      );
    }
    let result: WriteResult | undefined;
    // Each round drops at least one item, so this ends; usually the first round stores the schedule.
    while (result === undefined) {
      const checked = compileDtoCached(ScheduleInput, { source: 'body' }).validate({
        ScheduleItems: calendar.ScheduleItems,
      });
      if (!checked.ok) {
        calendar = withoutRefusedItems(calendar, checked.errors);
        continue;
      }
      try {
        result = await this.schedules.create(checked.value, idempotency);
      } catch (error) {
        if (
          error instanceof ScheduleError &&
          error.code === ScheduleErrorCode.ValidationFailed &&
          error.fieldErrors !== undefined
        ) {
          calendar = withoutRefusedItems(calendar, error.fieldErrors);
          continue;
        }
        throw error;
      }
    }
    const stored = calendar;
    const message = result.message?.replace(EXCEPTION_PATH, (path) => {
      const at = stored.lineOf(path);
      return at === undefined ? path : `${path} (line ${at.line})`;
    });
    const summary = summarise(stored);
    const combined = [summary, message].filter((part) => part !== null && part !== undefined).join('. ');
    const skipped = stored.skipped.map(({ line, component, uid, reason }) => ({
      Line: line,
      Component: component,
      Uid: uid,
      Reason: reason,
    }));
    return { schedule: result.schedule, message: combined === '' ? null : combined, skipped };
  }
}

/**
 * The calendar without the items the DTO or the engine refused, each reported as skipped. Refuses the import (400
 * naming the lines) when an error names no item, or when no item would remain.
 */
function withoutRefusedItems(calendar: ImportedCalendar, errors: readonly FieldError[]): ImportedCalendar {
  const reasons = new Map<number, string[]>();
  for (const error of atLines(errors, calendar).map((mapped, index) => ({
    mapped,
    field: errors[index].Field,
  }))) {
    const index = ITEM_PATH.exec(error.field)?.[1];
    if (index === undefined) throw refusal(calendar, errors);
    const list = reasons.get(Number(index)) ?? [];
    list.push(error.mapped.Message);
    reasons.set(Number(index), list);
  }
  if (reasons.size >= calendar.ScheduleItems.length) throw refusal(calendar, errors);
  return withoutItems(calendar, new Map([...reasons].map(([index, list]) => [index, list.join('; ')])));
}

/** Nothing importable remains: the errors, then what was skipped before (400). */
function refusal(calendar: ImportedCalendar, errors: readonly FieldError[]): ScheduleError {
  return ScheduleError.invalid([
    ...atLines(errors, calendar),
    ...calendar.skipped.map((entry) => ({ Field: `line ${entry.line}`, Message: entry.reason })),
  ]);
}

/** `Imported 3 events; skipped 2: line 37: VTODO: …; line 60: …`; null when nothing was skipped. */
function summarise(calendar: ImportedCalendar): string | null {
  const skipped = calendar.skipped;
  if (skipped.length === 0) return null;
  const count = calendar.ScheduleItems.length;
  const named = skipped.slice(0, MAX_NAMED_IN_MESSAGE).map((entry) => entry.reason);
  const more =
    skipped.length > MAX_NAMED_IN_MESSAGE
      ? `; and ${skipped.length - MAX_NAMED_IN_MESSAGE} more (see Skipped)`
      : '';
  return `Imported ${count} event${count === 1 ? '' : 's'}; skipped ${skipped.length}: ${named.join('; ')}${more}`;
}

/** `ScheduleItems[0].Recurrence.Pattern` → `line 14`, the message naming the property and the field. */
function atLines(errors: readonly FieldError[], calendar: ImportedCalendar): FieldError[] {
  return errors.map((error) => {
    const at = calendar.lineOf(error.Field);
    if (at === undefined) return { Field: error.Field, Message: error.Message };
    return {
      Field: `line ${at.line}`,
      Message: `${describeProblem({ line: at.line, property: at.property, message: error.Message })} (${error.Field})`,
    };
  });
}
