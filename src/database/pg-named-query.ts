// PostgreSQL statements that are parsed once per pooled connection (pg's named prepared statements), for the few
// hot reads where that is a measurable share of the request (SCIM list pages). TypeORM's query() sends every
// statement unnamed, so it is parsed (and planned) on every call; a named one is parsed once, and PostgreSQL then
// plans each execution as its plan_cache_mode says (by default a custom plan for each of these).
import type { DataSource } from 'typeorm';
import { traceStatement } from '../tracing/database-tracing.js';

interface PgClient {
  query<Row>(config: { name?: string; text: string; values: readonly unknown[] }): Promise<{ rows: Row[] }>;
  release(destroy?: boolean): void;
}

interface PgPool {
  connect(): Promise<PgClient>;
}

/** PostgreSQL's answer when a prepared statement's result columns changed under it (a migration altered them). */
const CACHED_PLAN_CHANGED = '0A000';

/**
 * Runs `text` as the named statement `name` on the DataSource's pool (PostgreSQL only). A connection whose prepared
 * statement went stale (its columns changed: `cached plan must not change result type`) is closed, not returned to
 * the pool, and the statement runs once unnamed; the next connection prepares it afresh.
 */
export async function namedQuery<Row>(
  dataSource: DataSource,
  name: string,
  text: string,
  values: readonly unknown[],
): Promise<Row[]> {
  // Sound: the PostgreSQL driver's `master` is its pg.Pool (TypeORM 1's PostgresDriver).
  const pool = (dataSource.driver as unknown as { master: PgPool }).master;
  const client = await pool.connect();
  let stale = false;
  try {
    return (await traceStatement('postgresql', text, () => client.query<Row>({ name, text, values }))).rows;
  } catch (error) {
    if ((error as { code?: unknown }).code !== CACHED_PLAN_CHANGED) throw error;
    stale = true;
  } finally {
    client.release(stale);
  }
  const fresh = await pool.connect();
  try {
    return (await fresh.query<Row>({ text, values })).rows;
  } finally {
    fresh.release();
  }
}
