// What an import stores to know a series again: each series' hashed key, its UID and SEQUENCE on its
// schedule row. The import looks series up by key (or by a UID the export derived from a schedule id) and updates
// those it finds; the export reads UID and SEQUENCE back.
import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { TimeSlicer } from '../common/time-slicer.js';
import { scheduleIdOfDerivedUid } from './ical/ical-identity.js';
import type { ImportedCalendar } from './ical/ical-import.js';

/** Schedules per multi-row statement (INSERT of schedules, lookups by key). */
const SCHEDULE_CHUNK = 200;

/**
 * What an import stores of a series: its hashed key (the lookup), its UID and SEQUENCE (written by the export). A
 * schedule that several series of its export update together keeps no key: one key cannot find them all.
 */
export interface ImportedIdentity {
  readonly id: string;
  readonly icalKey: string | null;
  readonly icalUid: string;
  readonly icalSequence: number;
}

export interface NewImportedRow extends ImportedIdentity {
  readonly version: number;
  readonly createdAt: Date;
}

/** SHA-256 (hex) of each series' key; a key the file repeats gets its ordinal too, so each series has its own. */
export function uniqueKeys(keys: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return keys.map((key) => {
    const count = seen.get(key) ?? 0;
    seen.set(key, count + 1);
    return createHash('sha256')
      .update(count === 0 ? key : `${key}\n#${count}`)
      .digest('hex');
  });
}

/** Schedule id → how many series of the file update it (several when they name it: its export's items). */
export function seriesPerSchedule(existing: ReadonlyMap<string, string>): Map<string, number> {
  const count = new Map<string, number>();
  for (const id of existing.values()) count.set(id, (count.get(id) ?? 0) + 1);
  return count;
}

@Injectable()
export class IcalIdentityStore {
  constructor(private readonly dataSource: DataSource) {}

  /** Schedule id → the UID and SEQUENCE an import stored for it (schedules written as JSON have none). */
  async icalIdentities(
    ids: readonly string[],
  ): Promise<Map<string, { uid: string; sequence: number | null }>> {
    const found = new Map<string, { uid: string; sequence: number | null }>();
    const postgres = this.dataSource.options.type === 'postgres';
    for (let offset = 0; offset < ids.length; offset += SCHEDULE_CHUNK) {
      const { match, param } = this.match(ids.slice(offset, offset + SCHEDULE_CHUNK), 'uuid');
      const rows = await this.dataSource.query<Array<{ id: string; uid: string; sequence: number | null }>>(
        `SELECT ${postgres ? 'id::text' : 'id'} AS id, ical_uid AS uid, ical_sequence AS sequence FROM schedules
         WHERE id ${match} AND ical_uid IS NOT NULL`,
        param,
      );
      for (const row of rows) found.set(row.id.toLowerCase(), { uid: row.uid, sequence: row.sequence });
    }
    return found;
  }

  /**
   * Hashed key → schedule id of each series of the calendar that is a schedule already, found in this order: by the
   * schedule id this service's export wrote on it (`X-PLATFORM-SCHEDULE-ID`), when the file names that schedule by as
   * many series as it has items (its export: one VEVENT master per item); by its key; by its key with the start as
   * written (`writtenKeys`: how earlier imports keyed series that share a UID); by a UID the export derived from a
   * schedule id. A series whose key another schedule holds, one this file does not name, updates that one (its key is
   * unique). Only the series that name a schedule share it (they become its items); any other schedule is updated by
   * one series at most: a later claim to it creates a schedule.
   */
  async existingSeries(
    manager: EntityManager,
    calendar: ImportedCalendar,
    keys: readonly string[],
    writtenKeys: readonly string[],
    slicer: TimeSlicer,
  ): Promise<Map<string, string>> {
    const named = await this.byScheduleId(manager, calendar, keys);
    const namedIds = new Set(named.values());
    const byKey = await this.existingByKey(manager, keys, slicer);
    const unknown = writtenKeys.filter((key, index) => key !== keys[index] && !byKey.has(keys[index]));
    const byWrittenKey = await this.existingByKey(manager, unknown, slicer);
    const existing = new Map<string, string>();
    keys.forEach((key, index) => {
      const holder = byKey.get(key);
      const found =
        holder !== undefined && !namedIds.has(holder)
          ? holder
          : (named.get(key) ?? holder ?? byWrittenKey.get(writtenKeys[index]));
      if (found !== undefined) existing.set(key, found);
    });
    await this.addDerivedMatches(manager, calendar, keys, existing);
    // The series that name their schedule keep it (all of them); of the others, the first in the file.
    const claimed = new Set<string>();
    const claimedByName = new Set<string>();
    const byName = (key: string) => named.get(key) !== undefined && named.get(key) === existing.get(key);
    for (const key of [...keys.filter(byName), ...keys.filter((key) => !byName(key))]) {
      const id = existing.get(key);
      if (id === undefined) continue;
      if (claimed.has(id) && !(byName(key) && claimedByName.has(id))) existing.delete(key);
      claimed.add(id);
      if (byName(key)) claimedByName.add(id);
    }
    return existing;
  }

  /**
   * Series whose VEVENT names a schedule (`X-PLATFORM-SCHEDULE-ID`) that exists and has as many items as the file has
   * series naming it: all of them, so replacing its items by them drops none.
   */
  private async byScheduleId(
    manager: EntityManager,
    calendar: ImportedCalendar,
    keys: readonly string[],
  ): Promise<Map<string, string>> {
    const named = new Map<string, number[]>();
    calendar.sources.forEach((source, index) => {
      if (source.scheduleId === undefined) return;
      const list = named.get(source.scheduleId);
      if (list === undefined) named.set(source.scheduleId, [index]);
      else list.push(index);
    });
    const wanted = [...named.keys()];
    const found = new Map<string, string>();
    const postgres = this.dataSource.options.type === 'postgres';
    for (let offset = 0; offset < wanted.length; offset += SCHEDULE_CHUNK) {
      const { match, param } = this.match(wanted.slice(offset, offset + SCHEDULE_CHUNK), 'uuid');
      const rows = await manager.query<Array<{ id: string; items: number | string }>>(
        `SELECT ${postgres ? 's.id::text' : 's.id'} AS id,
           (SELECT COUNT(*) FROM schedule_items i WHERE i.schedule_id = s.id) AS items
         FROM schedules s WHERE s.id ${match}`,
        param,
      );
      for (const row of rows) {
        const id = row.id.toLowerCase();
        const indexes = named.get(id)!;
        if (Number(row.items) !== indexes.length) continue;
        for (const index of indexes) found.set(keys[index], id);
      }
    }
    return found;
  }

  /** Hashed key → schedule id of the series imported before. */
  async existingByKey(
    manager: EntityManager,
    keys: readonly string[],
    slicer: TimeSlicer,
  ): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    const postgres = this.dataSource.options.type === 'postgres';
    await forEachChunk(keys, slicer, async (chunk) => {
      const { match, param } = this.match(chunk, 'text');
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
  async addDerivedMatches(
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
    const { match, param } = this.match([...wanted.keys()], 'uuid');
    const rows = await manager.query<Array<{ id: string }>>(
      `SELECT ${postgres ? 's.id::text' : 's.id'} AS id FROM schedules s WHERE s.id ${match} AND s.ical_key IS NULL
         AND (SELECT COUNT(*) FROM schedule_items i WHERE i.schedule_id = s.id) = 1`,
      param,
    );
    for (const row of rows) existing.set(wanted.get(row.id.toLowerCase())!, row.id);
  }

  /** Series imported before: their items deleted (the caller inserts the new ones), version bumped, identity stored. */
  async updateSeries(
    manager: EntityManager,
    rows: readonly ImportedIdentity[],
    slicer: TimeSlicer,
  ): Promise<void> {
    // Keys may move between the updated schedules (series that share a UID, listed in another order): all are let
    // go first, so no key is held twice in between.
    await forEachChunk(rows, slicer, async (chunk) => {
      const { match, param } = this.match(
        chunk.map((row) => row.id),
        'uuid',
      );
      await manager.query(`UPDATE schedules SET ical_key = NULL WHERE id ${match}`, param);
    });
    await forEachChunk(rows, slicer, async (chunk) => {
      const { match, param } = this.match(
        chunk.map((row) => row.id),
        'uuid',
      );
      await manager.query(`DELETE FROM schedule_items WHERE schedule_id ${match}`, param);
      await this.updateIdentities(manager, chunk);
    });
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
  private match(values: readonly string[], type: 'uuid' | 'text'): { match: string; param: unknown[] } {
    return this.dataSource.options.type === 'postgres'
      ? { match: `= ANY($1::${type}[])`, param: [values] }
      : { match: 'IN (SELECT value FROM json_each(?))', param: [JSON.stringify(values)] };
  }
}

/** `work` on chunks of SCHEDULE_CHUNK values, the event loop given a turn between them when `slicer` says so. */
export async function forEachChunk<T>(
  values: readonly T[],
  slicer: TimeSlicer,
  work: (chunk: T[]) => Promise<void>,
): Promise<void> {
  for (let offset = 0; offset < values.length; offset += SCHEDULE_CHUNK) {
    await work(values.slice(offset, offset + SCHEDULE_CHUNK));
    await slicer.pause();
  }
}
