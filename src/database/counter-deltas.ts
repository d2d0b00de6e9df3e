// Trigger-kept counters without a hot row (migration 1763780001600). A stats table holds one base
// row (id 1: a row count and generations); on PostgreSQL the counted table's statement triggers INSERT a delta row
// (count delta, generation bumps) into the counter's delta table rather than UPDATE the base row, so writers never
// wait for one another's row lock: a 20,000-event import no longer holds every other schedule write until it
// commits. The value is base + SUM(deltas), read in one statement (one snapshot, so exact: a delta is visible
// exactly when its writer's rows are). Generations stay monotonic: every delta adds ≥ 0 to them, and a fold moves
// deltas into the base row in one statement, which no snapshot sees half done.
//
// The fold runs in the background on every instance (FOLD_INTERVAL_MS). Concurrent folds are safe: the second
// one's DELETE waits for the first's row locks and then skips the rows it removed, and its UPDATE re-reads the
// base row the first committed (READ COMMITTED). Writers are never blocked by it: they only insert.

import type { DataSource } from 'typeorm';
import { databaseHealthOf } from './database-health.js';

/** How often each instance folds deltas into the base row: few rows each time, a ~1 ms statement. */
export const FOLD_INTERVAL_MS = 1_000;
/** PostgreSQL's SQLSTATE for a relation that does not exist. */
const UNDEFINED_TABLE = '42P01';

export interface CounterTables {
  /** The base row's table (id 1). */
  stats: string;
  /** The deltas' table: the same value columns, and an id. */
  deltas: string;
  /** The value columns: the row count, then the generations. */
  columns: readonly string[];
}

/**
 * A derived table with the counter's current value: `id` and each value column as base + SUM(deltas), cast to
 * bigint (PostgreSQL answers it as text). Same SQL on both engines; use as `FROM ${currentCounter(…)} s`.
 */
export function currentCounter({ stats, deltas, columns }: CounterTables): string {
  const sums = columns.map((column) => `COALESCE(SUM(${column}), 0) AS ${column}`).join(', ');
  const values = columns.map((column) => `CAST(b.${column} + d.${column} AS bigint) AS ${column}`).join(', ');
  return `(SELECT b.id, ${values} FROM ${stats} b CROSS JOIN (SELECT ${sums} FROM ${deltas}) d)`;
}

/** PostgreSQL: moves every visible delta into the base row in one statement; answers how many it moved. */
function foldStatement({ stats, deltas, columns }: CounterTables): string {
  const sets = columns.map(
    (column) => `${column} = ${column} + COALESCE((SELECT SUM(${column}) FROM folded), 0)`,
  );
  return `WITH folded AS (DELETE FROM ${deltas} WHERE EXISTS (SELECT 1 FROM ${stats} WHERE id = 1)
                           RETURNING ${columns.join(', ')}),
               base AS (UPDATE ${stats} SET ${sets.join(', ')} WHERE id = 1 AND EXISTS (SELECT 1 FROM folded))
          SELECT COUNT(*)::int AS folded FROM folded`;
}

/** Data sources opened by the maintenance CLI: no fold runs on its timer there (see `forMaintenance`). */
const maintenance = new WeakSet<DataSource>();

/**
 * Marks a data source as the maintenance CLI's: the folds of the modules it loads do not start their timers, so a
 * command changes only what it is asked to (`db:verify` compares a database no fold moves meanwhile; `db:copy`
 * and `db:backup` leave the source as it was). The serving instances fold as before.
 */
export function forMaintenance(dataSource: DataSource): void {
  maintenance.add(dataSource);
}

/**
 * Runs a fold (`work`: moves rows, answers how many) on a timer, one at a time, or when asked (the tests): a
 * counter's deltas (DeltaFolder) or the audit trail's tail (src/audit/audit-fold.ts).
 */
export class PeriodicFold {
  private timer: NodeJS.Timeout | undefined;
  private folding: Promise<number> | undefined;

  constructor(
    private readonly dataSource: DataSource,
    private readonly work: () => Promise<number>,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(intervalMs = FOLD_INTERVAL_MS): void {
    if (this.timer !== undefined || maintenance.has(this.dataSource)) return;
    this.timer = setInterval(() => {
      if (this.folding === undefined) this.fold().catch((error: unknown) => this.failed(error));
    }, intervalMs);
    this.timer.unref();
  }

  /** Stops the timer and waits for a fold under way. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.folding?.catch(() => undefined);
  }

  /**
   * An outage or a full storage is logged once by DatabaseHealth, not by every fold while it lasts; until a fold
   * succeeds again the rows only accumulate (readers stay exact, each read covers a few more rows). A missing
   * table is a schema not yet migrated (the CLI's migration:run, a start before its migrations): not a failure.
   */
  private failed(error: unknown): void {
    if (missingTable(error)) return;
    if (databaseHealthOf(this.dataSource)?.observe(error) === undefined) this.onError(error);
  }

  /** Folds now (after a fold under way, if any); answers how many rows it moved. */
  async fold(): Promise<number> {
    await this.folding?.catch(() => undefined);
    const folding = this.work();
    this.folding = folding;
    try {
      return await folding;
    } finally {
      if (this.folding === folding) this.folding = undefined;
    }
  }
}

/** Folds a counter's deltas on a timer (PostgreSQL), or when asked (the tests). */
export class DeltaFolder extends PeriodicFold {
  constructor(dataSource: DataSource, counter: CounterTables, onError: (error: unknown) => void) {
    super(
      dataSource,
      () =>
        dataSource.query<Array<{ folded: number }>>(foldStatement(counter)).then(([row]) => row?.folded ?? 0),
      onError,
    );
  }
}

function missingTable(error: unknown): boolean {
  const cause = (error as { driverError?: { code?: string; message?: string } }).driverError;
  return cause?.code === UNDEFINED_TABLE || /^no such table/.test(cause?.message ?? '');
}
