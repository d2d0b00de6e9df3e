// Reads schedules in their documented representation without TypeORM entities: operation 2's pages and the
// iCalendar export's schedules by id (up to 1,000 in one request). A set of schedules is read in two plain
// statements (items with their recurrence, exceptions), each with one parameter however many ids — a JSON array
// (SQLite json_each) or a uuid[] (PostgreSQL ANY), as SeriesCache.versions does — and assembled once. TypeORM's
// find() with the three relations took ~800 ms for 1,000 schedules (bench/ical-export.mjs) and 60–80 ms for a page
// of 500 (bench/schedules-scale.mjs), nearly all of it building and hydrating entities.
//
// A page is found without counting or walking the table: its total is schedule_stats.schedule_count plus its deltas
// (kept by triggers, migrations 1763780001250 and 1763780001600; src/database/counter-deltas.ts) and its first schedule is reached from the nearer end of the (created_at, id)
// index on SQLite, or from the position directory's nearest key on PostgreSQL (src/database/position-directory.ts,
// as SCIM's user list does). On SQLite the whole page is read in one synchronous section of the connection (one
// snapshot, a few ms for 500 schedules); on PostgreSQL the position and the total come from one statement.
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type BetterSqlite3 from 'better-sqlite3';
import type { Logger } from 'pino';
import { DataSource } from 'typeorm';
import { TimeSlicer } from '../common/time-slicer.js';
import { ROOT_LOGGER } from '../core/core.module.js';
import { currentCounter, DeltaFolder, type CounterTables } from '../database/counter-deltas.js';
import { namedQuery } from '../database/pg-named-query.js';
import { DIRECTORY_STEP, loadPositionKeys, PositionDirectory } from '../database/position-directory.js';
import { withSqliteConnection } from '../database/sqlite-transactions.js';
import { traceStatement } from '../tracing/database-tracing.js';
import type {
  RecurrenceDto,
  RecurrenceExceptionDto,
  ScheduleDto,
  ScheduleItemDto,
} from './dto/schedule.dto.js';

interface ItemRow {
  /** Null only in a page's row of a schedule without items. */
  id: string | null;
  schedule_id: string;
  position: number | string;
  name: string | null;
  start_at: string;
  end_at: string | null;
  start_time_zone: string | null;
  all_day: boolean | number | string;
  r_id: string | null;
  start_time: string | null;
  end_time: string | null;
  offset_duration: string | null;
  end_count: number | string | null;
  recurrence_type: string | null;
  interval_text: string | null;
  duration: string | null;
  pattern: string | null;
  recurrence_dates: string | null;
  exception_dates: string | null;
}

interface ExceptionRow {
  id: string;
  recurrence_id: string;
  position: number | string;
  original_time: string | null;
  is_deleted: boolean | number | string;
  new_start: string | null;
  new_end: string | null;
  new_start_time: string | null;
  new_end_time: string | null;
}

export interface SchedulePageJson {
  /** Every schedule, counted (schedule_stats). */
  total: number;
  /** The page's schedules as a JSON array, in the documented representation. */
  json: string;
}

/** The statements of a set of schedules, with `{ids}` standing for the dialect's "is one of the ids" test. */
const ITEMS = `SELECT {text:i.id} AS id, {text:i.schedule_id} AS schedule_id, i.position, i.name, i.start_at, i.end_at,
       i.start_time_zone, i.all_day, {text:r.id} AS r_id, r.start_time, r.end_time, r.offset_duration, r.end_count,
       r.recurrence_type, r.interval_text, r.duration, r.pattern, r.recurrence_dates, r.exception_dates
  FROM schedule_items i LEFT JOIN recurrences r ON r.schedule_item_id = i.id
 WHERE i.schedule_id {ids}
 ORDER BY i.position`;
const EXCEPTIONS = `SELECT {text:e.id} AS id, {text:e.recurrence_id} AS recurrence_id, e.position, e.original_time,
       e.is_deleted, e.new_start, e.new_end, e.new_start_time, e.new_end_time
  FROM recurrence_exceptions e
  JOIN recurrences r ON r.id = e.recurrence_id
  JOIN schedule_items i ON i.id = r.schedule_item_id
 WHERE i.schedule_id {ids}
 ORDER BY e.position`;
const EXISTING = 'SELECT {text:id} AS id FROM schedules WHERE id {ids}';

function forDialect(sql: string, postgres: boolean): string {
  return sql
    .replaceAll(/\{text:([a-z_.]+)\}/g, postgres ? '$1::text' : '$1')
    .replaceAll('{ids}', postgres ? '= ANY($1::uuid[])' : 'IN (SELECT value FROM json_each(?))');
}

/** schedule_stats and its deltas (src/database/counter-deltas.ts). */
export const SCHEDULE_COUNTER: CounterTables = {
  stats: 'schedule_stats',
  deltas: 'schedule_stats_deltas',
  columns: ['schedule_count', 'order_generation', 'change_generation'],
};
/** The current schedule count and generations, as a derived table (base row + deltas, one snapshot). */
export const SCHEDULE_STATS = currentCounter(SCHEDULE_COUNTER);

/** The total, read from schedule_stats (a COUNT only if the row is missing). */
const TOTAL = `COALESCE((SELECT s.schedule_count FROM ${SCHEDULE_STATS} s WHERE s.id = 1), (SELECT COUNT(*) FROM schedules))`;

/**
 * SQLite: a page of schedules (`{page}`: the ids and keys at some list positions) with their items and recurrences,
 * in list order, a schedule without items as one row with a null item; and the page's exceptions. Driven by the
 * page's ids from the index rather than a JSON list of them (json_each costs ~1 µs an element). CROSS JOIN keeps
 * SQLite's join order: with LIMIT/OFFSET bound as parameters its planner otherwise scanned every exception.
 */
const SQLITE_PAGE_ITEMS = `SELECT p.id AS page_id, p.created_at AS page_created, ${ITEMS.slice('SELECT '.length, ITEMS.indexOf(' FROM '))}
  FROM {page} p
  LEFT JOIN schedule_items i ON i.schedule_id = p.id
  LEFT JOIN recurrences r ON r.schedule_item_id = i.id
 ORDER BY p.created_at, p.id, i.position`;
const SQLITE_PAGE_EXCEPTIONS = `${EXCEPTIONS.slice(0, EXCEPTIONS.indexOf(' FROM '))}
  FROM {page} p
  CROSS JOIN schedule_items i ON i.schedule_id = p.id
  CROSS JOIN recurrences r ON r.schedule_item_id = i.id
  CROSS JOIN recurrence_exceptions e ON e.recurrence_id = r.id
 ORDER BY e.position`;
/** The positions [offset, offset + limit) walked from the first schedule, or (the last part) from the last one. */
const SQLITE_FORWARD = '(SELECT created_at, id FROM schedules ORDER BY created_at, id LIMIT ? OFFSET ?)';
const SQLITE_BACKWARD =
  '(SELECT created_at, id FROM schedules ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?)';
/** The next positions after a key already read: a range of the index, no walk. */
const SQLITE_AFTER_KEY =
  '(SELECT created_at, id FROM schedules WHERE (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT ?)';

/**
 * PostgreSQL: a schedule (`p.id`) in its documented representation, built by the database (json keeps the keys
 * in the documented order; jsonb would sort them). The service sends it on as text, so a page costs the event
 * loop no rows to parse, no objects and no serialisation.
 */
const PG_SCHEDULE_JSON = `json_build_object('Id', p.id, 'ScheduleItems', COALESCE((
  SELECT json_agg(json_build_object(
           'Id', i.id, 'Name', i.name, 'Start', i.start_at, 'End', i.end_at, 'StartTimeZone', i.start_time_zone,
           'AllDay', i.all_day, 'Recurrence', CASE WHEN r.id IS NULL THEN NULL ELSE json_build_object(
             'Id', r.id, 'StartTime', r.start_time, 'EndTime', r.end_time, 'Offset', r.offset_duration,
             'EndCount', r.end_count, 'RecurrenceType', r.recurrence_type, 'Interval', r.interval_text,
             'Duration', r.duration, 'Pattern', r.pattern,
             'Exceptions', COALESCE((
               SELECT json_agg(json_build_object(
                        'Id', e.id, 'RecurrenceId', e.recurrence_id, 'OriginalTime', e.original_time,
                        'IsDeleted', e.is_deleted, 'NewStart', e.new_start, 'NewEnd', e.new_end,
                        'NewStartTime', e.new_start_time, 'NewEndTime', e.new_end_time) ORDER BY e.position)
                 FROM recurrence_exceptions e WHERE e.recurrence_id = r.id), '[]'),
             'RecurrenceDates', COALESCE(r.recurrence_dates::json, '[]'),
             'ExceptionDates', COALESCE(r.exception_dates::json, '[]')) END)
         ORDER BY i.position)
    FROM schedule_items i LEFT JOIN recurrences r ON r.schedule_item_id = i.id
   WHERE i.schedule_id = p.id), '[]'))`;

/** PostgreSQL: the total, the order generation and the page (`{page}`: its keys) as a JSON array, one snapshot. */
const PG_PAGE = `SELECT s.schedule_count::text AS total, s.order_generation::text AS generation,
       (SELECT COALESCE(json_agg(${PG_SCHEDULE_JSON} ORDER BY p.created_at, p.id), '[]')::text FROM {page} p) AS page
  FROM ${SCHEDULE_STATS} s
 WHERE s.id = 1`;
/** The page at offset $1 of $2 schedules. */
const PG_BY_OFFSET = '(SELECT created_at, id FROM schedules ORDER BY created_at, id OFFSET $1 LIMIT $2)';
/** The page $3 entries past the key ($1, $2) if the order generation is still $5 (the directory's); else empty. */
const PG_FROM_KEY = `(SELECT created_at, id FROM schedules
   WHERE s.order_generation::text = $5 AND (created_at, id) >= (CAST($1 AS timestamptz), CAST($2 AS uuid))
   ORDER BY created_at, id OFFSET $3 LIMIT $4)`;

interface PgPageRow {
  total: string;
  generation: string;
  page: string;
}

/** Pages with more schedules than this give the event loop a turn between reading and serialising (SQLite). */
const YIELD_AFTER_SCHEDULES = 50;
/** Schedules read per synchronous stretch of a SQLite page (~1 ms). */
const READ_CHUNK = 100;

const jsonList = (value: string | null): string[] => (value === null ? [] : (JSON.parse(value) as string[]));

@Injectable()
export class ScheduleReader implements OnModuleInit, OnModuleDestroy {
  private readonly postgres: boolean;
  /** PostgreSQL only: on SQLite the walk from the nearer end is ~1 ms, and a build would block the event loop. */
  private readonly positions: PositionDirectory | undefined;
  private readonly statements = new Map<string, BetterSqlite3.Statement>();
  /** PostgreSQL only: folds schedule_stats' deltas (SQLite's triggers update the base row itself). */
  readonly folder: DeltaFolder | undefined;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.postgres = dataSource.options.type === 'postgres';
    this.positions = this.postgres
      ? new PositionDirectory(
          (step) => loadPositionKeys(this.dataSource, 'schedules', SCHEDULE_STATS, step),
          (error) => logger.warn({ err: error }, 'Schedules: building the position directory failed'),
        )
      : undefined;
    this.folder = this.postgres
      ? new DeltaFolder(dataSource, SCHEDULE_COUNTER, (error) =>
          logger.warn({ err: error }, 'Schedules: folding the count deltas failed'),
        )
      : undefined;
  }

  onModuleInit(): void {
    this.folder?.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.folder?.stop();
    await this.positions?.idle();
  }

  /**
   * The schedules with these (lower-case) ids, in the order asked; ids without a schedule are left out. SQLite reads
   * them READ_CHUNK at a time, holding the connection (one snapshot), and lets `slicer` give the event loop a turn
   * between chunks: 1,000 schedules in one go held it ~15 ms.
   */
  async findMany(ids: readonly string[], slicer = new TimeSlicer()): Promise<ScheduleDto[]> {
    if (ids.length === 0) return [];
    if (!this.postgres) {
      return withSqliteConnection(this.dataSource, async () => {
        const schedules: ScheduleDto[] = [];
        for (let offset = 0; offset < ids.length; offset += READ_CHUNK) {
          if (offset > 0) await slicer.pause();
          const chunk = ids.slice(offset, offset + READ_CHUNK);
          const param = JSON.stringify(chunk);
          const found = new Set(this.sqlite<{ id: string }>(EXISTING, param).map((row) => row.id));
          schedules.push(
            ...this.assemble(
              chunk.filter((id) => found.has(id)),
              this.sqlite<ItemRow>(ITEMS, param),
              this.sqlite<ExceptionRow>(EXCEPTIONS, param),
            ),
          );
        }
        return schedules;
      });
    }
    const [existing, items, exceptions] = await Promise.all([
      this.pg<{ id: string }>(EXISTING, ids),
      this.pg<ItemRow>(ITEMS, ids),
      this.pg<ExceptionRow>(EXCEPTIONS, ids),
    ]);
    const found = new Set(existing.map((row) => row.id));
    return this.assemble(
      ids.filter((id) => found.has(id)),
      items,
      exceptions,
    );
  }

  /**
   * The schedules at list positions [offset, offset + limit) in creation order, as JSON, and how many there are.
   * SQLite reads the rows in one synchronous section, then gives the event loop a turn before the JSON is made.
   */
  async page(offset: number, limit: number): Promise<SchedulePageJson> {
    if (this.postgres) {
      const [row] = await this.pgPage(offset, limit);
      return { total: Number(row?.total ?? 0), json: row?.page ?? '[]' };
    }
    // The connection is held for the whole page (one snapshot: no writer gets in), but the page is read in chunks
    // of READ_CHUNK schedules with a turn of the event loop between them, so a page of 500 is a few ~1 ms stretches
    // among other requests' work instead of one of several ms.
    const { total, schedules } = await withSqliteConnection(this.dataSource, async () => {
      const total = Number(this.sqlite<{ total: number }>(`SELECT ${TOTAL} AS total`)[0].total);
      const schedules: ScheduleDto[] = [];
      const end = Math.min(offset + limit, total);
      let last: { created: string; id: string } | undefined;
      for (let from = offset; from < end; from += READ_CHUNK) {
        if (from > offset) await yieldToEventLoop();
        const count = Math.min(READ_CHUNK, end - from);
        const fromEnd = total - from - count;
        // The first chunk is found from the nearer end of the index; the next ones follow its last key.
        const [page, params]: [string, Array<string | number>] =
          last !== undefined
            ? [SQLITE_AFTER_KEY, [last.created, last.id, count]]
            : from <= fromEnd
              ? [SQLITE_FORWARD, [count, from]]
              : [SQLITE_BACKWARD, [count, fromEnd]];
        const rows = this.sqlite<ItemRow & { page_id: string; page_created: string }>(
          SQLITE_PAGE_ITEMS.replace('{page}', page),
          ...params,
        );
        const exceptions = this.sqlite<ExceptionRow>(
          SQLITE_PAGE_EXCEPTIONS.replace('{page}', page),
          ...params,
        );
        if (rows.length === 0) break;
        const tail = rows[rows.length - 1];
        last = { created: tail.page_created, id: tail.page_id };
        schedules.push(...this.assemble([...new Set(rows.map((row) => row.page_id))], rows, exceptions));
      }
      return { total, schedules };
    });
    if (schedules.length > YIELD_AFTER_SCHEDULES) await yieldToEventLoop();
    return { total, json: JSON.stringify(schedules) };
  }

  /**
   * The page with the total (one statement, one snapshot). From DIRECTORY_STEP on, the page starts at the
   * position directory's nearest key when the directory is exact for the generation the same statement reads; a
   * stale one starts a rebuild and the page is read by OFFSET (an index-only walk).
   */
  private async pgPage(offset: number, limit: number): Promise<PgPageRow[]> {
    const start = offset >= DIRECTORY_STEP ? this.positions?.current(offset) : undefined;
    const byOffset = () =>
      namedQuery<PgPageRow>(this.dataSource, 'schedules_page', PG_PAGE.replace('{page}', PG_BY_OFFSET), [
        offset,
        limit,
      ]);
    if (start === undefined) {
      if (offset >= DIRECTORY_STEP) this.positions?.rebuild(); // none built yet
      return byOffset();
    }
    const rows = await namedQuery<PgPageRow>(
      this.dataSource,
      'schedules_page_from_key',
      PG_PAGE.replace('{page}', PG_FROM_KEY),
      [start.key.created, start.key.id, start.skip, limit, start.generation],
    );
    const seen = rows[0]?.generation;
    if (seen === undefined || seen === start.generation) return rows;
    this.positions?.startOf(offset, seen); // stale: starts a rebuild (one a second at most)
    return byOffset();
  }

  private pg<Row>(sql: string, ids: readonly string[]): Promise<Row[]> {
    return this.dataSource.query<Row[]>(forDialect(sql, true), [ids]);
  }

  /** A statement on the better-sqlite3 connection itself (the caller holds it: withSqliteConnection). */
  private sqlite<Row>(sql: string, ...params: ReadonlyArray<string | number>): Row[] {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      // Sound: the better-sqlite3 driver's databaseConnection is its Database (TypeORM 1).
      const database = (this.dataSource.driver as unknown as { databaseConnection: BetterSqlite3.Database })
        .databaseConnection;
      statement = database.prepare(forDialect(sql, false));
      this.statements.set(sql, statement);
    }
    const prepared = statement;
    return traceStatement('sqlite', prepared.source, () => prepared.all(...params) as Row[]);
  }

  /** The schedules `ids` (in that order) from their item and exception rows (each list in position order). */
  private assemble(
    ids: readonly string[],
    itemRows: ItemRow[],
    exceptionRows: ExceptionRow[],
  ): ScheduleDto[] {
    const exceptions = new Map<string, RecurrenceExceptionDto[]>();
    for (const row of exceptionRows) {
      let list = exceptions.get(row.recurrence_id);
      if (list === undefined) exceptions.set(row.recurrence_id, (list = []));
      list.push({
        Id: row.id,
        RecurrenceId: row.recurrence_id,
        OriginalTime: row.original_time,
        IsDeleted: row.is_deleted === true || Number(row.is_deleted) === 1,
        NewStart: row.new_start,
        NewEnd: row.new_end,
        NewStartTime: row.new_start_time,
        NewEndTime: row.new_end_time,
      });
    }
    const items = new Map<string, ScheduleItemDto[]>();
    for (const row of itemRows) {
      const id = row.id;
      if (id === null) continue; // a page's schedule without items
      let list = items.get(row.schedule_id);
      if (list === undefined) items.set(row.schedule_id, (list = []));
      list.push(toItem(row, id, exceptions));
    }
    return ids.map((id) => ({ Id: id, ScheduleItems: items.get(id) ?? [] }));
  }
}

function toItem(
  row: ItemRow,
  id: string,
  exceptions: Map<string, RecurrenceExceptionDto[]>,
): ScheduleItemDto {
  const recurrence: RecurrenceDto | null =
    row.r_id === null
      ? null
      : {
          Id: row.r_id,
          StartTime: row.start_time,
          EndTime: row.end_time,
          Offset: row.offset_duration,
          EndCount: row.end_count === null ? null : Number(row.end_count),
          RecurrenceType: row.recurrence_type,
          Interval: row.interval_text,
          Duration: row.duration,
          Pattern: row.pattern,
          Exceptions: exceptions.get(row.r_id) ?? [],
          RecurrenceDates: jsonList(row.recurrence_dates),
          ExceptionDates: jsonList(row.exception_dates),
        };
  return {
    Id: id,
    Name: row.name,
    Start: row.start_at,
    End: row.end_at,
    StartTimeZone: row.start_time_zone,
    AllDay: row.all_day === true || Number(row.all_day) === 1,
    Recurrence: recurrence,
  };
}
