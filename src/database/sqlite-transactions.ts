// SQLite transactions that end in a known state (an answered write is kept). TypeORM runs all SQLite work over one better-sqlite3
// connection, by default through one shared query runner, which leaves two ways to lose a write answered 2xx:
//
// - Interleaving: while one async transaction is open, another flow's statements run on the same connection and so
//   inside that transaction (TypeORM even nests a second `transaction()` as a SAVEPOINT of the first). If the first
//   rolls back, the second flow's "committed" work goes with it.
// - Failed COMMIT: SQLite rolls a transaction back by itself after some errors (SQLITE_FULL, SQLITE_IOERR,
//   SQLITE_BUSY, SQLITE_NOMEM) and keeps it open after others; TypeORM's bookkeeping (isTransactionActive,
//   transactionDepth) then no longer matches the connection, its ROLLBACK fails, and later transactions become
//   savepoints of a transaction that never commits — answered 2xx, readable through the connection, never on disk.
//
// So every `createQueryRunner()` gets a runner of its own (all over the one connection, sharing its statement
// cache), as each PostgreSQL runner has a connection of its own, and the connection is owned by one runner at a
// time: from BEGIN to the end of its transaction, or for one statement. A transaction's own statements and nested
// savepoints run at once; everyone else waits their turn. When a top-level transaction ends — committed, rolled
// back, or failed either way — the connection is checked: still inside a transaction means ROLLBACK, and TypeORM's
// flags are reset, before the next owner gets it. Work inside a transaction must use the transaction's manager (as
// on PostgreSQL); a statement through another runner waits, and after WAIT_LIMIT_MS fails as SQLITE_BUSY rather
// than wait for ever.
import type BetterSqlite3 from 'better-sqlite3';
import type { DataSource, QueryRunner } from 'typeorm';
import { databaseHealthOf } from './database-health.js';
import { SqliteFileLostError } from './sqlite-file-watch.js';

/** Thrown when SQLite ended a transaction by itself (after SQLITE_FULL, SQLITE_IOERR …) and its owner goes on. */
export class SqliteTransactionLostError extends Error {
  readonly code = 'SQLITE_TRANSACTION_LOST';
  constructor() {
    super('SQLite rolled the transaction back after an earlier error; nothing of it was stored');
    this.name = 'SqliteTransactionLostError';
  }
}

/** A turn that waited this long fails (503 DatabaseUnavailable): as long as SQLite waits for another process. */
const WAIT_LIMIT_MS = 5_000;

export class SqliteConnectionBusyError extends Error {
  readonly code = 'SQLITE_BUSY';
  constructor() {
    super(`The SQLite connection stayed in use by another transaction for ${WAIT_LIMIT_MS} ms`);
    this.name = 'SqliteConnectionBusyError';
  }
}

type RunnerState = QueryRunner & {
  isTransactionActive: boolean;
  transactionDepth: number;
  stmtCache: Map<string, unknown>;
};
type Query = (...args: unknown[]) => Promise<unknown>;
/** Who holds the connection: a query runner, or a token for raw-SQL work on the connection itself. */
type Holder = object;

interface Waiter {
  holder: Holder;
  resolve: () => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

const installed = new WeakMap<DataSource, SqliteConnectionOwner>();

export class SqliteConnectionOwner {
  private current: Holder | undefined;
  /** Nested holds by the current holder (a runner's concurrent statements, a section inside a transaction). */
  private holds = 0;
  private readonly waiting: Waiter[] = [];

  constructor(private readonly connection: () => BetterSqlite3.Database) {}

  /** Runs `work` while `holder` (default: a fresh token) has the connection to itself. */
  async exclusive<T>(work: () => T | Promise<T>, holder: Holder = {}): Promise<T> {
    await this.acquire(holder);
    try {
      return await work();
    } finally {
      this.release(holder);
    }
  }

  /** Puts a new query runner under the ownership rules. */
  adopt(runner: RunnerState): void {
    const query = runner.query.bind(runner) as Query;
    const start = runner.startTransaction.bind(runner);
    const commit = runner.commitTransaction.bind(runner);
    const rollback = runner.rollbackTransaction.bind(runner);

    (runner as { query: Query }).query = (...args: unknown[]) => {
      if (this.current === runner && runner.transactionDepth > 0) {
        // SQLite may have ended the transaction under its owner (an automatic rollback); going on would run the
        // rest in autocommit, half a unit of work stored.
        if (!this.connection().inTransaction) return Promise.reject(new SqliteTransactionLostError());
        return query(...args);
      }
      return this.exclusive(() => query(...args), runner);
    };

    runner.startTransaction = async (isolationLevel) => {
      // Inside the runner's own transaction TypeORM nests a savepoint, as it means to.
      if (this.current === runner && runner.transactionDepth > 0) return start(isolationLevel);
      await this.acquire(runner);
      try {
        await start(isolationLevel);
      } catch (error) {
        this.end(runner);
        throw error;
      }
    };

    // Only the top level ends the runner's hold; a savepoint's release or rollback stays inside it.
    runner.commitTransaction = async () => {
      if (this.current !== runner || runner.transactionDepth !== 1) return commit();
      try {
        await commit();
      } finally {
        this.end(runner);
      }
    };

    runner.rollbackTransaction = async () => {
      if (this.current !== runner || runner.transactionDepth !== 1) return rollback();
      try {
        await rollback();
      } finally {
        this.end(runner);
      }
    };
  }

  /** After a top-level transaction: the connection in autocommit, TypeORM's flags to match, the turn passed on. */
  private end(runner: RunnerState): void {
    try {
      this.leaveTransaction();
    } finally {
      runner.isTransactionActive = false;
      runner.transactionDepth = 0;
      this.release(runner);
    }
  }

  private leaveTransaction(): void {
    const db = this.connection();
    if (!db.inTransaction) return;
    try {
      db.exec('ROLLBACK');
    } catch {
      // Reported by the next statement: the connection's state is checked again before every turn.
    }
  }

  private acquire(holder: Holder): Promise<void> {
    if (this.current === undefined || this.current === holder) {
      this.current = holder;
      this.holds += 1;
      if (this.holds === 1) this.leaveTransaction();
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        holder,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiting.splice(this.waiting.indexOf(waiter), 1);
          reject(new SqliteConnectionBusyError());
        }, WAIT_LIMIT_MS),
      };
      waiter.timer.unref();
      this.waiting.push(waiter);
    });
  }

  private release(holder: Holder): void {
    if (this.current !== holder) return;
    this.holds -= 1;
    if (this.holds > 0) return;
    const next = this.waiting.shift();
    this.current = next?.holder;
    if (next === undefined) return;
    clearTimeout(next.timer);
    this.holds = 1;
    // A raw-SQL section that died half-way may have left BEGIN behind: the next holder starts clean.
    this.leaveTransaction();
    next.resolve();
  }
}

/**
 * Gives every query runner of the SQLite data source its own identity and puts them under one
 * SqliteConnectionOwner (no-op for PostgreSQL, whose runners each hold a pooled connection). Call before
 * `initialize()`.
 */
export function ownSqliteConnection(dataSource: DataSource): void {
  if (dataSource.options.type !== 'better-sqlite3' || installed.has(dataSource)) return;
  const driver = dataSource.driver as DataSource['driver'] & {
    databaseConnection: BetterSqlite3.Database;
    queryRunner?: QueryRunner;
  };
  const owner = new SqliteConnectionOwner(() => driver.databaseConnection);
  installed.set(dataSource, owner);
  const create = driver.createQueryRunner.bind(driver);
  const statements = new Map<string, unknown>();
  driver.createQueryRunner = (mode) => {
    // The driver keeps one runner and hands it to everyone; forget it so each call makes a new one.
    driver.queryRunner = undefined;
    const runner = create(mode) as RunnerState;
    driver.queryRunner = undefined;
    // One cache of prepared statements for the one connection, whichever runner prepared them.
    runner.stmtCache = statements;
    owner.adopt(runner);
    return runner;
  };
}

/**
 * Runs `work` with the SQLite connection to itself — raw SQL managing its own transaction (replication's synchronous
 * transactions), or, with `runner`, a section whose statements go through that runner (a migration batch). On
 * PostgreSQL it simply runs.
 */
export function withSqliteConnection<T>(
  dataSource: DataSource,
  work: () => T | Promise<T>,
  runner?: QueryRunner,
): Promise<T> {
  const owner = installed.get(dataSource);
  if (owner === undefined) return Promise.resolve().then(work);
  // Raw SQL passes no query runner: a database file found lost refuses it here.
  const lost = databaseHealthOf(dataSource)?.fileLost;
  if (lost !== undefined) return Promise.reject(new SqliteFileLostError(lost.file, lost.how));
  return owner.exclusive(work, runner);
}
