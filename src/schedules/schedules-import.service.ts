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
import { DEFAULT_SLICE_MS, TimeSlicer, WorkBudgetExceeded } from '../common/time-slicer.js';
import { inTransaction, mapRecord, type TransactionalRecord } from '../database/transaction.js';
import type { AuditSource } from '../audit/audit-source.js';
import { AuditTrail, type AuditEntry } from '../audit/audit-trail.js';
import { PlatformError, PlatformErrorCode, type FieldError } from '../errors/api-error.js';
import { compileDtoCached } from '../validation/compile-dto.js';
import type { IcalImportedSchedule, IcalSkippedComponent, IcalSkippedCount } from './dto/ical.dto.js';
import { ScheduleInput, type ScheduleDto } from './dto/schedule.dto.js';
import { Schedule, type ScheduleItem } from './entities/schedule.entity.js';
import {
  describeProblem,
  IcalImportError,
  type IcalProblem,
  importCalendarSliced,
  withoutItems,
  type ImportedCalendar,
} from './ical/ical-import.js';
import { UnsupportedCharsetError } from './ical/ical-content.js';
import { toItemEntities, toScheduleDto } from './schedule-mapping.js';
import { ScheduleError, ScheduleErrorCode } from './schedules.errors.js';
import { checkItems, insertItems, insertRows } from './schedules.service.js';
import { scheduleIdOfDerivedUid } from './ical/ical-identity.js';
import { SeriesCache } from './series-cache.js';

const EXCEPTION_PATH = /ScheduleItems\[\d+\]\.Recurrence\.Exceptions\[\d+\]/g;
const ITEM_PATH = /^ScheduleItems\[(\d+)\]/;
/** Skipped components named in Message; all of them are in `Skipped`. */
const MAX_NAMED_IN_MESSAGE = 10;
/**
 * Skipped components listed one by one in the answer, and errors in a 400 (issue 31: 200,000 skipped components
 * answered 28.7 MB, and an Idempotency-Key stored it); the rest are counted by kind.
 */
export const MAX_SKIPPED_LISTED = 100;
/** Component kinds counted apart in `SkippedCounts`; names are the caller's (X-FOO1, X-FOO2, …), so bounded too. */
const MAX_SKIPPED_KINDS = 20;
/**
 * The import's work budget (issue 31 item 3): a base plus an allowance per KiB of calendar, so the work one request
 * can cause grows with what it may store. It is time, so it must leave room for a machine busy with other work: the
 * 10,000-event e2e calendar passed 2 s + 10 ms a KiB on a 2-core machine at load 10; rules that cost far more per
 * byte stop with a 400 instead of holding a core (beyond ~1.7 MB the route deadline is the tighter bound).
 */
export const IMPORT_WORK_BASE_MS = 5_000;
export const IMPORT_WORK_MS_PER_KIB = 50;

export function importWorkBudgetMs(bytes: number): number {
  return IMPORT_WORK_BASE_MS + Math.ceil(bytes / 1024) * IMPORT_WORK_MS_PER_KIB;
}

/** Schedules per multi-row statement (INSERT of schedules, lookups by key). */
const SCHEDULE_CHUNK = 200;

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

/** The 400 of a calendar refused as a whole: one field error per line named. */
export function invalidCalendar(problems: readonly IcalProblem[]): ScheduleError {
  return ScheduleError.invalid(
    problems.map((problem) => ({ Field: `line ${problem.line}`, Message: describeProblem(problem) })),
  );
}

@Injectable()
export class SchedulesImportService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly cache: SeriesCache,
    private readonly audit: AuditTrail,
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
    try {
      return await this.importSliced(body, by, charset, idempotency, slicer);
    } catch (error) {
      if (!(error instanceof WorkBudgetExceeded)) throw error;
      throw ScheduleError.invalid([
        {
          Field: 'body',
          Message:
            `the calendar takes more work than its size allows (${budgetMs.toLocaleString('en')} ms for ` +
            `${Math.ceil(body.length / 1024).toLocaleString('en')} KiB); nothing was stored. Its rules are ` +
            'unusually costly to check (e.g. sub-daily rules that rarely match): split it or simplify them',
        },
      ]);
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
        const message = await checkItems(checked.value, slicer);
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
    const result = await inTransaction(
      this.dataSource,
      async (manager) => {
        const existing = await this.existingByKey(manager, keys, slicer);
        await this.addDerivedMatches(manager, calendar, keys, existing);
        const createdAt = new Date();
        const newRows: NewImportedRow[] = [];
        const updatedRows: ImportedIdentity[] = [];
        const items: ScheduleItem[] = [];
        const list: IcalImportedSchedule[] = [];
        let firstItems: ScheduleItem[] = [];
        for (const [index, item] of calendar.ScheduleItems.entries()) {
          await slicer.pause();
          const known = existing.get(keys[index]);
          const id = known ?? randomUUID();
          const source = calendar.sources[index];
          const identity = { icalKey: keys[index], icalUid: source.uid, icalSequence: source.sequence };
          if (known === undefined) newRows.push({ id, version: 1, createdAt, ...identity });
          else updatedRows.push({ id, ...identity });
          const entities = toItemEntities(id, [item], randomUUID);
          if (index === 0) firstItems = entities;
          items.push(...entities);
          list.push({
            Id: id,
            Uid: source.uid,
            Line: source.line,
            Status: known === undefined ? 'Created' : 'Updated',
          });
        }
        const updated = updatedRows.map((row) => row.id);
        await this.forEachChunk(updatedRows, slicer, async (rows) => {
          const { match, param } = this.idMatch(
            rows.map((row) => row.id),
            'uuid',
          );
          await manager.query(`DELETE FROM schedule_items WHERE schedule_id ${match}`, param);
          await this.updateIdentities(manager, rows);
        });
        await this.forEachChunk(newRows, slicer, async (rows) => {
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

  /** Schedule id → the UID and SEQUENCE an import stored for it (schedules written as JSON have none). */
  async icalIdentities(
    ids: readonly string[],
  ): Promise<Map<string, { uid: string; sequence: number | null }>> {
    const found = new Map<string, { uid: string; sequence: number | null }>();
    const postgres = this.dataSource.options.type === 'postgres';
    for (let offset = 0; offset < ids.length; offset += SCHEDULE_CHUNK) {
      const { match, param } = this.idMatch(ids.slice(offset, offset + SCHEDULE_CHUNK), 'uuid');
      const rows = await this.dataSource.query<Array<{ id: string; uid: string; sequence: number | null }>>(
        `SELECT ${postgres ? 'id::text' : 'id'} AS id, ical_uid AS uid, ical_sequence AS sequence FROM schedules
         WHERE id ${match} AND ical_uid IS NOT NULL`,
        param,
      );
      for (const row of rows) found.set(row.id.toLowerCase(), { uid: row.uid, sequence: row.sequence });
    }
    return found;
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

  /**
   * Series whose UID is one the export derived from a schedule id (ical-identity.ts) and which no key found: that
   * schedule, when it exists, was never imported and has one item (a schedule written as JSON, exported and imported
   * again), is updated; the first series with the UID takes it. A schedule with more items is left alone, as
   * replacing them by one series would drop the others.
   */
  private async addDerivedMatches(
    manager: EntityManager,
    calendar: ImportedCalendar,
    keys: readonly string[],
    existing: Map<string, string>,
  ): Promise<void> {
    const wanted = new Map<string, string>();
    calendar.sources.forEach((source, index) => {
      const id = scheduleIdOfDerivedUid(source.uid);
      if (id !== undefined && !existing.has(keys[index]) && !wanted.has(id)) wanted.set(id, keys[index]);
    });
    if (wanted.size === 0) return;
    const postgres = this.dataSource.options.type === 'postgres';
    const { match, param } = this.idMatch([...wanted.keys()], 'uuid');
    const rows = await manager.query<Array<{ id: string }>>(
      `SELECT ${postgres ? 's.id::text' : 's.id'} AS id FROM schedules s WHERE s.id ${match} AND s.ical_key IS NULL
         AND (SELECT COUNT(*) FROM schedule_items i WHERE i.schedule_id = s.id) = 1`,
      param,
    );
    for (const row of rows) existing.set(wanted.get(row.id.toLowerCase())!, row.id);
  }

  /** Version bumped and the series' key, UID and SEQUENCE stored, one statement per chunk. */
  private async updateIdentities(manager: EntityManager, rows: readonly ImportedIdentity[]): Promise<void> {
    if (this.dataSource.options.type === 'postgres') {
      await manager.query(
        `UPDATE schedules s SET version = s.version + 1, ical_key = r.ical_key, ical_uid = r.ical_uid,
           ical_sequence = r.ical_sequence
         FROM unnest($1::uuid[], $2::text[], $3::text[], $4::int[]) AS r(id, ical_key, ical_uid, ical_sequence)
         WHERE s.id = r.id`,
        [
          rows.map((row) => row.id),
          rows.map((row) => row.icalKey),
          rows.map((row) => row.icalUid),
          rows.map((row) => row.icalSequence),
        ],
      );
      return;
    }
    await manager.query(
      `UPDATE schedules SET version = version + 1, ical_key = r.ical_key, ical_uid = r.ical_uid,
         ical_sequence = r.ical_sequence
       FROM (SELECT json_extract(value, '$.id') AS id, json_extract(value, '$.icalKey') AS ical_key,
               json_extract(value, '$.icalUid') AS ical_uid, json_extract(value, '$.icalSequence') AS ical_sequence
             FROM json_each(?)) AS r
       WHERE schedules.id = r.id`,
      [JSON.stringify(rows)],
    );
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

/** What an import stores of a series: its hashed key (the lookup), its UID and SEQUENCE (written by the export). */
interface ImportedIdentity {
  readonly id: string;
  readonly icalKey: string;
  readonly icalUid: string;
  readonly icalSequence: number;
}

interface NewImportedRow extends ImportedIdentity {
  readonly version: number;
  readonly createdAt: Date;
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

/** Nothing importable remains: the errors, then what was skipped before (400; the first MAX_SKIPPED_LISTED). */
function refusal(calendar: ImportedCalendar, errors: readonly FieldError[]): ScheduleError {
  const all = [
    ...atLines(errors.slice(0, MAX_SKIPPED_LISTED), calendar),
    ...calendar.skipped
      .slice(0, MAX_SKIPPED_LISTED)
      .map((entry) => ({ Field: `line ${entry.line}`, Message: entry.reason })),
  ];
  const total = errors.length + calendar.skipped.length;
  const listed = all.slice(0, MAX_SKIPPED_LISTED);
  if (total > listed.length) {
    listed.push({ Field: 'body', Message: `and ${total - listed.length} more problems of the same kinds` });
  }
  return ScheduleError.invalid(listed);
}

/** `SkippedCounts`: per component kind, most first; kinds past MAX_SKIPPED_KINDS together as `(other)`. */
export function countsByComponent(skipped: readonly { component: string }[]): IcalSkippedCount[] {
  const counts = new Map<string, number>();
  for (const { component } of skipped) {
    if (counts.has(component) || counts.size < MAX_SKIPPED_KINDS)
      counts.set(component, (counts.get(component) ?? 0) + 1);
    else counts.set('(other)', (counts.get('(other)') ?? 0) + 1);
  }
  return [...counts]
    .map(([Component, Count]) => ({ Component, Count }))
    .sort((a, b) => b.Count - a.Count || (a.Component < b.Component ? -1 : 1));
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

function importChange(by: AuditSource, schedule: IcalImportedSchedule): AuditEntry {
  return {
    by,
    action: 'schedule.import',
    resourceType: 'Schedule',
    resourceId: schedule.Id,
    detail: { status: schedule.Status, line: schedule.Line },
  };
}
