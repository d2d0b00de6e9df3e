// iCalendar import (issue 16): the calendar is mapped to a ScheduleInput by the pure importer (ical/ical-import.ts),
// then goes through exactly what POST /api/v1/Schedule runs: the request DTO's validation and SchedulesService.create
// (recurrence engine, one transaction). Every field those name is mapped back to the calendar line it came from.
import { Injectable } from '@nestjs/common';
import type { TransactionalRecord } from '../database/transaction.js';
import { PlatformError, PlatformErrorCode, type FieldError } from '../errors/api-error.js';
import { compileDtoCached } from '../validation/compile-dto.js';
import { ScheduleInput } from './dto/schedule.dto.js';
import {
  describeProblem,
  IcalImportError,
  importCalendar,
  type ImportedCalendar,
} from './ical/ical-import.js';
import { UnsupportedCharsetError } from './ical/ical-content.js';
import { ScheduleError, ScheduleErrorCode } from './schedules.errors.js';
import { SchedulesService, type WriteResult } from './schedules.service.js';

const EXCEPTION_PATH = /ScheduleItems\[\d+\]\.Recurrence\.Exceptions\[\d+\]/g;

@Injectable()
export class SchedulesImportService {
  constructor(private readonly schedules: SchedulesService) {}

  async importIcal(
    body: string | Buffer,
    charset?: string,
    idempotency?: TransactionalRecord,
  ): Promise<WriteResult> {
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
    const checked = compileDtoCached(ScheduleInput, { source: 'body' }).validate({
      ScheduleItems: calendar.ScheduleItems,
    });
    if (!checked.ok) throw ScheduleError.invalid(atLines(checked.errors, calendar));
    let result: WriteResult;
    try {
      result = await this.schedules.create(checked.value, idempotency);
    } catch (error) {
      if (
        error instanceof ScheduleError &&
        error.code === ScheduleErrorCode.ValidationFailed &&
        error.fieldErrors !== undefined
      ) {
        throw ScheduleError.invalid(atLines(error.fieldErrors, calendar));
      }
      throw error;
    }
    const message = result.message?.replace(EXCEPTION_PATH, (path) => {
      const at = calendar.lineOf(path);
      return at === undefined ? path : `${path} (line ${at.line})`;
    });
    return { schedule: result.schedule, message: message ?? null };
  }
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
