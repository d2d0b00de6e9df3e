// The declared table list (migrations/tables.ts) against the schema the migrations really make: a table the
// migrations create but the list forgets would silently be left out of every copy and backup.
import { describe, expect, it } from '@jest/globals';
import type BetterSqlite3 from 'better-sqlite3';
// The area modules register their entities when imported (entity-registry.ts).
import '../../app.module.js';
import { MIGRATIONS } from '../../../migrations/index.js';
import { NOT_DATA_TABLES, TABLES } from '../../../migrations/tables.js';
import { MigrationRunner } from '../migration-runner.js';
import { openDatabase } from '../data-source.js';
import { sqliteRaw } from './raw-database.js';
import { expectedSchema, schemaDrift } from './schema-check.js';

async function migratedSqlite(): Promise<{ db: BetterSqlite3.Database; close: () => Promise<void> }> {
  const dataSource = await openDatabase('sqlite::memory:', { migrations: MIGRATIONS });
  await new MigrationRunner(dataSource).runPending('cli');
  const db = (dataSource.driver as unknown as { databaseConnection: BetterSqlite3.Database })
    .databaseConnection;
  return { db, close: () => dataSource.destroy() };
}

describe('migrations/tables.ts', () => {
  it('names every table a fresh migrated database has, and no other', async () => {
    const { db, close } = await migratedSqlite();
    try {
      const created = (
        db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[]
      )
        .filter((name) => !NOT_DATA_TABLES.includes(name))
        .sort();
      expect(TABLES.map((table) => table.name).sort()).toEqual(created);
    } finally {
      await close();
    }
  });

  it("finds no drift in a database that ANALYZE has given SQLite's statistics tables", async () => {
    const { db, close } = await migratedSqlite();
    try {
      db.exec('ANALYZE');
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all();
      expect(tables).toContain('sqlite_stat1');
      expect(schemaDrift(await sqliteRaw(db).schema(), await expectedSchema())).toEqual([]);
    } finally {
      await close();
    }
  });

  it('lists a table after every table its foreign keys reference and after every table whose triggers write it', async () => {
    const { db, close } = await migratedSqlite();
    try {
      const position = new Map(TABLES.map((table, index) => [table.name, index]));
      for (const { name } of TABLES) {
        const references = db.prepare(`PRAGMA foreign_key_list("${name}")`).all() as Array<{ table: string }>;
        for (const reference of references) {
          expect({
            table: name,
            after: reference.table,
            ok: position.get(reference.table)! < position.get(name)!,
          }).toEqual({ table: name, after: reference.table, ok: true });
        }
      }
      const triggers = db
        .prepare("SELECT tbl_name, sql FROM sqlite_master WHERE type = 'trigger'")
        .all() as Array<{
        tbl_name: string;
        sql: string;
      }>;
      expect(triggers.length).toBeGreaterThan(0);
      for (const trigger of triggers) {
        for (const [, written] of trigger.sql
          .slice(trigger.sql.search(/\bBEGIN\b/i))
          // String literals are messages (e.g. RAISE(ABORT, '… UPDATE refused')), not statements.
          .replace(/'(?:[^']|'')*'/g, "''")
          .matchAll(/(?:UPDATE|INSERT INTO|DELETE FROM)\s+"?(\w+)"?/gi)) {
          expect({
            written,
            by: trigger.tbl_name,
            ok: position.get(written)! > position.get(trigger.tbl_name)!,
          }).toEqual({
            written,
            by: trigger.tbl_name,
            ok: true,
          });
        }
      }
    } finally {
      await close();
    }
  });

  it('declares sequences only on columns that exist', async () => {
    const { db, close } = await migratedSqlite();
    try {
      for (const table of TABLES.filter((candidate) => candidate.sequence !== undefined)) {
        const columns = (
          db.prepare(`PRAGMA table_info("${table.name}")`).all() as Array<{ name: string }>
        ).map((column) => column.name);
        expect(columns).toContain(table.sequence);
      }
    } finally {
      await close();
    }
  });
});
