// iCalendar import: the calendar is mapped to schedule items by the pure importer
// (ical/ical-import.ts), in slices with the event loop free in between; each series (one UID: the master and its
// overrides) becomes a schedule of its own (docs/decisions.md). Every item goes through what POST /api/v1/Schedule
// runs — the request DTO's validation and the recurrence engine's check — and every field those name is mapped back
// to the calendar line it came from. An event they refuse is skipped and reported like the components the importer
// skips; the import is refused only when nothing importable remains. The schedules are then written in one
// transaction (all or nothing) with multi-row statements: a series imported before (same key) is updated in place.
import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DEFAULT_SLICE_MS, TimeSlicer, WorkBudgetExceeded } from '../common/time-slicer.js';
import { isUniqueViolation } from '../database/constraint-errors.js';
import { inTransaction, mapRecord, type TransactionalRecord } from '../database/transaction.js';
import type { AuditSource } from '../audit/audit-source.js';
import { AuditTrail, type AuditEntry } from '../audit/audit-trail.js';
import { PlatformError, PlatformErrorCode, type FieldError } from '../errors/api-error.js';
import { compileDtoCached } from '../validation/compile-dto.js';
import type { IcalImportedSchedule, IcalSkippedComponent, IcalSkippedCount } from './dto/ical.dto.js';
import { ScheduleInput, type ScheduleDto } from './dto/schedule.dto.js';
import { Schedule, type ScheduleItem } from './entities/schedule.entity.js';
import {
  countsByComponent,
  invalidCalendar,
  MAX_SKIPPED_LISTED,
  summarise,
  withoutRefusedItems,
} from './ical-import-answer.js';
import {
  forEachChunk,
  IcalIdentityStore,
  type ImportedIdentity,
  type NewImportedRow,
  seriesPerSchedule,
  uniqueKeys,
} from './ical-identity-store.js';
import { ImportAdmission } from './import-admission.js';
import { IcalImportError, importCalendarSliced, type ImportedCalendar } from './ical/ical-import.js';
import { UnsupportedCharsetError } from './ical/ical-content.js';
import { toItemEntities, toScheduleDto } from './schedule-mapping.js';
import { ScheduleError, ScheduleErrorCode } from './schedules.errors.js';
import { type CheckAllowance, checkItems, insertItems, insertRows } from './schedules.service.js';
import { SeriesCache } from './series-cache.js';

const EXCEPTION_PATH = /ScheduleItems\[\d+\]\.Recurrence\.Exceptions\[\d+\]/g;
const ITEM_PATH = /^ScheduleItems\[(\d+)\]/;
/**
 * The import's work budget: a base plus an allowance per KiB of calendar, so the work one request
 * can cause grows with what it may store. It is time, so it must leave room for a machine busy with other work: the
 * 10,000-event e2e calendar passed 2 s + 10 ms a KiB on a 2-core machine at load 10; rules that cost far more per
 * byte stop with a 400 instead of holding a core (beyond ~1.7 MB the route deadline is the tighter bound).
 */
export const IMPORT_WORK_BASE_MS = 5_000;
export const IMPORT_WORK_MS_PER_KIB = 50;

/**
 * Spans (2 × INTERVAL years) the write-time check of one import's rules may scan past the first of each rule:
 * ~0.3 ms each for a sub-daily rule, so ~3 s of work; a calendar of rules that occur again needs none.
 */
export const IMPORT_CHECK_SPANS = 10_000;

export function importWorkBudgetMs(bytes: number): number {
  return IMPORT_WORK_BASE_MS + Math.ceil(bytes / 1024) * IMPORT_WORK_MS_PER_KIB;
}

export interface ImportResult {
  /** The schedule of the first imported series, as POST /api/v1/Schedule answers it (the answer's `Result`). */
  readonly schedule: ScheduleDto;
  /** Every schedule the import created or updated, in file order (the answer's `Schedules`). */
  readonly schedules: IcalImportedSchedule[];
  readonly message: string | null;
  /** The answer's `Skipped` (the first MAX_SKIPPED_LISTED), `SkippedTotal` and `SkippedCounts`. */
  readonly skipped: IcalSkippedComponent[];
  readonly skippedTotal: number;
  readonly skippedCounts: IcalSkippedCount[];
}

/** What the import's transaction stored: the first series' schedule and every series' line of `Schedules`. */
interface StoredSeries {
  readonly first: ScheduleDto;
  readonly list: IcalImportedSchedule[];
}

@Injectable()
export class SchedulesImportService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly cache: SeriesCache,
    private readonly audit: AuditTrail,
    private readonly identities: IcalIdentityStore,
    private readonly admission: ImportAdmission,
  ) {}

  /** `cancelled`: true once nobody waits for the answer (time-out, client gone): the work then stops. */
  async importIcal(
    body: string | Buffer,
    by: AuditSource,
    charset?: string,
    idempotency?: TransactionalRecord<ImportResult>,
    cancelled?: () => boolean,
  ): Promise<ImportResult> {
    // One slicer for the whole import: the parse, the checks and the inserts (src/common/time-slicer.ts), and one
    // work budget over all of them.
    const budgetMs = importWorkBudgetMs(body.length);
    const slicer = new TimeSlicer(DEFAULT_SLICE_MS, { workBudgetMs: budgetMs, cancelled });
    // Refused (503) while other imports hold the instance's share of memory for imports.
    const release = this.admission.admit(body.length);
    try {
      return await this.importSliced(body, by, charset, idempotency, slicer);
    } catch (error) {
      if (!(error instanceof WorkBudgetExceeded)) throw error;
      throw ScheduleError.invalid([
        {
          Field: 'body',
          Message:
            (error.budgetMs === 0
              ? `the calendar's rules take more checking than one import allows (${IMPORT_CHECK_SPANS.toLocaleString('en')} ` +
                'spans of two years past the first of each rule)'
              : `the calendar takes more work than its size allows (${budgetMs.toLocaleString('en')} ms for ` +
                `${Math.ceil(body.length / 1024).toLocaleString('en')} KiB)`) +
            '; nothing was stored. Its rules are unusually costly to check (e.g. sub-daily rules that rarely ' +
            'match): split it or simplify them',
        },
      ]);
    } finally {
      release();
    }
  }

  private async importSliced(
    body: string | Buffer,
    by: AuditSource,
    charset: string | undefined,
    idempotency: TransactionalRecord<ImportResult> | undefined,
    slicer: TimeSlicer,
  ): Promise<ImportResult> {
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
      throw invalidCalendar(error.problems);
    }
    // Each item alone through the DTO and the engine, as one POST /api/v1/Schedule each would be.
    const validator = compileDtoCached(ScheduleInput, { source: 'body' });
    const refused = new Map<number, FieldError[]>();
    const allowance: CheckAllowance = { spans: IMPORT_CHECK_SPANS };
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
        const message = await checkItems(checked.value, slicer, allowance);
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
    const skipped = stored.skipped.slice(0, MAX_SKIPPED_LISTED).map(({ line, component, uid, reason }) => ({
      Line: line,
      Component: component,
      Uid: uid,
      Reason: reason,
    }));
    const resultOf = (series: StoredSeries): ImportResult => ({
      schedule: series.first,
      schedules: series.list,
      message: combined === '' ? null : combined,
      skipped,
      skippedTotal: stored.skipped.length,
      skippedCounts: countsByComponent(stored.skipped),
    });
    return resultOf(await this.storeRetryingOnce(stored, by, mapRecord(idempotency, resultOf), slicer));
  }

  /**
   * Two imports of one calendar at once both find its series new on PostgreSQL; the second then fails on the unique
   * key once the first commits. Run again, it finds them and updates them.
   */
  private async storeRetryingOnce(
    calendar: ImportedCalendar,
    by: AuditSource,
    idempotency: TransactionalRecord<StoredSeries> | undefined,
    slicer: TimeSlicer,
  ): Promise<StoredSeries> {
    try {
      return await this.store(calendar, by, idempotency, slicer);
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      return this.store(calendar, by, idempotency, slicer);
    }
  }

  /** One transaction: series imported before are updated (items replaced, version bumped), the others created. */
  private async store(
    calendar: ImportedCalendar,
    by: AuditSource,
    idempotency: TransactionalRecord<StoredSeries> | undefined,
    slicer: TimeSlicer,
  ): Promise<StoredSeries> {
    const keys = uniqueKeys(calendar.sources.map((source) => source.key));
    const writtenKeys = uniqueKeys(calendar.sources.map((source) => source.writtenKey ?? source.key));
    const result = await inTransaction(
      this.dataSource,
      async (manager) => {
        const existing = await this.identities.existingSeries(manager, calendar, keys, writtenKeys, slicer);
        const createdAt = new Date();
        const newRows: NewImportedRow[] = [];
        const updatedRows: ImportedIdentity[] = [];
        const items: ScheduleItem[] = [];
        const list: IcalImportedSchedule[] = [];
        const firstItems: ScheduleItem[] = [];
        // Series that name one schedule (its export) are its items, in file order; it is listed once.
        const series = seriesPerSchedule(existing);
        const given = new Map<string, number>();
        for (const [index, item] of calendar.ScheduleItems.entries()) {
          await slicer.pause();
          const known = existing.get(keys[index]);
          const id = known ?? randomUUID();
          const position = given.get(id) ?? 0;
          given.set(id, position + 1);
          const entities = toItemEntities(id, [item], randomUUID).map((entity) =>
            Object.assign(entity, { position }),
          );
          if (list.length === 0 || list[0].Id === id) firstItems.push(...entities);
          items.push(...entities);
          if (position > 0) continue;
          const source = calendar.sources[index];
          const icalKey = (series.get(id) ?? 1) > 1 ? null : keys[index];
          const identity = { icalKey, icalUid: source.uid, icalSequence: source.sequence };
          if (known === undefined) newRows.push({ id, version: 1, createdAt, ...identity });
          else updatedRows.push({ id, ...identity });
          list.push({
            Id: id,
            Uid: source.uid,
            Line: source.line,
            Status: known === undefined ? 'Created' : 'Updated',
          });
        }
        const updated = updatedRows.map((row) => row.id);
        await this.identities.updateSeries(manager, updatedRows, slicer);
        await forEachChunk(newRows, slicer, async (rows) => {
          await insertRows(manager, Schedule, rows);
        });
        await insertItems(manager, items, () => slicer.pause());
        // One event per schedule created or updated, so "who changed schedule X" finds imports too.
        await this.audit.recordAll(
          manager,
          list.map((schedule) => importChange(by, schedule)),
        );
        const first = Object.assign(new Schedule(), { id: list[0].Id, items: firstItems });
        return { first: toScheduleDto(first), list, updated };
      },
      { record: idempotency },
    );
    for (const id of result.updated) this.cache.forget(id);
    return result;
  }
}

function importChange(by: AuditSource, schedule: IcalImportedSchedule): AuditEntry {
  return {
    by,
    action: 'schedule.import',
    resourceType: 'Schedule',
    resourceId: schedule.Id,
    detail: { status: schedule.Status, line: schedule.Line },
  };
}
