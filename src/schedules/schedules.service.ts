// Schedule CRUD. Every write is validated by compiling it with the recurrence engine first and is
// stored in one transaction, so a rejected or failed write leaves nothing behind.
import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  DataSource,
  type EntityManager,
  type EntityTarget,
  type ObjectLiteral,
  type Repository,
} from 'typeorm';
import { TimeSlicer, WorkBudgetExceeded } from '../common/time-slicer.js';
import { AuditTrail, type AuditEntry } from '../audit/audit-trail.js';
import type { AuditSource } from '../audit/audit-source.js';
import { inTransaction, type TransactionalRecord } from '../database/transaction.js';
import type { FieldError } from '../errors/api-error.js';
import type { ScheduleDto, ScheduleInput } from './dto/schedule.dto.js';
import { Recurrence, RecurrenceException, Schedule, ScheduleItem } from './entities/schedule.entity.js';
import { compileSeries, RecurrenceError, type CompiledSeries } from './recurrence/index.js';
import { toItemEntities, toScheduleDto } from './schedule-mapping.js';
import { SCHEDULE_ID } from './schedule-id.param.js';
import { ScheduleReader } from './schedule-reader.js';
import { ScheduleError } from './schedules.errors.js';
import { SeriesCache } from './series-cache.js';

export interface WriteResult {
  schedule: ScheduleDto;
  /** Says which exceptions match no occurrence (they are stored but have no effect). */
  message: string | null;
}

export interface SchedulePage {
  /** The page's schedules as a JSON array (schedule-reader.ts). */
  resultJson: string;
  pageIndex: number;
  totalPages: number;
}

@Injectable()
export class SchedulesService {
  constructor(
    private readonly dataSource: DataSource,
    @InjectRepository(Schedule) private readonly schedules: Repository<Schedule>,
    private readonly cache: SeriesCache,
    private readonly reader: ScheduleReader,
    private readonly audit: AuditTrail,
  ) {}

  /** `idempotency`: the request's Idempotency-Key record, stored with its answer in the schedule's transaction. */
  async create(
    input: ScheduleInput,
    by: AuditSource,
    idempotency?: TransactionalRecord<WriteResult>,
  ): Promise<WriteResult> {
    const message = await checkItems(input);
    const schedule = Object.assign(new Schedule(), { id: randomUUID(), version: 1, createdAt: new Date() });
    schedule.items = toItemEntities(schedule.id, input.ScheduleItems, randomUUID);
    return inTransaction(
      this.dataSource,
      async (manager) => {
        await manager.insert(Schedule, {
          id: schedule.id,
          version: schedule.version,
          createdAt: schedule.createdAt,
        });
        await insertItems(manager, schedule.items);
        await this.audit.record(manager, scheduleChange(by, 'create', schedule));
        return { schedule: toScheduleDto(schedule), message };
      },
      { record: idempotency },
    );
  }

  async get(id: string): Promise<ScheduleDto> {
    const [schedule] = await this.reader.findMany([normalizeId(id)]);
    if (schedule === undefined) throw ScheduleError.notFound(id);
    return schedule;
  }

  /** Operation 2: a page in creation order, read in O(page) and as JSON (schedule-reader.ts). */
  async list(pageIndex: number, pageSize: number): Promise<SchedulePage> {
    const { total, json } = await this.reader.page((pageIndex - 1) * pageSize, pageSize);
    return { resultJson: json, pageIndex, totalPages: Math.ceil(total / pageSize) };
  }

  async replace(id: string, input: ScheduleInput, by: AuditSource): Promise<WriteResult> {
    const message = await checkItems(input);
    const schedule = await this.dataSource.transaction(async (manager) => {
      const repository = manager.getRepository(Schedule);
      const existing = await repository.findOne({ where: { id: normalizeId(id) } });
      if (!existing) throw ScheduleError.notFound(id);
      // Children cascade from their items; the new item set replaces the old one whole.
      await manager.getRepository(ScheduleItem).delete({ scheduleId: existing.id });
      existing.version += 1;
      existing.items = toItemEntities(existing.id, input.ScheduleItems, randomUUID);
      await repository.update({ id: existing.id }, { version: existing.version });
      await insertItems(manager, existing.items);
      await this.audit.record(manager, scheduleChange(by, 'replace', existing));
      return existing;
    });
    this.cache.forget(schedule.id);
    return { schedule: toScheduleDto(schedule), message };
  }

  async remove(id: string, by: AuditSource): Promise<void> {
    const scheduleId = normalizeId(id);
    await inTransaction(this.dataSource, async (manager) => {
      const result = await manager.delete(Schedule, { id: scheduleId });
      if (!result.affected) throw ScheduleError.notFound(id);
      await this.audit.record(manager, {
        by,
        action: 'schedule.delete',
        resourceType: 'Schedule',
        resourceId: scheduleId,
      });
    });
    this.cache.forget(scheduleId);
  }
}

function scheduleChange(by: AuditSource, verb: 'create' | 'replace', schedule: Schedule): AuditEntry {
  return {
    by,
    action: `schedule.${verb}`,
    resourceType: 'Schedule',
    resourceId: schedule.id,
    detail: { items: schedule.items.length, version: schedule.version },
  };
}

/**
 * Rows per INSERT statement: well under SQLite's 32,766 bound parameters with the widest table (10 columns), and
 * ~2–4 ms of TypeORM's statement building each, so an import's inserts leave the event loop free in between.
 */
const INSERT_CHUNK = 100;

/**
 * Inserts the items, their recurrences and exceptions as multi-row INSERTs per table. TypeORM's cascading save()
 * writes (and on some drivers re-reads) one row per statement: ~1,100 rows of an imported calendar took 400–980 ms
 * that way, 40–80 ms like this.
 */
export async function insertItems(
  manager: EntityManager,
  items: readonly ScheduleItem[],
  pause?: () => Promise<void>,
): Promise<void> {
  const recurrences = items.flatMap((item) => item.recurrences);
  const exceptions = recurrences.flatMap((recurrence) => recurrence.exceptions);
  const columnsOnly = <T extends object>(rows: readonly T[], omit: keyof T) =>
    rows.map((row) => {
      const copy: Partial<T> = { ...row };
      delete copy[omit];
      return copy;
    });
  const batches: Array<[typeof ScheduleItem | typeof Recurrence | typeof RecurrenceException, object[]]> = [
    [ScheduleItem, columnsOnly(items, 'recurrences')],
    [Recurrence, columnsOnly(recurrences, 'exceptions')],
    [RecurrenceException, exceptions],
  ];
  for (const [entity, rows] of batches) {
    for (let offset = 0; offset < rows.length; offset += INSERT_CHUNK) {
      await insertRows(manager, entity, rows.slice(offset, offset + INSERT_CHUNK));
      await pause?.();
    }
  }
}

/**
 * A multi-row INSERT of plain rows. `updateEntity(false)`: TypeORM would otherwise read every inserted row back
 * for its defaults (a SELECT per statement on SQLite, and half the statement's ~10 ms for 200 rows), which nothing
 * here uses — the rows are copies.
 */
export async function insertRows(
  manager: EntityManager,
  entity: EntityTarget<ObjectLiteral>,
  rows: readonly object[],
): Promise<void> {
  await manager.createQueryBuilder().insert().into(entity).values(rows).updateEntity(false).execute();
}

export function normalizeId(id: string): string {
  if (!SCHEDULE_ID.test(id)) {
    throw ScheduleError.invalid([{ Field: 'id', Message: `id must be a GUID, got "${id.slice(0, 60)}"` }]);
  }
  return id.toLowerCase();
}

/**
 * Spans of the recurrence check a caller allows past the first of each rule (`checkItems`): a rule that occurs
 * again is found in its first span; one that matches rarely (Feb 29 on a Monday) takes a dozen, one that never
 * does all 200. Counted, not timed, so the same calendar gets the same answer on a busy machine.
 */
export interface CheckAllowance {
  spans: number;
}

/**
 * Compiles every item (all errors at once, with their paths); returns the unmatched-exception message. Throws
 * WorkBudgetExceeded once `allowance` is spent.
 */
export async function checkItems(
  input: ScheduleInput,
  slicer = new TimeSlicer(),
  allowance?: CheckAllowance,
): Promise<string | null> {
  const errors: FieldError[] = [];
  const unmatched: string[] = [];
  for (const [index, item] of input.ScheduleItems.entries()) {
    try {
      const series = compileSeries(item);
      if (!(await recursAfterFirst(series, slicer, allowance))) {
        errors.push({
          Field: `ScheduleItems[${index}].Recurrence.Pattern`,
          Message:
            'Recurrence.Pattern can never occur after the first occurrence (e.g. BYMONTH=2;BYMONTHDAY=30); ' +
            'give COUNT=1 or no recurrence for a single occurrence',
        });
        continue;
      }
      for (const exception of series.unmatchedExceptions) {
        unmatched.push(`ScheduleItems[${index}].Recurrence.Exceptions[${exception}]`);
      }
    } catch (error) {
      if (!(error instanceof RecurrenceError)) throw error;
      errors.push({
        Field: `ScheduleItems[${index}].${error.field}`,
        Message: `${error.field} ${error.message}`,
      });
    }
  }
  if (errors.length > 0) throw ScheduleError.invalid(errors);
  return unmatched.length === 0
    ? null
    : `Stored, but these exceptions match no occurrence and have no effect: ${unmatched.join(', ')}.`;
}

const YEAR_MS = 366 * 86_400_000;
/** Years per slice of the recurrence check; the event loop runs between slices. */
const CHECK_SLICE_YEARS = 2;

/**
 * Whether a rule can occur after DTSTART. Its day pattern repeats within 400 years (the Gregorian cycle) times
 * INTERVAL, so that span is scanned, in slices of 2 × INTERVAL years with the event loop free in between (a
 * rule that never matches costs a scan of the whole span, ~60 ms for a sub-daily one, so it must not run at once).
 */
async function recursAfterFirst(
  series: CompiledSeries,
  slicer: TimeSlicer,
  allowance: CheckAllowance | undefined,
): Promise<boolean> {
  // Known at compile time (also with UNTIL, which the scan below cannot decide): no scan, no turn of the loop.
  if (series.neverRecurs) return false;
  const slice = CHECK_SLICE_YEARS * series.interval * YEAR_MS;
  const horizon = series.first + 400 * series.interval * YEAR_MS + YEAR_MS;
  for (let after = series.first; after < horizon; after += slice) {
    const found = series.generatesBetween(
      after === series.first ? after : after - 1,
      Math.min(horizon, after + slice),
    );
    if (found !== false) return true;
    if (allowance !== undefined && --allowance.spans < 0) throw new WorkBudgetExceeded(0);
    // A turn for the event loop only once the slice's budget is spent: a rule that never matches is known at once
    // (day-satisfiability.ts), and 200 turns each for 20,000 of them would cost seconds of turns alone.
    await slicer.pause();
  }
  return false;
}
