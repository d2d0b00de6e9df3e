// Transactions that work the same on both engines, optionally with a record written inside them. On SQLite each
// transaction has the connection to itself until it ends (sqlite-transactions.ts); on PostgreSQL its own pooled
// connection.
import type { DataSource, EntityManager } from 'typeorm';

/**
 * Rows written in the same transaction as the work, so all are stored or none is: a creating POST's
 * `Idempotency-Key` record and its answer (src/http/idempotency.ts). Claimed before the work, so a concurrent
 * request with the same key waits on (and fails at) the record's primary key, not on the resource's own unique
 * indexes; completed after it, from the work's result, so the answer commits with what it describes.
 */
export interface TransactionalRecord<T> {
  claimIn(manager: EntityManager): Promise<void>;
  completeIn(manager: EntityManager, result: T): Promise<void>;
}

export interface TransactionOptions<T> {
  /** Claimed first and completed last, inside the transaction; when either throws, all is rolled back. */
  record?: TransactionalRecord<T>;
}

export function inTransaction<T>(
  dataSource: DataSource,
  work: (manager: EntityManager) => Promise<T>,
  options: TransactionOptions<NoInfer<T>> = {},
): Promise<T> {
  const record = options.record;
  const run =
    record === undefined
      ? work
      : async (manager: EntityManager): Promise<T> => {
          await record.claimIn(manager);
          const result = await work(manager);
          await record.completeIn(manager, result);
          return result;
        };
  return dataSource.transaction(run);
}

/**
 * The record completed from what a service makes of the work's result (its own result type), computed inside the
 * transaction; `map` may read through the transaction's manager.
 */
export function mapRecord<A, B>(
  record: TransactionalRecord<B> | undefined,
  map: (result: A, manager: EntityManager) => B | Promise<B>,
): TransactionalRecord<A> | undefined {
  if (record === undefined) return undefined;
  return {
    claimIn: (manager) => record.claimIn(manager),
    completeIn: async (manager, result) => record.completeIn(manager, await map(result, manager)),
  };
}
