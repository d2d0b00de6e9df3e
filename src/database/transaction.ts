// Transactions that work the same on both engines, optionally with a record written inside them. On SQLite each
// transaction has the connection to itself until it ends (sqlite-transactions.ts); on PostgreSQL its own pooled
// connection.
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
  return dataSource.transaction(run);
}
