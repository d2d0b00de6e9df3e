// PostgreSQL statements that are parsed and planned once per pooled connection (pg's named prepared statements),
// for the few hot reads where planning is a measurable share of the request (SCIM list pages). TypeORM's query()
// sends every statement unnamed, so it is parsed and planned on every call.
import type { DataSource } from 'typeorm';

interface PgPool {
  query<Row>(config: { name: string; text: string; values: readonly unknown[] }): Promise<{ rows: Row[] }>;
}

/** Runs `text` as the named statement `name` on the DataSource's pool (PostgreSQL only). */
export async function namedQuery<Row>(
  dataSource: DataSource,
  name: string,
  text: string,
  values: readonly unknown[],
): Promise<Row[]> {
  // Sound: the PostgreSQL driver's `master` is its pg.Pool (TypeORM 1's PostgresDriver).
  const pool = (dataSource.driver as unknown as { master: PgPool }).master;
  return (await pool.query<Row>({ name, text, values })).rows;
}
