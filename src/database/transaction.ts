// Transactions that work the same on both engines. TypeORM runs all SQLite work on one shared query runner, so two
// `dataSource.transaction()` calls in flight at once would nest and interleave their statements; on SQLite they
// are therefore run one after another here. PostgreSQL transactions each get their own pooled connection.
import type { DataSource, EntityManager } from 'typeorm';

const sqliteQueues = new WeakMap<DataSource, Promise<unknown>>();

export function inTransaction<T>(
  dataSource: DataSource,
  work: (manager: EntityManager) => Promise<T>,
): Promise<T> {
  if (dataSource.options.type === 'postgres') return dataSource.transaction(work);
  const previous = sqliteQueues.get(dataSource) ?? Promise.resolve();
  const result = previous.then(() => dataSource.transaction(work));
  sqliteQueues.set(
    dataSource,
    result.catch(() => undefined),
  );
  return result;
}
