// iCalendar import (issues 16, 24): the calendar is mapped to schedule items by the pure importer
// (ical/ical-import.ts), in slices with the event loop free in between; each series (one UID: the master and its
// overrides) becomes a schedule of its own (docs/decisions.md). Every item goes through what POST /api/v1/Schedule
// runs — the request DTO's validation and the recurrence engine's check — and every field those name is mapped back
// to the calendar line it came from. An event they refuse is skipped and reported like the components the importer
// skips; the import is refused only when nothing importable remains. The schedules are then written in one
// transaction (all or nothing) with multi-row statements: a series imported before (same key) is updated in place.
import { createHash, randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { TimeSlicer } from '../common/time-slicer.js';
import { inTransaction, type TransactionalRecord } from '../database/transaction.js';
import { PlatformError, PlatformErrorCode, type FieldError } from '../errors/api-error.js';
import { compileDtoCached } from '../validation/compile-dto.js';
import type { IcalImportedSchedule, IcalSkippedComponent } from './dto/ical.dto.js';
import { ScheduleInput, type ScheduleDto } from './dto/schedule.dto.js';
import { Schedule, type ScheduleItem } from './entities/schedule.entity.js';
import {
  describeProblem,
  IcalImportError,
  importCalendarSliced,
  withoutItems,
  type ImportedCalendar,
} from './ical/ical-import.js';
import { UnsupportedCharsetError } from './ical/ical-content.js';
import { toItemEntities, toScheduleDto } from './schedule-mapping.js';
import { ScheduleError, ScheduleErrorCode } from './schedules.errors.js';
import { checkItems, insertItems, insertRows } from './schedules.service.js';
import { SeriesCache } from './series-cache.js';

const EXCEPTION_PATH = /ScheduleItems\[\d+\]\.Recurrence\.Exceptions\[\d+\]/g;
const ITEM_PATH = /^ScheduleItems\[(\d+)\]/;
/** Skipped components named in Message; all of them are in `Skipped`. */
const MAX_NAMED_IN_MESSAGE = 10;
/** Schedules per multi-row statement (INSERT of schedules, lookups by key). */
const SCHEDULE_CHUNK = 200;

export interface ImportResult {
  /** The schedule of the first imported series, as POST /api/v1/Schedule answers it (the answer's `Result`). */
  readonly schedule: ScheduleDto;
  /** Every schedule the import created or updated, in file order (the answer's `Schedules`). */
  readonly schedules: IcalImportedSchedule[];
  readonly message: string | null;
  /** The answer's `Skipped`. */
  readonly skipped: IcalSkippedComponent[];
}

@Injectable()
export class SchedulesImportService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly cache: SeriesCache,
  ) {}

  async importIcal(
    body: string | Buffer,
    charset?: string,
    idempotency?: TransactionalRecord,
  ): Promise<ImportResult> {
    // One budget for the whole import: the parse, the checks and the inserts (src/common/time-slicer.ts).
    const slicer = new TimeSlicer();
    let calendar: ImportedCalendar;
    try {
      calendar = await importCalendarSliced(body, charset, slicer);
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
    // Each item alone through the DTO and the engine, as one POST /api/v1/Schedule each would be.
    const validator = compileDtoCached(ScheduleInput, { source: 'body' });
    const refused = new Map<number, FieldError[]>();
    const unmatched = new Map<number, string[]>();
    for (const [index, item] of calendar.ScheduleItems.entries()) {
      await slicer.pause();
      const atIndex = (field: string) => field.replace(ITEM_PATH, `ScheduleItems[${index}]`);
      const checked = validator.validate({ ScheduleItems: [item] });
      if (!checked.ok) {
        refused.set(
          index,
          checked.errors.map((error) => ({ Field: atIndex(error.Field), Message: error.Message })),
        );
        continue;
      }
      try {
        const message = await checkItems(checked.value);
        const paths = message?.match(EXCEPTION_PATH);
        if (paths) unmatched.set(index, paths.map(atIndex));
      } catch (error) {
        if (
          error instanceof ScheduleError &&
          error.code === ScheduleErrorCode.ValidationFailed &&
          error.fieldErrors !== undefined
        ) {
          refused.set(
            index,
            error.fieldErrors.map((fieldError) => ({
              Field: atIndex(fieldError.Field),
              Message: fieldError.Message,
            })),
          );
          continue;
        }
        throw error;
      }
    }
    if (refused.size > 0) calendar = withoutRefusedItems(calendar, refused);
    const stored = calendar;
    const storedSeries = await this.storeRetryingOnce(stored, idempotency, slicer);
    // `ScheduleItems[i]…` of the answer: i is the series' place in `Schedules`.
    const kept = [...Array(stored.ScheduleItems.length + refused.size).keys()].filter((i) => !refused.has(i));
    const unmatchedPaths = kept.flatMap((original, index) =>
      (unmatched.get(original) ?? []).map((path) => {
        const renamed = path.replace(ITEM_PATH, `ScheduleItems[${index}]`);
        const at = stored.lineOf(renamed);
        return at === undefined ? renamed : `${renamed} (line ${at.line})`;
      }),
    );
    const message =
      unmatchedPaths.length === 0
        ? null
        : `Stored, but these exceptions match no occurrence and have no effect: ${unmatchedPaths.join(', ')}.`;
    const summary = summarise(stored);
    const combined = [summary, message].filter((part) => part !== null).join('. ');
    const skipped = stored.skipped.map(({ line, component, uid, reason }) => ({
      Line: line,
      Component: component,
      Uid: uid,
      Reason: reason,
    }));
    return {
      schedule: storedSeries.first,
      schedules: storedSeries.list,
      message: combined === '' ? null : combined,
      skipped,
    };
  }

  /**
   * Two imports of one calendar at once both find its series new on PostgreSQL; the second then fails on the unique
   * key once the first commits. Run again, it finds them and updates them.
   */
  private async storeRetryingOnce(
    calendar: ImportedCalendar,
    idempotency: TransactionalRecord | undefined,
    slicer: TimeSlicer,
  ): Promise<{ first: ScheduleDto; list: IcalImportedSchedule[] }> {
    try {
      return await this.store(calendar, idempotency, slicer);
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      return this.store(calendar, idempotency, slicer);
    }
  }

  /** One transaction: series imported before are updated (items replaced, version bumped), the others created. */
  private async store(
    calendar: ImportedCalendar,
    idempotency: TransactionalRecord | undefined,
    slicer: TimeSlicer,
  ): Promise<{ first: ScheduleDto; list: IcalImportedSchedule[] }> {
    const keys = uniqueKeys(calendar.sources.map((source) => source.key));
    const result = await inTransaction(
      this.dataSource,
      async (manager) => {
        const existing = await this.existingByKey(manager, keys, slicer);
        const createdAt = new Date();
        const newRows: Array<{ id: string; version: number; createdAt: Date; icalKey: string }> = [];
        const items: ScheduleItem[] = [];
        const list: IcalImportedSchedule[] = [];
        let firstItems: ScheduleItem[] = [];
        for (const [index, item] of calendar.ScheduleItems.entries()) {
          await slicer.pause();
          const known = existing.get(keys[index]);
          const id = known ?? randomUUID();
          if (known === undefined) newRows.push({ id, version: 1, createdAt, icalKey: keys[index] });
          const entities = toItemEntities(id, [item], randomUUID);
          const source = calendar.sources[index];
          if (index === 0) firstItems = entities;
          items.push(...entities);
          list.push({
            Id: id,
            Uid: source.uid,
            Line: source.line,
            Status: known === undefined ? 'Created' : 'Updated',
          });
        }
        const updated = [...existing.values()];
        await this.forEachChunk(updated, slicer, async (ids) => {
          const { match, param } = this.idMatch(ids, 'uuid');
          await manager.query(`DELETE FROM schedule_items WHERE schedule_id ${match}`, param);
          await manager.query(`UPDATE schedules SET version = version + 1 WHERE id ${match}`, param);
        });
        await this.forEachChunk(newRows, slicer, async (rows) => {
          await insertRows(manager, Schedule, rows);
        });
        await insertItems(manager, items, () => slicer.pause());
        return { list, firstItems, updated };
      },
      { record: idempotency },
    );
    for (const id of result.updated) this.cache.forget(id);
    const first = Object.assign(new Schedule(), { id: result.list[0].Id, items: result.firstItems });
    return { first: toScheduleDto(first), list: result.list };
  }

  /** Hashed key → schedule id of the series imported before. */
  private async existingByKey(
    manager: EntityManager,
    keys: readonly string[],
    slicer: TimeSlicer,
  ): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    const postgres = this.dataSource.options.type === 'postgres';
    await this.forEachChunk(keys, slicer, async (chunk) => {
      const { match, param } = this.idMatch(chunk, 'text');
      const rows = await manager.query<Array<{ id: string; ical_key: string }>>(
        `SELECT ${postgres ? 'id::text' : 'id'} AS id, ical_key FROM schedules WHERE ical_key ${match}`,
        param,
      );
      for (const row of rows) found.set(row.ical_key, row.id);
    });
    return found;
  }

  /** A list as one parameter: SQLite json_each, PostgreSQL an array (as ScheduleReader does). */
  private idMatch(values: readonly string[], type: 'uuid' | 'text'): { match: string; param: unknown[] } {
    return this.dataSource.options.type === 'postgres'
      ? { match: `= ANY($1::${type}[])`, param: [values] }
      : { match: 'IN (SELECT value FROM json_each(?))', param: [JSON.stringify(values)] };
  }

  private async forEachChunk<T>(
    values: readonly T[],
    slicer: TimeSlicer,
    work: (chunk: T[]) => Promise<void>,
  ): Promise<void> {
    for (let offset = 0; offset < values.length; offset += SCHEDULE_CHUNK) {
      await work(values.slice(offset, offset + SCHEDULE_CHUNK));
      await slicer.pause();
    }
  }
}

/** SHA-256 (hex) of each series' key; a key the file repeats gets its ordinal too, so each series has its own. */
function uniqueKeys(keys: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return keys.map((key) => {
    const count = seen.get(key) ?? 0;
    seen.set(key, count + 1);
    return createHash('sha256')
      .update(count === 0 ? key : `${key}\n#${count}`)
      .digest('hex');
  });
}

function isUniqueViolation(error: unknown): boolean {
  const driver = (error as { driverError?: { code?: unknown } } | null)?.driverError;
  const code = driver?.code ?? (error as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}

/**
 * The calendar without the items the DTO or the engine refused (by index, their errors), each reported as skipped.
 * Refuses the import (400 naming the lines) when no item would remain.
 */
function withoutRefusedItems(
  calendar: ImportedCalendar,
  refused: ReadonlyMap<number, readonly FieldError[]>,
): ImportedCalendar {
  if (refused.size >= calendar.ScheduleItems.length) {
    throw refusal(calendar, [...refused.values()].flat());
  }
  return withoutItems(
    calendar,
    new Map(
      [...refused].map(([index, errors]) => [
        index,
        atLines(errors, calendar)
          .map((mapped) => mapped.Message)
          .join('; '),
      ]),
    ),
  );
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
