// The copy's own connections, beside the service's DataSource: a read snapshot to stream rows from, and one
// write transaction to load them into. Values stay raw (PostgreSQL's text output is not parsed); column-values.ts
// converts them. Rows are streamed in batches (better-sqlite3 `iterate()`, a PostgreSQL cursor), so memory is
// bounded by the batch, not by the table.
import { once } from 'node:events';
import Database from 'better-sqlite3';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import QueryStream from 'pg-query-stream';
import type { DatabaseConfig } from '../../config/config.js';
import { jsonColumns } from '../portable-columns.js';
import { kindOfDeclaredType, toCopyField, toSqlite, type ColumnKind } from './column-values.js';

export interface ColumnInfo {
  name: string;
  kind: ColumnKind;
}

export interface TableInfo {
  columns: ColumnInfo[];
  primaryKey: string[];
}

export type Schema = Map<string, TableInfo>;

export interface RawDatabase {
  readonly engine: 'sqlite' | 'postgres';
  schema(): Promise<Schema>;
  migrationNames(): Promise<string[]>;
  count(table: string): Promise<number>;
  /** Runs a statement, handing each result row (as an array) to `each`. */
  query(sql: string, each: (row: unknown[]) => void): Promise<void>;
  rows(table: string, columns: readonly string[], batchSize: number): AsyncGenerator<unknown[][]>;
  sequenceValue(table: string, column: string): Promise<number>;
  /** Every statement until commit/rollback belongs to one snapshot (reading) or one transaction (writing). */
  beginRead(): Promise<void>;
  beginWrite(): Promise<void>;
  empty(tables: readonly string[]): Promise<void>;
  load(table: string, columns: readonly ColumnInfo[], batches: AsyncIterable<unknown[][]>): Promise<void>;
  execute(sql: string): Promise<void>;
  setSequence(table: string, column: string, atLeast: number): Promise<void>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
  close(): Promise<void>;
}

const quote = (name: string): string => `"${name.replaceAll('"', '""')}"`;

export async function openRaw(
  database: DatabaseConfig,
  options: { readonly?: boolean } = {},
): Promise<RawDatabase> {
  if (database.type === 'postgres') {
    const client = new pg.Client({
      connectionString: database.url,
      types: RAW_TYPES,
      application_name: 'platform-api db',
    });
    await client.connect();
    // A dropped connection rejects the query in flight; without a listener the event would end the process.
    client.on('error', () => undefined);
    return postgresRaw(client, () => client.end());
  }
  if (database.database === ':memory:')
    throw new Error('sqlite::memory: is not a database another process can copy');
  const db = new Database(database.database, { readonly: options.readonly ?? false, timeout: 30_000 });
  if (!options.readonly) db.pragma('foreign_keys = ON');
  return new SqliteRaw(db);
}

/** Every value as PostgreSQL's text: nothing is lost or reshaped on the way through. */
const RAW_TYPES = { getTypeParser: () => (text: string) => text };

/**
 * An open PostgreSQL connection (its own, or a TypeORM query runner's, which parses values its own way) seen
 * through the same interface: each statement asks for text values itself. `end` runs on close().
 */
export async function postgresRaw(client: pg.ClientBase, end: () => Promise<void>): Promise<RawDatabase> {
  await client.query("SET TIME ZONE 'UTC'");
  return new PostgresRaw(client, end);
}

/** An open better-sqlite3 connection (e.g. a DataSource's) seen through the same interface. */
export function sqliteRaw(db: Database.Database): RawDatabase {
  return new SqliteRaw(db);
}

/** What the COPY stream buffers before the copy waits for the server (~4 batches of schedule rows). */
const COPY_BUFFER_BYTES = 1 << 20;

/** Multi-row INSERTs stay under SQLite's limit of bound parameters (32,766). */
const SQLITE_MAX_PARAMETERS = 30_000;

class SqliteRaw implements RawDatabase {
  readonly engine = 'sqlite';

  constructor(readonly db: Database.Database) {}

  schema(): Promise<Schema> {
    const schema: Schema = new Map();
    const json = jsonColumns();
    const tables = this.db
      // Names beginning with sqlite_ are SQLite's own (sqlite_sequence, and the sqlite_stat1..4 that ANALYZE or
      // PRAGMA optimize create): never the service's tables, never drift.
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
      )
      .pluck()
      .all() as string[];
    for (const table of tables) {
      const info = this.db.prepare(`PRAGMA table_info(${quote(table)})`).all() as Array<{
        name: string;
        type: string;
        pk: number;
      }>;
      schema.set(table, {
        // JSON is plain text on SQLite: the entities' JSON columns say which (jsonb on PostgreSQL).
        columns: info.map((column) => ({
          name: column.name,
          kind: json.has(`${table}.${column.name}`) ? 'json' : kindOfDeclaredType(column.type),
        })),
        primaryKey: info
          .filter((column) => column.pk > 0)
          .sort((a, b) => a.pk - b.pk)
          .map((column) => column.name),
      });
    }
    return Promise.resolve(schema);
  }

  query(sql: string, each: (row: unknown[]) => void): Promise<void> {
    for (const row of this.db.prepare(sql).raw(true).all() as unknown[][]) each(row);
    return Promise.resolve();
  }

  migrationNames(): Promise<string[]> {
    const exists = this.db
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'migrations'")
      .get();
    if (!exists) return Promise.resolve([]);
    return Promise.resolve(
      this.db.prepare('SELECT name FROM migrations ORDER BY id').pluck().all() as string[],
    );
  }

  count(table: string): Promise<number> {
    return Promise.resolve(
      Number(
        this.db
          .prepare(`SELECT COUNT(*) FROM ${quote(table)}`)
          .pluck()
          .get(),
      ),
    );
  }

  async *rows(table: string, columns: readonly string[], batchSize: number): AsyncGenerator<unknown[][]> {
    const statement = this.db
      .prepare(`SELECT ${columns.map(quote).join(', ')} FROM ${quote(table)}`)
      .raw(true);
    let batch: unknown[][] = [];
    for (const row of statement.iterate() as IterableIterator<unknown[]>) {
      batch.push(row);
      if (batch.length < batchSize) continue;
      yield batch;
      batch = [];
      // Between batches: a Ctrl-C or a progress redraw gets its turn.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    if (batch.length > 0) yield batch;
  }

  sequenceValue(table: string): Promise<number> {
    const hasSequences = this.db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence'").get();
    if (!hasSequences) return Promise.resolve(0);
    const value = this.db.prepare('SELECT seq FROM sqlite_sequence WHERE name = ?').pluck().get(table);
    return Promise.resolve(Number(value ?? 0));
  }

  beginRead(): Promise<void> {
    // A deferred transaction's snapshot starts at its first read; read one at once so every table shares it.
    this.db.exec('BEGIN');
    this.db.prepare('SELECT COUNT(*) FROM sqlite_master').get();
    return Promise.resolve();
  }

  beginWrite(): Promise<void> {
    this.db.exec('BEGIN IMMEDIATE');
    return Promise.resolve();
  }

  empty(tables: readonly string[]): Promise<void> {
    for (const table of [...tables].reverse()) this.db.exec(`DELETE FROM ${quote(table)}`);
    return Promise.resolve();
  }

  async load(
    table: string,
    columns: readonly ColumnInfo[],
    batches: AsyncIterable<unknown[][]>,
  ): Promise<void> {
    const perRow = `(${columns.map(() => '?').join(', ')})`;
    const head = `INSERT INTO ${quote(table)} (${columns.map((column) => quote(column.name)).join(', ')}) VALUES `;
    const statements = new Map<number, Database.Statement>();
    const statementFor = (rows: number): Database.Statement => {
      let statement = statements.get(rows);
      if (!statement) {
        statement = this.db.prepare(head + Array.from({ length: rows }, () => perRow).join(', '));
        statements.set(rows, statement);
      }
      return statement;
    };
    const rowsPerInsert = Math.max(1, Math.min(500, Math.floor(SQLITE_MAX_PARAMETERS / columns.length)));
    for await (const batch of batches) {
      for (let start = 0; start < batch.length; start += rowsPerInsert) {
        const slice = batch.slice(start, start + rowsPerInsert);
        const values: unknown[] = [];
        for (const row of slice) {
          for (let index = 0; index < columns.length; index++)
            values.push(toSqlite(columns[index].kind, row[index]));
        }
        statementFor(slice.length).run(values);
      }
    }
  }

  execute(sql: string): Promise<void> {
    this.db.exec(sql);
    return Promise.resolve();
  }

  setSequence(table: string, column: string, atLeast: number): Promise<void> {
    const max = Number(
      this.db
        .prepare(`SELECT COALESCE(MAX(${quote(column)}), 0) FROM ${quote(table)}`)
        .pluck()
        .get(),
    );
    const value = Math.max(max, atLeast);
    this.db.prepare('DELETE FROM sqlite_sequence WHERE name = ?').run(table);
    if (value > 0)
      this.db.prepare('INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)').run(table, BigInt(value));
    return Promise.resolve();
  }

  commit(): Promise<void> {
    this.db.exec('COMMIT');
    return Promise.resolve();
  }

  rollback(): Promise<void> {
    if (this.db.inTransaction) this.db.exec('ROLLBACK');
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.db.close();
    return Promise.resolve();
  }
}

class PostgresRaw implements RawDatabase {
  readonly engine = 'postgres';

  constructor(
    private readonly client: pg.ClientBase,
    private readonly end: () => Promise<void>,
  ) {}

  private run<Row extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<Row>> {
    return this.client.query<Row>({ text, values, types: RAW_TYPES });
  }

  async schema(): Promise<Schema> {
    const columns = await this.run<{ table_name: string; column_name: string; data_type: string }>(
      `SELECT table_name, column_name, data_type FROM information_schema.columns
        WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`,
    );
    const keys = await this.run<{ table_name: string; column_name: string }>(
      `SELECT k.table_name, k.column_name FROM information_schema.table_constraints c
         JOIN information_schema.key_column_usage k
           ON k.constraint_name = c.constraint_name AND k.table_schema = c.table_schema
        WHERE c.constraint_type = 'PRIMARY KEY' AND c.table_schema = current_schema()
        ORDER BY k.table_name, k.ordinal_position`,
    );
    const schema: Schema = new Map();
    for (const row of columns.rows) {
      const table = schema.get(row.table_name) ?? { columns: [], primaryKey: [] };
      table.columns.push({ name: row.column_name, kind: kindOfDeclaredType(row.data_type) });
      schema.set(row.table_name, table);
    }
    for (const row of keys.rows) schema.get(row.table_name)?.primaryKey.push(row.column_name);
    return schema;
  }

  async query(sql: string, each: (row: unknown[]) => void): Promise<void> {
    const result = await this.client.query({ text: sql, rowMode: 'array', types: RAW_TYPES });
    for (const row of result.rows as unknown[][]) each(row);
  }

  async migrationNames(): Promise<string[]> {
    const exists = await this.run("SELECT to_regclass('migrations') IS NOT NULL AS present");
    if ((exists.rows[0] as { present: string }).present !== 't') return [];
    const result = await this.run<{ name: string }>('SELECT name FROM migrations ORDER BY id');
    return result.rows.map((row) => row.name);
  }

  async count(table: string): Promise<number> {
    const result = await this.run<{ count: string }>(`SELECT COUNT(*) AS count FROM ${quote(table)}`);
    return Number(result.rows[0].count);
  }

  async *rows(table: string, columns: readonly string[], batchSize: number): AsyncGenerator<unknown[][]> {
    const stream = this.client.query(
      new QueryStream(`SELECT ${columns.map(quote).join(', ')} FROM ${quote(table)}`, [], {
        batchSize,
        rowMode: 'array',
      }),
    );
    let batch: unknown[][] = [];
    for await (const row of stream as AsyncIterable<unknown[]>) {
      batch.push(row);
      if (batch.length < batchSize) continue;
      yield batch;
      batch = [];
    }
    if (batch.length > 0) yield batch;
  }

  async sequenceValue(table: string, column: string): Promise<number> {
    const result = await this.run<{ name: string | null }>('SELECT pg_get_serial_sequence($1, $2) AS name', [
      table,
      column,
    ]);
    const name = result.rows[0]?.name;
    if (!name) return 0;
    const state = await this.run<{ last_value: string; is_called: string }>(
      `SELECT last_value, is_called FROM ${name}`,
    );
    const row = state.rows[0];
    return row.is_called === 't' ? Number(row.last_value) : Number(row.last_value) - 1;
  }

  async beginRead(): Promise<void> {
    await this.run('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  }

  async beginWrite(): Promise<void> {
    await this.run('BEGIN');
  }

  async empty(tables: readonly string[]): Promise<void> {
    // One TRUNCATE for all: fast, transactional, and no row triggers fire.
    // The audit trail's append-only trigger lets a TRUNCATE through only in a transaction that says so.
    await this.run("SELECT set_config('platform.audit_maintenance', 'on', true)");
    if (tables.length > 0) await this.run(`TRUNCATE ${tables.map(quote).join(', ')}`);
  }

  async load(
    table: string,
    columns: readonly ColumnInfo[],
    batches: AsyncIterable<unknown[][]>,
  ): Promise<void> {
    // A few batches may wait in the stream, so the next batch is read and formatted while the server takes this one.
    const stream = this.client.query(
      copyFrom(
        `COPY ${quote(table)} (${columns.map((column) => quote(column.name)).join(', ')}) FROM STDIN`,
        {
          highWaterMark: COPY_BUFFER_BYTES,
        },
      ),
    );
    const finished = once(stream, 'finish');
    // A failed COPY (a constraint, a lost connection) errors the stream; surface that rather than a write error.
    let failure: unknown;
    stream.on('error', (error) => (failure ??= error));
    for await (const batch of batches) {
      if (failure !== undefined) break;
      let chunk = '';
      for (const row of batch) {
        chunk += row.map((value, index) => toCopyField(columns[index].kind, value)).join('\t') + '\n';
      }
      if (!stream.write(chunk))
        await Promise.race([once(stream, 'drain'), once(stream, 'error')]).catch(() => undefined);
    }
    if (failure !== undefined) throw failure as Error;
    stream.end();
    await Promise.race([finished, once(stream, 'error').then(([error]) => Promise.reject(error as Error))]);
  }

  async execute(sql: string): Promise<void> {
    await this.run(sql);
  }

  async setSequence(table: string, column: string, atLeast: number): Promise<void> {
    await this.run(
      `SELECT setval(pg_get_serial_sequence($1, $2), GREATEST(COALESCE(MAX(${quote(column)}), 0), $3::bigint, 1),
                     GREATEST(COALESCE(MAX(${quote(column)}), 0), $3::bigint) > 0)
         FROM ${quote(table)}`,
      [table, column, atLeast],
    );
  }

  async commit(): Promise<void> {
    await this.run('COMMIT');
  }

  async rollback(): Promise<void> {
    await this.run('ROLLBACK').catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.end().catch(() => undefined);
  }
}
