// What the service knows about its database between requests: whether it can be reached, and whether
// the last write failed because the storage is full with none succeeding since. Every statement through TypeORM's
// query runners reports here (both engines), so an outage is logged once when it starts and once when it ends —
// not a stack per request — and /health/ready and /metrics read the same state.
import type { Logger } from 'pino';
import type { DataSource, QueryRunner } from 'typeorm';
import { classifyDatabaseError, type DatabaseFailure } from './database-failures.js';

/** Statements that store something when they succeed: a commit, or a write outside a transaction. */
const COMMIT = /^\s*(?:COMMIT|END)\b/i;
const WRITE = /^\s*(?:INSERT|UPDATE|DELETE|REPLACE)\b/i;

interface Outage {
  since: number;
  refused: number;
  reason: string;
}

export class DatabaseHealth {
  private unreachable: Outage | undefined;
  private full: Outage | undefined;
  private readonly failures: Record<DatabaseFailure, number> = {
    'storage-full': 0,
    unavailable: 0,
    busy: 0,
  };
  private readonly seen = new WeakSet<object>();

  constructor(private readonly logger: Logger) {}

  /** True while an outage or a full storage is open: statements that succeed may end it. */
  get troubled(): boolean {
    return this.unreachable !== undefined || this.full !== undefined;
  }

  get reachable(): boolean {
    return this.unreachable === undefined;
  }

  /** The last write failed for storage and none has succeeded since. */
  get storageFull(): boolean {
    return this.full !== undefined;
  }

  failureCount(kind: DatabaseFailure): number {
    return this.failures[kind];
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
    if (kind === 'busy') return kind;
    const reason = error instanceof Error ? error.message : String(error);
    if (kind === 'storage-full') {
      if (this.full === undefined) {
        this.full = { since: Date.now(), refused: 0, reason };
        this.logger.error(
          { reason },
          'database storage is full: writes are answered 507 until one succeeds again',
        );
      }
      this.full.refused += 1;
    } else {
      if (this.unreachable === undefined) {
        this.unreachable = { since: Date.now(), refused: 0, reason };
        this.logger.error(
          { reason },
          'database unavailable: requests that need it are answered 503 until it is back',
        );
      }
      this.unreachable.refused += 1;
    }
    return kind;
  }

  /** A statement succeeded; `stored` when it wrote something for good (a commit or an autocommit write). */
  succeeded(stored: boolean): void {
    if (this.unreachable !== undefined) {
      this.logEnd('database available again', this.unreachable);
      this.unreachable = undefined;
    }
    if (stored && this.full !== undefined) {
      this.logEnd('database storage accepts writes again', this.full);
      this.full = undefined;
    }
  }

  private logEnd(message: string, outage: Outage): void {
    this.logger.warn(
      { outageSeconds: Math.round((Date.now() - outage.since) / 100) / 10, failures: outage.refused },
      message,
    );
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
    (runner as { query: (...args: unknown[]) => Promise<unknown> }).query = (...args: unknown[]) =>
      query(...args).then(
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
    return runner;
  };
  return health;
}

export function databaseHealthOf(dataSource: DataSource): DatabaseHealth | undefined {
  return healthOf.get(dataSource);
}
