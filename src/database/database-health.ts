// What the service knows about its database between requests: whether it can be reached, and whether
// the last write failed because the storage is full with none succeeding since. Every statement through TypeORM's
// query runners reports here (both engines), so an outage is logged once when it starts and once when it ends —
// not a stack per request, nor a start/end pair each time one statement gets through while the database is still
// struggling (the end waits for OUTAGE_CALM_MS without a failure) — and /health/ready and /metrics read the same
// state.
import type { Logger } from 'pino';
import type { DataSource, QueryRunner } from 'typeorm';
import { classifyDatabaseError, type DatabaseFailure } from './database-failures.js';
import { SqliteFileLostError } from './sqlite-file-watch.js';

/** Statements that store something when they succeed: a commit, or a write outside a transaction. */
const COMMIT = /^\s*(?:COMMIT|END)\b/i;
const WRITE = /^\s*(?:INSERT|UPDATE|DELETE|REPLACE)\b/i;
/** What still runs once the database file is lost: ending a transaction without storing it. */
const ROLLBACK = /^\s*ROLLBACK\b/i;

/** Quiet time after the last failure before an outage counts as over and its end is logged. */
export const OUTAGE_CALM_MS = 10_000;

/** One outage (or full storage), from its first failure until statements have gone on succeeding for a while. */
class Outage {
  readonly since = performance.now();
  failures = 0;
  /** The first success after the last failure; undefined while the last statement failed. */
  recoveredAt: number | undefined;
  timer: NodeJS.Timeout | undefined;
  constructor(readonly reason: string) {}

  get open(): boolean {
    return this.recoveredAt === undefined;
  }
}

type Slot = 'unreachable' | 'full';

const STARTED: Record<Slot, string> = {
  unreachable: 'database unavailable: requests that need it are answered 503 until it is back',
  full: 'database storage is full: writes are answered 507 until one succeeds again',
};
const ENDED: Record<Slot, string> = {
  unreachable: 'database available again',
  full: 'database storage accepts writes again',
};

/**
 * Why the database failed, in the driver's words (its code and message) rather than a framework's wrapping of
 * them: TypeORM's "Query runner already released" only says a connection died earlier.
 */
export function outageReason(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== null && typeof current === 'object'; depth += 1) {
    const candidate = current as { name?: unknown; code?: unknown; message?: unknown };
    const message = typeof candidate.message === 'string' ? candidate.message : '';
    if (typeof candidate.code === 'string') return message ? `${candidate.code}: ${message}` : candidate.code;
    const inner =
      (current as { driverError?: unknown; cause?: unknown }).driverError ??
      (current as { cause?: unknown }).cause;
    if (inner === undefined || inner === current) {
      if (typeof candidate.name === 'string' && /^QueryRunner\w*AlreadyReleased/.test(candidate.name))
        return 'the connection to the database was lost';
      return message || String(error);
    }
    current = inner;
  }
  return String(error);
}

export class DatabaseHealth {
  private unreachable: Outage | undefined;
  private full: Outage | undefined;
  private lost: SqliteFileLostError | undefined;
  private readonly failures: Record<DatabaseFailure, number> = {
    'storage-full': 0,
    unavailable: 0,
    busy: 0,
  };
  private readonly seen = new WeakSet<object>();

  constructor(
    private readonly logger: Logger,
    private readonly calmMs = OUTAGE_CALM_MS,
  ) {}

  /** True while an outage or a full storage is open: statements that succeed may end it. */
  get troubled(): boolean {
    return this.unreachable?.open === true || this.full?.open === true;
  }

  get reachable(): boolean {
    return this.lost === undefined && this.unreachable?.open !== true;
  }

  /** The last write failed for storage and none has succeeded since. */
  get storageFull(): boolean {
    return this.full?.open === true;
  }

  /** Set once the SQLite database file or WAL was removed or replaced under this instance; never cleared. */
  get fileLost(): SqliteFileLostError | undefined {
    return this.lost;
  }

  failureCount(kind: DatabaseFailure): number {
    return this.failures[kind];
  }

  /** The SQLite file watch found the file gone or replaced: logged once, and every statement is refused after. */
  lostFile(error: SqliteFileLostError): void {
    if (this.lost !== undefined) return;
    this.lost = error;
    this.logger.error(
      { file: error.file, how: error.how },
      `database file ${error.file} was ${error.how} under this instance: not ready, statements are refused until a restart`,
    );
  }

  /** Records `error` when it is a database failure; answers its kind (undefined: not one). */
  observe(error: unknown): DatabaseFailure | undefined {
    const kind = classifyDatabaseError(error);
    if (kind === undefined) return undefined;
    // One failure is reported by the runner and again by whoever answers it: count it once.
    if (typeof error === 'object' && error !== null) {
      if (this.seen.has(error)) return kind;
      this.seen.add(error);
    }
    this.failures[kind] += 1;
    // A lock wait that ran out is this request's lot, not the database's state: counted, no outage opened.
    // A refusal after the file was lost was logged when it was found.
    if (kind === 'busy' || error instanceof SqliteFileLostError) return kind;
    this.failed(kind === 'storage-full' ? 'full' : 'unreachable', error);
    return kind;
  }

  /** A statement succeeded; `stored` when it wrote something for good (a commit or an autocommit write). */
  succeeded(stored: boolean): void {
    this.recovered('unreachable');
    if (stored) this.recovered('full');
  }

  /**
   * One `error` line when an outage starts, whatever the number of failures. Failures while it calms down (a
   * statement succeeded, then another failed: a pool that is exhausted now and then) belong to the same outage.
   */
  private failed(slot: Slot, error: unknown): void {
    let outage = this[slot];
    if (outage === undefined) {
      outage = new Outage(outageReason(error));
      this[slot] = outage;
      this.logger.error({ reason: outage.reason }, STARTED[slot]);
    } else if (!outage.open) {
      clearTimeout(outage.timer);
      outage.recoveredAt = undefined;
    }
    outage.failures += 1;
  }

  /** The outage counts as over, and its one end line is logged, once statements kept succeeding for calmMs. */
  private recovered(slot: Slot): void {
    const outage = this[slot];
    if (outage === undefined || !outage.open) return;
    const recoveredAt = performance.now();
    outage.recoveredAt = recoveredAt;
    outage.timer = setTimeout(() => {
      if (this[slot] !== outage) return;
      this[slot] = undefined;
      this.logger.warn(
        {
          outageSeconds: Math.round((recoveredAt - outage.since) / 100) / 10,
          failures: outage.failures,
          reason: outage.reason,
        },
        ENDED[slot],
      );
    }, this.calmMs);
    outage.timer.unref();
  }
}

const healthOf = new WeakMap<DataSource, DatabaseHealth>();

/** The data source's health, watched through every query runner it makes. */
export function watchDatabase(dataSource: DataSource, logger: Logger): DatabaseHealth {
  const existing = healthOf.get(dataSource);
  if (existing !== undefined) return existing;
  const health = new DatabaseHealth(logger);
  healthOf.set(dataSource, health);
  const driver = dataSource.driver;
  const create = driver.createQueryRunner.bind(driver);
  const watched = new WeakSet<QueryRunner>();
  driver.createQueryRunner = (mode) => {
    const runner = create(mode);
    if (watched.has(runner)) return runner;
    watched.add(runner);
    const query = runner.query.bind(runner) as (...args: unknown[]) => Promise<unknown>;
    (runner as { query: (...args: unknown[]) => Promise<unknown> }).query = (...args: unknown[]) => {
      const lost = health.fileLost;
      if (lost !== undefined && !ROLLBACK.test(String(args[0]))) {
        const refusal = new SqliteFileLostError(lost.file, lost.how);
        health.observe(refusal);
        return Promise.reject(refusal);
      }
      return query(...args).then(
        (result) => {
          if (health.troubled) {
            const sql = String(args[0]);
            health.succeeded(COMMIT.test(sql) || (!runner.isTransactionActive && WRITE.test(sql)));
          }
          return result;
        },
        (error: unknown) => {
          health.observe(error);
          throw error;
        },
      );
    };
    return runner;
  };
  return health;
}

export function databaseHealthOf(dataSource: DataSource): DatabaseHealth | undefined {
  return healthOf.get(dataSource);
}
