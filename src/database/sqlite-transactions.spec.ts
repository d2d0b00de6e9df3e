// The shared SQLite connection under load and under a full storage. A full disk is SQLite's
// `max_page_count` here (the same SQLITE_FULL a full file system gives, without mounting one); what reached the
// file is read through a second, independent connection.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3';
import { DataSource, EntitySchema } from 'typeorm';
import { classifyDatabaseError } from './database-failures.js';
import { ownSqliteConnection, withSqliteConnection } from './sqlite-transactions.js';

interface Note {
  id: number;
  body: string;
}

const NoteSchema = new EntitySchema<Note>({
  name: 'Note',
  tableName: 'notes',
  columns: {
    id: { type: Number, primary: true, generated: 'increment' },
    body: { type: String },
  },
});

let dir: string;
let file: string;
let dataSource: DataSource;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sqlite-tx-'));
  file = path.join(dir, 'db.sqlite');
  dataSource = new DataSource({
    type: 'better-sqlite3',
    database: file,
    entities: [NoteSchema],
    enableWAL: true,
    synchronize: false,
  });
  ownSqliteConnection(dataSource);
  await dataSource.initialize();
  await dataSource.query('CREATE TABLE notes (id INTEGER PRIMARY KEY AUTOINCREMENT, body TEXT NOT NULL)');
});

afterEach(async () => {
  await dataSource.destroy();
  fs.rmSync(dir, { recursive: true, force: true });
});

const connection = (): Database.Database =>
  (dataSource.driver as unknown as { databaseConnection: Database.Database }).databaseConnection;

/** What is in the file, as another process would see it. */
function stored(): string[] {
  const reader = new Database(file, { readonly: true });
  try {
    return (reader.prepare('SELECT body FROM notes ORDER BY id').all() as Array<{ body: string }>).map(
      (row) => row.body,
    );
  } finally {
    reader.close();
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('one owner of the SQLite connection at a time', () => {
  it('keeps a concurrent transaction out of one that rolls back', async () => {
    const failing = dataSource.transaction(async (manager) => {
      await manager.insert(NoteSchema, { body: 'rolled back' });
      await pause(20);
      throw new Error('boom');
    });
    const committed = dataSource.transaction(async (manager) => {
      await manager.insert(NoteSchema, { body: 'kept' });
    });
    await expect(failing).rejects.toThrow('boom');
    await committed;
    expect(stored()).toEqual(['kept']);
  });

  it('keeps a plain statement out of another flow’s open transaction', async () => {
    const failing = dataSource.transaction(async (manager) => {
      await manager.insert(NoteSchema, { body: 'rolled back' });
      await pause(20);
      throw new Error('boom');
    });
    await pause(5);
    await dataSource.query(`INSERT INTO notes (body) VALUES ('autocommit')`);
    await dataSource.getRepository(NoteSchema).save({ body: 'saved' });
    await expect(failing).rejects.toThrow('boom');
    expect(stored()).toEqual(['autocommit', 'saved']);
  });

  it('nests a transaction begun inside another one as a savepoint of it', async () => {
    await dataSource.transaction(async (manager) => {
      await manager.insert(NoteSchema, { body: 'outer' });
      await expect(
        manager.transaction(async (inner) => {
          await inner.insert(NoteSchema, { body: 'inner' });
          throw new Error('inner fails');
        }),
      ).rejects.toThrow('inner fails');
    });
    expect(stored()).toEqual(['outer']);
  });

  it('serialises 50 concurrent transactions and saves, every one committed', async () => {
    const work = Array.from({ length: 50 }, (_, index) =>
      index % 2 === 0
        ? dataSource.transaction(async (manager) => {
            await manager.insert(NoteSchema, { body: `t${index}` });
            await pause(1);
            await manager.insert(NoteSchema, { body: `t${index}b` });
          })
        : dataSource.getRepository(NoteSchema).save({ body: `s${index}` }),
    );
    await Promise.all(work);
    expect(stored()).toHaveLength(75);
    expect(connection().inTransaction).toBe(false);
  });

  it('gives a raw-SQL section the connection alone', async () => {
    const open = dataSource.transaction(async (manager) => {
      await manager.insert(NoteSchema, { body: 'first' });
      await pause(20);
    });
    await pause(5);
    const seen = await withSqliteConnection(dataSource, () => connection().inTransaction);
    await open;
    expect(seen).toBe(false);
  });
});

describe('a full storage', () => {
  async function fill(): Promise<number> {
    const pageSize = (connection().pragma('page_size', { simple: true }) as number) || 4096;
    const pages = connection().pragma('page_count', { simple: true }) as number;
    connection().pragma(`max_page_count = ${pages + 2}`);
    let stored = 0;
    for (let attempt = 0; attempt < 50; attempt += 1) {
      try {
        await dataSource.transaction(async (manager) => {
          await manager.insert(NoteSchema, { body: 'x'.repeat(pageSize) });
        });
        stored += 1;
      } catch (error) {
        expect(classifyDatabaseError(error)).toBe('storage-full');
        return stored;
      }
    }
    throw new Error('the storage never filled');
  }

  it('refuses writes while full, leaves no transaction open, and stores them again once space is back', async () => {
    await dataSource.getRepository(NoteSchema).save({ body: 'before' });
    const before = stored().length;
    const accepted = await fill();
    expect(connection().inTransaction).toBe(false);
    // Every kind of write while full is refused, none answered as stored.
    await expect(dataSource.getRepository(NoteSchema).save({ body: 'y'.repeat(9_000) })).rejects.toThrow();
    await expect(
      dataSource.transaction((manager) => manager.insert(NoteSchema, { body: 'z'.repeat(9_000) })),
    ).rejects.toThrow();
    expect(connection().inTransaction).toBe(false);
    expect(stored()).toHaveLength(before + accepted);

    connection().pragma('max_page_count = 1073741823');
    await dataSource.transaction((manager) => manager.insert(NoteSchema, { body: 'after-tx' }));
    await dataSource.getRepository(NoteSchema).save({ body: 'after-save' });
    await dataSource.query(`INSERT INTO notes (body) VALUES ('after-query')`);
    expect(stored().slice(-3)).toEqual(['after-tx', 'after-save', 'after-query']);
    expect(connection().inTransaction).toBe(false);
  });

  it('ends a transaction SQLite left open after a failed statement, so later work is not swallowed by it', async () => {
    const accepted = await fill();
    expect(accepted).toBeGreaterThanOrEqual(0);
    // A transaction whose work catches the failure and goes on: the rest must not run in autocommit or stay open.
    await expect(
      dataSource.transaction(async (manager) => {
        await manager.insert(NoteSchema, { body: 'a' }).catch(() => undefined);
        await manager.insert(NoteSchema, { body: 'b'.repeat(20_000) }).catch(() => undefined);
        await manager.insert(NoteSchema, { body: 'c' });
      }),
    ).rejects.toThrow();
    connection().pragma('max_page_count = 1073741823');
    await dataSource.transaction((manager) => manager.insert(NoteSchema, { body: 'later' }));
    expect(connection().inTransaction).toBe(false);
    expect(stored()).toContain('later');
    expect(stored()).not.toContain('c');
  });

  it('refuses writes to a read-only database as unavailable and stores them once it is writable again', async () => {
    connection().pragma('query_only = ON');
    const refused = await dataSource
      .transaction((manager) => manager.insert(NoteSchema, { body: 'refused' }))
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(classifyDatabaseError(refused)).toBe('unavailable');
    expect(connection().inTransaction).toBe(false);
    connection().pragma('query_only = OFF');
    await dataSource.getRepository(NoteSchema).save({ body: 'writable' });
    expect(stored()).toEqual(['writable']);
  });
});
