// Compiled recurrence series per schedule, parsed once and reused (parsing costs more than answering), never
// served stale, also when a schedule is changed through another service instance on the same database.
//
// Every lookup first reads schedule_stats.change_generation (one row plus its deltas), which every statement updating
// or deleting schedules bumps in its own transaction (a trigger, migrations 1763780001250 and 1763780001600; a
// replace bumps the schedule's version). An entry last known current at the generation just read cannot be stale: no schedule has changed since.
// Only the others — entries checked before a change, and ids not cached — have their versions read (one indexed
// query per 1,000 ids on SQLite, 5,000 on PostgreSQL), and every entry found current is marked with the generation
// read *before* its version, so a change committed in between only makes the next lookup check again. Operation 1
// on 10,000 cached schedules thus costs one primary-key read instead of 10,000 (~10 ms on SQLite, more on
// PostgreSQL).
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { TimeSlicer } from '../common/time-slicer.js';
import type { RequestContext } from '../logging/request-context.js';
import { Schedule } from './entities/schedule.entity.js';
import {
  compileSeries,
  resolveTimeZone,
  zoneRules,
  type CompiledSeries,
  type ZoneRules,
} from './recurrence/index.js';
import type { ScheduleDto } from './dto/schedule.dto.js';
import { SCHEDULE_STATS, ScheduleReader } from './schedule-reader.js';

/**
 * A COUNT series is counted in steps of this many occurrences, giving the event loop a turn once a slice is spent:
 * bounded by time, not by a number of occurrences, because code not yet optimised by V8 runs ~10× slower (measured:
 * the first 50,000-occurrence slice of a fresh process took 37 ms, later ones 2.7 ms).
 */
const COUNT_STEP = 1_000;

export interface CompiledItem {
  itemId: string;
  series: CompiledSeries;
  /** An all-day item's zone, whose local days the listing names; undefined for timed items. */
  allDayZone?: ZoneRules;
}

interface Entry {
  version: number;
  items: readonly CompiledItem[];
  /** The change generation at which this entry was last known current (see above). */
  checked: string | undefined;
}

/** Schedules loaded and compiled per step on a cache miss (SQLite reads them 100 at a time, ScheduleReader). */
const LOAD_CHUNK = 500;
/**
 * Ids per version lookup: ~1 ms of SQLite each (5,000 at once held the event loop ~5–25 ms); PostgreSQL's run off
 * the loop, so fewer round trips win there.
 */
const VERSION_SLICE = { sqlite: 1_000, postgres: 5_000 };
const MAX_ENTRIES = 200_000;

@Injectable()
export class SeriesCache {
  private readonly entries = new Map<string, Entry>();

  private readonly postgres: boolean;

  constructor(
    @InjectRepository(Schedule) private readonly schedules: Repository<Schedule>,
    private readonly reader: ScheduleReader,
  ) {
    this.postgres = schedules.manager.connection.options.type === 'postgres';
  }

  /**
   * The compiled items of each schedule `ids[i]` (lower-case; repeats allowed) at index i, undefined where no
   * schedule has that id. An array, not a map: building a 10,000-entry Map or Set costs ~0.5 µs an entry, more than
   * the engine spends on a rule. `ctx` is the request's, for the rare warning about stored data that no longer
   * compiles.
   */
  async getMany(
    ids: readonly string[],
    ctx: RequestContext,
    slicer = new TimeSlicer(),
  ): Promise<Array<readonly CompiledItem[] | undefined>> {
    const result = new Array<readonly CompiledItem[] | undefined>(ids.length);
    const generation = await this.changeGeneration();
    /** Positions of the ids not known current at this generation. */
    const unchecked: number[] = [];
    for (let index = 0; index < ids.length; index++) {
      // 50,000 lookups are ~15 ms: the loop gets a turn between slices.
      if (index % 1_000 === 999) await slicer.pause();
      const entry = this.entries.get(ids[index]);
      if (entry !== undefined && generation !== undefined && entry.checked === generation)
        result[index] = entry.items;
      else unchecked.push(index);
    }
    if (unchecked.length === 0) return result;
    const uncheckedIds = [...new Set(unchecked.map((index) => ids[index]))];
    const found = new Map<string, readonly CompiledItem[]>();
    const stale: Array<{ id: string; version: number }> = [];
    // In slices with a turn of the event loop between them: SQLite's driver is synchronous, and the versions of
    // 50,000 ids in one statement held the loop ~40 ms (with the body's parse and GC, /health/live waited >100 ms).
    const step = this.postgres ? VERSION_SLICE.postgres : VERSION_SLICE.sqlite;
    for (let offset = 0; offset < uncheckedIds.length; offset += step) {
      if (offset > 0) await slicer.pause();
      for (const row of await this.versions(uncheckedIds.slice(offset, offset + step))) {
        const entry = this.entries.get(row.id);
        if (entry && entry.version === Number(row.version)) {
          entry.checked = generation;
          found.set(row.id, entry.items);
        } else stale.push({ id: row.id, version: Number(row.version) });
      }
    }
    // Loaded (schedule-reader.ts, no entities) and compiled in slices with a turn of the event loop whenever
    // a slice is spent: a cold cache for 50,000 ids is seconds of work, which must not hold the loop at once.
    for (let offset = 0; offset < stale.length; offset += LOAD_CHUNK) {
      const chunk = stale.slice(offset, offset + LOAD_CHUNK);
      const versions = new Map(chunk.map((row) => [row.id, row.version]));
      for (const schedule of await this.reader.findMany(
        chunk.map((row) => row.id),
        slicer,
      )) {
        // The version read before the load: if the schedule changed since, the next lookup reloads it.
        const items = this.store(schedule, versions.get(schedule.Id) ?? 0, generation, ctx);
        // A COUNT series is counted from DTSTART once per compiled series: do it here, in slices, so a query on
        // a long one (COUNT up to 1,000,000) never holds the event loop for the whole count.
        for (const item of items) await countInSlices(item.series, slicer);
        found.set(schedule.Id, items);
        await slicer.pause();
      }
    }
    for (const index of unchecked) result[index] = found.get(ids[index]);
    return result;
  }

  /**
   * One query with one parameter however many ids: a JSON array (SQLite json_each) or a uuid[] (PostgreSQL ANY).
   * A 10,000-id IN list through the query builder costs far more in parameter handling than the lookup itself.
   */
  private versions(ids: readonly string[]): Promise<Array<{ id: string; version: number }>> {
    return this.postgres
      ? this.schedules.query('SELECT id::text AS id, version FROM schedules WHERE id = ANY($1::uuid[])', [
          ids,
        ])
      : this.schedules.query(
          'SELECT id, version FROM schedules WHERE id IN (SELECT value FROM json_each(?))',
          [JSON.stringify(ids)],
        );
  }

  /** schedule_stats.change_generation as text; undefined without the row (then every entry is checked). */
  private async changeGeneration(): Promise<string | undefined> {
    const [row] = await this.schedules.query<Array<{ generation: string | number }>>(
      `SELECT s.change_generation AS generation FROM ${SCHEDULE_STATS} s WHERE s.id = 1`,
    );
    return row === undefined ? undefined : String(row.generation);
  }

  forget(id: string): void {
    this.entries.delete(id);
  }

  get size(): number {
    return this.entries.size;
  }

  private store(
    schedule: ScheduleDto,
    version: number,
    checked: string | undefined,
    ctx: RequestContext,
  ): readonly CompiledItem[] {
    const items: CompiledItem[] = [];
    for (const item of schedule.ScheduleItems) {
      try {
        const series = compileSeries(item);
        items.push(
          item.AllDay
            ? {
                itemId: item.Id,
                series,
                allDayZone: zoneRules(resolveTimeZone(item.StartTimeZone?.trim() || 'UTC') ?? 'UTC'),
              }
            : { itemId: item.Id, series },
        );
      } catch (error) {
        // Stored data was valid when written; a zone dropped from the tz database could still break it later.
        ctx
          .logFor('schedules')
          .warn({ scheduleId: schedule.Id, itemId: item.Id, err: error }, 'Schedule item no longer compiles');
      }
    }
    if (this.entries.size >= MAX_ENTRIES) this.evictOldest(MAX_ENTRIES / 10);
    this.entries.set(schedule.Id, { version, items, checked });
    return items;
  }

  private evictOldest(count: number): void {
    let removed = 0;
    for (const id of this.entries.keys()) {
      if (removed++ >= count) break;
      this.entries.delete(id);
    }
  }
}

/** Counts a COUNT series to its end (see `COUNT_STEP`), giving the event loop a turn whenever the slice is spent. */
async function countInSlices(series: CompiledSeries, slicer: TimeSlicer): Promise<void> {
  while (!series.countAhead(COUNT_STEP)) await slicer.pause();
}
