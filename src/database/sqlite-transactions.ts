// SQLite transactions that end in a known state (issue 21). TypeORM runs all SQLite work on one shared query runner
// over one better-sqlite3 connection, which leaves two ways to lose a write that was answered 2xx:
//
// - Interleaving: while one async transaction is open, another flow's statements run on the same connection and so
//   inside that transaction (TypeORM even nests a second `transaction()` as a SAVEPOINT of the first). If the first
//   rolls back, the second flow's "committed" work goes with it.
// - Failed COMMIT: SQLite rolls a transaction back by itself after some errors (SQLITE_FULL, SQLITE_IOERR,
//   SQLITE_BUSY, SQLITE_NOMEM) and keeps it open after others; TypeORM's bookkeeping (isTransactionActive,
//   transactionDepth) then no longer matches the connection, its ROLLBACK fails, and later transactions become
//   savepoints of a transaction that never commits — answered 2xx, readable through the connection, never on disk.
//
// So the connection is owned by one flow at a time: a top-level transaction, a raw-SQL section (migrations,
// replication) or a single statement. Ownership follows the async flow (AsyncLocalStorage), so a transaction's own
// statements and nested savepoints run at once while everyone else waits their turn. When a top-level transaction
// ends — committed, rolled back, or failed either way — the connection is checked: still inside a transaction means
// ROLLBACK, and TypeORM's flags are reset, before the next owner gets it.
import { AsyncLocalStorage } from 'node:async_hooks';
import type BetterSqlite3 from 'better-sqlite3';
import type { DataSource, EntityManager, QueryRunner } from 'typeorm';

/** The flow that owns the connection. `done` once its transaction (or section) has ended. */
class Owner {
  done = false;
}

interface Waiter {
  owner: Owner;
  resolve: () => void;
}

/** Thrown when SQLite ended a transaction by itself (after SQLITE_FULL, SQLITE_IOERR …) and its owner goes on. */
export class SqliteTransactionLostError extends Error {
  readonly code = 'SQLITE_TRANSACTION_LOST';
  constructor() {
    super('SQLite rolled the transaction back after an earlier error; nothing of it was stored');
    this.name = 'SqliteTransactionLostError';
  }
}

type RunnerState = QueryRunner & { transactionDepth: number };
type Query = (...args: unknown[]) => Promise<unknown>;

const owners = new AsyncLocalStorage<Owner>();
const installed = new WeakMap<DataSource, SqliteConnectionOwner>();

export class SqliteConnectionOwner {
  private current: Owner | undefined;
  private readonly waiting: Waiter[] = [];

  constructor(private readonly connection: () => BetterSqlite3.Database) {}

  /** Runs `work` as the connection's only user (raw SQL that manages its own transaction, or reads). */
  async exclusive<T>(work: () => T | Promise<T>): Promise<T> {
    if (this.owns(owners.getStore())) return work();
    const owner = new Owner();
    await this.acquire(owner);
    try {
      return await owners.run(owner, work);
    } finally {
      this.release(owner);
    }
  }

  /** Installs the ownership rules on the shared query runner and the data source's manager. */
  install(runner: RunnerState, manager: EntityManager): void {
    const query = runner.query.bind(runner) as Query;
    const start = runner.startTransaction.bind(runner);
    const commit = runner.commitTransaction.bind(runner);
    const rollback = runner.rollbackTransaction.bind(runner);
    let active = runner.isTransactionActive;
    // TypeORM's save()/remove() start a transaction only when none is active: seen from a flow that does not own
    // the connection, none is, so it waits for its turn and gets a transaction of its own.
    Object.defineProperty(runner, 'isTransactionActive', {
      configurable: true,
      get: () => active && owners.getStore() === this.current,
      set: (value: boolean) => {
        active = value;
      },
    });

    (runner as { query: Query }).query = (...args: unknown[]) => {
      if (this.owns(owners.getStore())) {
        // SQLite may have ended the transaction under the owner (an automatic rollback); going on would run the
        // rest in autocommit, half a unit of work stored.
        if (runner.transactionDepth > 0 && !this.connection().inTransaction) {
          return Promise.reject(new SqliteTransactionLostError());
        }
        return query(...args);
      }
      return this.exclusive(() => query(...args));
    };

    runner.startTransaction = (isolationLevel) => {
      // Inside the owner's own transaction or raw section: TypeORM nests (a savepoint) as it means to.
      if (this.owns(owners.getStore())) return start(isolationLevel);
      const owner = new Owner();
      // Synchronously, before any await: the caller's continuation (its statements, commit) carries the owner.
      owners.enterWith(owner);
      return (async () => {
        await this.acquire(owner);
        try {
          await start(isolationLevel);
        } catch (error) {
          this.end(runner, owner, () => (active = false));
          throw error;
        }
      })();
    };

    // A commit or rollback ends the connection's transaction only for its owner; anyone else gets TypeORM's own
    // TransactionNotStartedError (isTransactionActive is false for them), never someone else's transaction ended.
    runner.commitTransaction = async () => {
      const mine = owners.getStore();
      if (!this.owns(mine) || runner.transactionDepth > 1) return commit();
      try {
        await commit();
      } finally {
        this.end(runner, mine, () => (active = false));
      }
    };

    runner.rollbackTransaction = async () => {
      const mine = owners.getStore();
      if (!this.owns(mine) || runner.transactionDepth > 1) return rollback();
      try {
        await rollback();
      } finally {
        this.end(runner, mine, () => (active = false));
      }
    };

    // Each `transaction()` call starts from no owner, so two calls begun together (Promise.all) get one
    // transaction each instead of the second becoming a savepoint of the first; inside a transaction's work the
    // owner is kept and a nested call is a savepoint, as TypeORM means it.
    const transaction = manager.transaction.bind(manager) as (...args: unknown[]) => Promise<unknown>;
    (manager as { transaction: (...args: unknown[]) => Promise<unknown> }).transaction = (
      ...args: unknown[]
    ) => {
      if (this.owns(owners.getStore())) return transaction(...args);
      return owners.run(new Owner(), () => transaction(...args));
    };
  }

  private owns(owner: Owner | undefined): owner is Owner {
    return owner !== undefined && owner === this.current && !owner.done;
  }

  private end(runner: RunnerState, owner: Owner, clear: () => void): void {
    try {
      this.settle(runner, clear);
    } finally {
      this.release(owner);
    }
  }

  /** After a top-level transaction: the connection in autocommit, TypeORM's flags to match. */
  private settle(runner: RunnerState, clear: () => void): void {
    const db = this.connection();
    if (db.inTransaction) {
      try {
        db.exec('ROLLBACK');
      } catch {
        // Reported below: a connection that cannot leave its transaction takes no more work.
      }
    }
    clear();
    runner.transactionDepth = 0;
    if (db.inTransaction) {
      throw new Error('SQLite connection could not leave a failed transaction');
    }
  }

  private acquire(owner: Owner): Promise<void> {
    if (this.current === undefined) {
      this.current = owner;
      this.leaveStaleTransaction();
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push({ owner, resolve }));
  }

  private release(owner: Owner): void {
    owner.done = true;
    if (this.current !== owner) return;
    const next = this.waiting.shift();
    this.current = next?.owner;
    if (next !== undefined) {
      this.leaveStaleTransaction();
      next.resolve();
    }
  }

  /** A raw-SQL section that died half-way may have left BEGIN behind; the next owner starts clean. */
  private leaveStaleTransaction(): void {
    const db = this.connection();
    if (!db.inTransaction) return;
    try {
      db.exec('ROLLBACK');
    } catch {
      // The next statement reports the connection's state.
    }
  }
}

/**
 * Puts the SQLite data source's one connection under SqliteConnectionOwner (no-op for PostgreSQL, whose
 * transactions each get a pooled connection). Call before `initialize()`: the shared runner is made on first use.
 */
export function ownSqliteConnection(dataSource: DataSource): void {
  if (dataSource.options.type !== 'better-sqlite3' || installed.has(dataSource)) return;
  const driver = dataSource.driver as DataSource['driver'] & { databaseConnection: BetterSqlite3.Database };
  const owner = new SqliteConnectionOwner(() => driver.databaseConnection);
  installed.set(dataSource, owner);
  const create = driver.createQueryRunner.bind(driver);
  let runner: RunnerState | undefined;
  driver.createQueryRunner = (mode) => {
    const created = create(mode) as RunnerState;
    if (runner !== created) {
      runner = created;
      owner.install(created, dataSource.manager);
    }
    return created;
  };
}

/**
 * Runs `work` with the SQLite connection to itself (raw SQL managing its own transaction: migrations, replication's
 * synchronous transactions); on PostgreSQL it simply runs.
 */
export function withSqliteConnection<T>(dataSource: DataSource, work: () => T | Promise<T>): Promise<T> {
  const owner = installed.get(dataSource);
  return owner === undefined ? Promise.resolve().then(work) : owner.exclusive(work);
}
