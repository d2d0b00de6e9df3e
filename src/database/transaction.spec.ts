import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource, type EntityManager } from 'typeorm';
import { inTransaction, mapRecord, type TransactionalRecord } from './transaction.js';

/** A record that writes its claim and its completion into the `log` table, and can be told to fail. */
function loggingRecord<T>(fail?: 'claim' | 'complete'): TransactionalRecord<T> & { completedWith: T[] } {
  const completedWith: T[] = [];
  return {
    completedWith,
    claimIn: async (manager: EntityManager) => {
      await manager.query(`INSERT INTO log (what) VALUES ('claim')`);
      if (fail === 'claim') throw new Error('claim failed');
    },
    completeIn: async (manager: EntityManager, result: T) => {
      await manager.query(`INSERT INTO log (what) VALUES ('complete')`);
      completedWith.push(result);
      if (fail === 'complete') throw new Error('complete failed');
    },
  };
}

describe('inTransaction with a record', () => {
  const dataSource = new DataSource({ type: 'better-sqlite3', database: ':memory:' });
  const log = async () =>
    (await dataSource.query<Array<{ what: string }>>('SELECT what FROM log ORDER BY id')).map(
      (row) => row.what,
    );

  beforeAll(async () => {
    await dataSource.initialize();
    await dataSource.query('CREATE TABLE log (id INTEGER PRIMARY KEY, what TEXT NOT NULL)');
  });
  afterAll(() => dataSource.destroy());

  const work = async (manager: EntityManager) => {
    await manager.query(`INSERT INTO log (what) VALUES ('work')`);
    return 42;
  };

  it('claims before the work and completes after it, with its result, in one commit', async () => {
    await dataSource.query('DELETE FROM log');
    const record = loggingRecord<number>();
    await expect(inTransaction(dataSource, work, { record })).resolves.toBe(42);
    expect(await log()).toEqual(['claim', 'work', 'complete']);
    expect(record.completedWith).toEqual([42]);
  });

  it.each(['claim', 'complete'] as const)('stores nothing when the %s fails', async (fail) => {
    await dataSource.query('DELETE FROM log');
    await expect(inTransaction(dataSource, work, { record: loggingRecord<number>(fail) })).rejects.toThrow(
      `${fail} failed`,
    );
    expect(await log()).toEqual([]);
  });

  it('maps the work’s result for the record inside the transaction', async () => {
    await dataSource.query('DELETE FROM log');
    const record = loggingRecord<string>();
    const mapped = mapRecord(record, async (result: number, manager) => {
      const [{ count }] = await manager.query<Array<{ count: number }>>('SELECT COUNT(*) AS count FROM log');
      return `${result} after ${count} rows`;
    });
    await inTransaction(dataSource, work, { record: mapped });
    expect(record.completedWith).toEqual(['42 after 2 rows']);
    expect(mapRecord(undefined, String)).toBeUndefined();
  });
});
