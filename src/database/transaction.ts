// Transactions that work the same on both engines. TypeORM runs all SQLite work on one shared query runner, so two
// `dataSource.transaction()` calls in flight at once would nest and interleave their statements; on SQLite they
// are therefore run one after another here. PostgreSQL transactions each get their own pooled connection.
import type { DataSource, EntityManager } from 'typeorm';

/**
 * A row written in the same transaction as the work, so both are stored or neither is: a creating POST's
 * `Idempotency-Key` record (src/http/idempotency.ts). Written before the work: a concurrent request with the
 * same key then waits on (and fails at) the record's primary key, not on the resource's own unique indexes.
 */
export interface TransactionalRecord {
  writeIn(manager: EntityManager): Promise<void>;
}

export interface TransactionOptions {
  /** Written first, inside the transaction; when it throws, the transaction is rolled back. */
  record?: TransactionalRecord;
}

const sqliteQueues = new WeakMap<DataSource, Promise<unknown>>();

export function inTransaction<T>(
  dataSource: DataSource,
  work: (manager: EntityManager) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  const record = options.record;
  const run =
    record === undefined
      ? work
      : async (manager: EntityManager): Promise<T> => {
          await record.writeIn(manager);
          return work(manager);
        };
  if (dataSource.options.type === 'postgres') return dataSource.transaction(run);
  const previous = sqliteQueues.get(dataSource) ?? Promise.resolve();
  const result = previous.then(() => dataSource.transaction(run));
  sqliteQueues.set(
    dataSource,
    result.catch(() => undefined),
  );
  return result;
}
