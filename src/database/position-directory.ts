// Where a list ordered by (created_at, id) — every SCIM user, every schedule — has its 100th, 200th, … entry, so
// that a deep page starts from the nearest key below its offset and walks at most STEP index entries, instead of
// walking the index from either end (on PostgreSQL ~3–4 ms for the 50,000 entries to the middle of 100,000 rows).
//
// The order changes only when rows are inserted or deleted, and every such statement bumps the list's
// order_generation (a trigger: scim_user_stats, migration 1763780000900; schedule_stats, 1763780001250), which the
// list reads with its total. A directory built in one statement (one snapshot) together with the generation it saw
// is exact for exactly that generation; any other generation makes it unused until rebuilt. Each instance keeps its
// own, in memory (1,000 keys for 100,000 rows). Built in the background, never on a request's path: the request
// that finds it missing or stale walks the index as before and starts one rebuild, at most one at a time and one
// per MIN_REBUILD_MS, so a fleet writing rows while a client pages through them does not rebuild without pause.

import type { DataSource } from 'typeorm';

export const DIRECTORY_STEP = 100;
const MIN_REBUILD_MS = 1_000;

/** A list position's key as the database prints it (created_at as text, id), to be cast back in SQL. */
export interface PositionKey {
  created: string;
  id: string;
}

export interface DirectoryRows {
  /** The list's order_generation as text, when the statement saw the stats row. */
  generation: string | undefined;
  /** The keys at positions 0, STEP, 2·STEP, … in order. */
  keys: PositionKey[];
}

export interface DirectoryStart {
  key: PositionKey;
  /** How many entries after `key` the page starts. */
  skip: number;
}

export class PositionDirectory {
  private built: { generation: string; keys: PositionKey[] } | undefined;
  private building: Promise<void> | undefined;
  private lastBuildStarted = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly load: (step: number) => Promise<DirectoryRows>,
    private readonly onError: (error: unknown) => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Where the page at `offset` starts, if the directory is exact for `generation`; otherwise undefined, and a
   * rebuild starts in the background (unless one runs or one started less than MIN_REBUILD_MS ago).
   */
  startOf(offset: number, generation: string): DirectoryStart | undefined {
    if (this.built?.generation === generation) {
      const start = this.current(offset);
      return start === undefined ? undefined : { key: start.key, skip: start.skip };
    }
    this.rebuild();
    return undefined;
  }

  /**
   * Where the page at `offset` starts by the directory as built, and the generation it is exact for (undefined
   * while none is built). The caller checks the generation in the same statement that reads the page; no rebuild.
   */
  current(offset: number): (DirectoryStart & { generation: string }) | undefined {
    const built = this.built;
    if (built === undefined || built.keys.length === 0) return undefined;
    const index = Math.min(Math.floor(offset / DIRECTORY_STEP), built.keys.length - 1);
    return { key: built.keys[index], skip: offset - index * DIRECTORY_STEP, generation: built.generation };
  }

  /** Settles when no rebuild is running (tests, shutdown). */
  async idle(): Promise<void> {
    await this.building;
  }

  /** Starts a rebuild in the background (unless one runs or one started less than MIN_REBUILD_MS ago). */
  rebuild(): void {
    if (this.building !== undefined || this.now() - this.lastBuildStarted < MIN_REBUILD_MS) return;
    this.lastBuildStarted = this.now();
    this.building = Promise.resolve()
      .then(() => this.load(DIRECTORY_STEP))
      .then((rows) => {
        if (rows.generation !== undefined) this.built = { generation: rows.generation, keys: rows.keys };
      })
      .catch(this.onError)
      .finally(() => {
        this.building = undefined;
      });
  }
}

/**
 * PostgreSQL: the keys of `table` at list positions 0, step, 2·step, … and the order generation of its stats row
 * (`stats`: a table or derived table, row id 1), in one statement (one snapshot, so they agree). An index-only scan of every row: ~30 ms for
 * 100,000, run in the background. `table` and `stats` are the caller's constants, never input.
 */
export async function loadPositionKeys(
  dataSource: DataSource,
  table: string,
  stats: string,
  step: number,
): Promise<DirectoryRows> {
  const rows = await dataSource.query<Array<{ generation: string | null; created: string; id: string }>>(
    `SELECT (SELECT s.order_generation::text FROM ${stats} s WHERE s.id = 1) AS generation,
            created_at::text AS created, id::text AS id
       FROM (SELECT created_at, id, row_number() OVER (ORDER BY created_at, id) - 1 AS position
               FROM ${table}) numbered
      WHERE position % $1 = 0
      ORDER BY position`,
    [step],
  );
  return {
    generation: rows[0]?.generation ?? undefined,
    keys: rows.map((row) => ({ created: row.created, id: row.id })),
  };
}
