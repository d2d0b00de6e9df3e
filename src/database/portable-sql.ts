// Raw SQL with the same text on SQLite and PostgreSQL: `$n` placeholders, rewritten to `?` for SQLite. For the few
// statements TypeORM's query builder cannot express portably (claims with SKIP LOCKED, upserts with RETURNING).
import type { DataSource, EntityManager } from 'typeorm';

export type SqlParam = string | number | null;
export type SqlRow = Record<string, unknown>;

/** Runs `sql` and returns its rows; with `manager`, inside that transaction. */
export async function portableQuery(
  dataSource: DataSource,
  sql: string,
  params: readonly SqlParam[],
  manager?: EntityManager,
): Promise<SqlRow[]> {
  const [text, values] = dataSource.options.type === 'postgres' ? [sql, [...params]] : toSqlite(sql, params);
  const runner = manager?.queryRunner ?? dataSource.createQueryRunner();
  try {
    const result = await runner.query(text, values, true);
    return Array.isArray(result.records) ? (result.records as SqlRow[]) : [];
  } finally {
    if (manager?.queryRunner === undefined) await runner.release();
  }
}

/** `$n` placeholders → `?` with the parameters in the order they appear (a `$n` may appear more than once). */
export function toSqlite(sql: string, params: readonly SqlParam[]): [string, SqlParam[]] {
  const ordered: SqlParam[] = [];
  const text = sql.replace(/\$(\d+)/g, (_match, index: string) => {
    ordered.push(params[Number(index) - 1]);
    return '?';
  });
  return [text, ordered];
}
