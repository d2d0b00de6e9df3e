// The replication area's one path to the database: plain SQL that runs unchanged on SQLite (≥ 3.24 for upserts,
// ≥ 3.25 for window functions) and PostgreSQL, with `?` placeholders rewritten to `$n` for PostgreSQL.
//
// Why not the TypeORM repository API here: watermarks must only move forward under concurrent reports, which
// takes conditional upserts (`ON CONFLICT … DO UPDATE … WHERE excluded.applied > applied`), and the diagnosis must
// cost a fixed number of queries. Why SQLite statements go to the better-sqlite3 connection directly: its
// synchronous transaction runs start to commit without yielding, so concurrent reports cannot mix; they take the
// connection in turn with every other user of it (src/database/sqlite-transactions.ts), never inside another
// flow's open transaction.
import type BetterSqlite3 from 'better-sqlite3';
import type { DataSource, QueryResult } from 'typeorm';
import { withSqliteConnection } from '../database/sqlite-transactions.js';

export type SqlParam = string | number | null;

export interface SqlStatement {
  sql: string;
  params: readonly SqlParam[];
}

export type SqlDialect = 'sqlite' | 'postgres';

export class ReplicationSql {
  readonly dialect: SqlDialect;
  private readonly statements = new Map<string, BetterSqlite3.Statement>();

  constructor(private readonly dataSource: DataSource) {
    this.dialect = dataSource.options.type === 'postgres' ? 'postgres' : 'sqlite';
  }

  /** A Date as the column stores it: TypeORM's SQLite `datetime` text (UTC, sortable) or an ISO instant. */
  instant(date: Date): string {
    return this.dialect === 'sqlite'
      ? date.toISOString().replace('T', ' ').replace('Z', '')
      : date.toISOString();
  }

  /**
   * A selected instant in the form that reads fastest: on SQLite, milliseconds since the epoch computed by SQLite
   * itself (parsing thousands of datetime strings in JS dominated a 2,000-node diagnosis); on PostgreSQL the
   * timestamptz the driver already turns into a Date. `readInstant` accepts both.
   */
  readableInstant(expression: string, alias: string): string {
    return this.dialect === 'sqlite'
      ? `CAST(ROUND((julianday(${expression}) - 2440587.5) * 86400000) AS INTEGER) AS ${alias}`
      : `${expression} AS ${alias}`;
  }

  async all<Row>(sql: string, params: readonly SqlParam[] = []): Promise<Row[]> {
    if (this.dialect === 'postgres') return this.dataSource.query<Row[]>(toPostgres(sql), [...params]);
    return withSqliteConnection(this.dataSource, () => this.prepare(sql).all(...params) as Row[]);
  }

  /** Runs the statements in one transaction; answers the number of rows each one changed. */
  async transaction(statements: readonly SqlStatement[]): Promise<number[]> {
    if (this.dialect === 'postgres') return this.postgresTransaction(statements);
    const run = this.sqlite.transaction(() =>
      statements.map((statement) => this.prepare(statement.sql).run(...statement.params).changes),
    );
    // IMMEDIATE takes the write lock up front, so another process cannot slip in between read and write.
    return withSqliteConnection(this.dataSource, () => run.immediate());
  }

  private async postgresTransaction(statements: readonly SqlStatement[]): Promise<number[]> {
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction();
      const changed: number[] = [];
      for (const statement of statements) {
        const result: QueryResult = await runner.query(
          toPostgres(statement.sql),
          [...statement.params],
          true,
        );
        changed.push(result.affected ?? 0);
      }
      await runner.commitTransaction();
      return changed;
    } catch (error) {
      if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
      throw error;
    } finally {
      await runner.release();
    }
  }

  private get sqlite(): BetterSqlite3.Database {
    return (this.dataSource.driver as unknown as { databaseConnection: BetterSqlite3.Database })
      .databaseConnection;
  }

  private prepare(sql: string): BetterSqlite3.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.sqlite.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }
}

/** `?` → `$1, $2, …` (the statements of this area contain no `?` inside literals). */
export function toPostgres(sql: string): string {
  let index = 0;
  return sql.replace(/\?/g, () => `$${++index}`);
}

/** TypeORM's SQLite datetime text: UTC, `YYYY-MM-DD HH:MM:SS[.fff]`. */
const SQLITE_DATETIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?$/;

/** Instants come back as Date (PostgreSQL), epoch milliseconds (readableInstant on SQLite) or SQLite datetime text. */
export function readInstant(value: unknown): Date | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value;
  if (typeof value === 'number') return Number.isFinite(value) ? new Date(value) : null;
  if (typeof value === 'string') {
    const sqlite = SQLITE_DATETIME.exec(value);
    // The hot path of a 2,000-node diagnosis: field arithmetic instead of the generic date parser.
    const date = sqlite
      ? new Date(
          Date.UTC(
            Number(sqlite[1]),
            Number(sqlite[2]) - 1,
            Number(sqlite[3]),
            Number(sqlite[4]),
            Number(sqlite[5]),
            Number(sqlite[6]),
            Number((sqlite[7] ?? '').padEnd(3, '0').slice(0, 3)),
          ),
        )
      : new Date(value);
    return Number.isNaN(date.getTime()) ? null : date;
  }
  return null;
}

/** bigint comes back as text from PostgreSQL. */
export function readNumber(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  const number = typeof value === 'number' ? value : Number(value);
  return Number.isFinite(number) ? number : null;
}
