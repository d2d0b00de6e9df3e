// Counts the statements the database driver executes while `work` runs: better-sqlite3 statement executions or
// pg client queries. Counted at the driver, below the code under test, so the count cannot be talked down.
import type BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import type { TestApp } from '../support/test-app.js';

type Method = (...args: unknown[]) => unknown;

export async function countQueries<T>(
  t: TestApp,
  work: () => Promise<T>,
): Promise<{ result: T; queries: number }> {
  let queries = 0;
  const patches: Array<() => void> = [];
  const patch = (target: object, names: readonly string[]): void => {
    const record = target as Record<string, Method>;
    for (const name of names) {
      const original = record[name];
      record[name] = function (this: unknown, ...args: unknown[]) {
        queries++;
        return original.apply(this, args);
      };
      patches.push(() => {
        record[name] = original;
      });
    }
  };
  if (t.dataSource.options.type === 'postgres') {
    patch(pg.Client.prototype, ['query']);
  } else {
    const db = (t.dataSource.driver as unknown as { databaseConnection: BetterSqlite3.Database })
      .databaseConnection;
    patch(Object.getPrototypeOf(db.prepare('SELECT 1')) as object, ['all', 'get', 'run', 'iterate']);
    patch(db, ['exec']);
  }
  try {
    const result = await work();
    return { result, queries };
  } finally {
    for (const restore of patches.reverse()) restore();
  }
}
