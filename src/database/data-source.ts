// The one factory that opens a database: the service (create-app.ts), the maintenance CLI, the TypeORM CLI
// (ormconfig.ts) and db:copy/db:backup (which open a second database from a URL) all come through here.
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from '../../migrations/index.js';
import type { AppConfig, DatabaseConfig } from '../config/config.js';
import { parseDatabaseUrl } from './database-url.js';
import { registeredEntities } from './entity-registry.js';
import { pgTypes } from './pg-timestamptz.js';
import { resolvePortableColumns, type Dialect } from './portable-columns.js';
import { registerSqliteFunctions } from './sqlite-functions.js';
import { ownSqliteConnection } from './sqlite-transactions.js';

/**
 * pg's Client, always listened to for `error`: a connection the server ends (a restart, pg_terminate_backend) can
 * emit `error` after TypeORM has dropped its own listener from a released runner, and an `error` event nobody
 * listens to ends the process. The failure still reaches whoever was using the connection (their query rejects).
 */
class ListenedClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    this.on('error', () => undefined);
  }
}

/** How long a request waits for a pooled PostgreSQL connection (or for a connect to answer). */
export const POOL_WAIT_MS = 5_000;

export function dialectOf(database: DatabaseConfig): Dialect {
  return database.type;
}

export function dataSourceOptions(config: Pick<AppConfig, 'database'>): DataSourceOptions {
  const common = {
    entities: registeredEntities(),
    migrations: MIGRATIONS,
    migrationsRun: false,
    migrationsTableName: 'migrations',
    synchronize: false,
    logging: false,
  } as const;
  const { database } = config;
  if (database.type === 'postgres') {
    return {
      ...common,
      type: 'postgres',
      url: database.url,
      // pg's parsers, with a faster one for timestamptz (pg-timestamptz.ts).
      // connectionTimeoutMillis: a pool that stays exhausted (or a server that does not answer a connect) is a
      // 503 DatabaseUnavailable after this long, not a request waiting for ever.
      extra: { max: 10, types: pgTypes, connectionTimeoutMillis: POOL_WAIT_MS, Client: ListenedClient },
      applicationName: 'platform-api',
    };
  }
  if (database.database !== ':memory:') {
    fs.mkdirSync(path.dirname(database.database), { recursive: true });
    // A new database file is created owner-only (0600), as the key files are; SQLite gives its -wal and -shm
    // files the database file's mode. An existing file keeps the mode its operator chose.
    fs.closeSync(fs.openSync(database.database, 'a', 0o600));
  }
  return {
    ...common,
    type: 'better-sqlite3',
    database: database.database,
    enableWAL: true,
    // Another process may hold the write lock while it migrates; wait for it rather than fail.
    timeout: 30_000,
    prepareDatabase: (
      db: { pragma(sql: string): unknown } & Parameters<typeof registerSqliteFunctions>[0],
    ) => {
      db.pragma('foreign_keys = ON');
      // FULL: a commit is on the disk (fsync of the WAL) before it is answered, so a power loss or an OS crash
      // cannot take back a write answered 2xx; NORMAL survives only the process dying. ~0.3 ms a commit here.
      db.pragma('synchronous = FULL');
      registerSqliteFunctions(db);
    },
  };
}

/**
 * PostgreSQL, once migrated and about to serve: every connection of the pool waits at most `lockMs` for a lock
 * and runs a statement at most `statementMs` (lock_timeout and statement_timeout; 55P03 and 57014, answered 503
 * busy). New connections get them as start-up parameters, those already open (the migrations') a session SET.
 * Migrations run before, without them: a long index build is not a request.
 */
export async function applyServingTimeouts(
  dataSource: DataSource,
  timeouts: AppConfig['databaseTimeouts'],
): Promise<void> {
  if (dataSource.options.type !== 'postgres') return;
  const pool = (dataSource.driver as unknown as { master: pg.Pool & { options: pg.PoolConfig } }).master;
  Object.assign(pool.options, {
    lock_timeout: timeouts.lockMs || undefined,
    statement_timeout: timeouts.statementMs || undefined,
  });
  // Nothing else runs yet: the idle connections are the ones handed out first.
  const idle = await Promise.all(Array.from({ length: pool.idleCount }, () => pool.connect()));
  try {
    await Promise.all(
      idle.map((client) =>
        client.query(
          `SET lock_timeout = ${Math.trunc(timeouts.lockMs)}; SET statement_timeout = ${Math.trunc(timeouts.statementMs)}`,
        ),
      ),
    );
  } finally {
    for (const client of idle) client.release();
  }
}

export interface OpenOptions {
  /** Only these migrations (oldest first) are known, e.g. the prefix a restored older backup was written by. */
  migrations?: DataSourceOptions['migrations'];
}

export function createDataSource(config: Pick<AppConfig, 'database'>, options: OpenOptions = {}): DataSource {
  resolvePortableColumns(dialectOf(config.database));
  const dataSource = new DataSource({
    ...dataSourceOptions(config),
    ...(options.migrations ? { migrations: options.migrations } : {}),
  });
  ownSqliteConnection(dataSource);
  return dataSource;
}

/**
 * A database named by a URL in DATABASE_URL's form, initialised. Open two of different engines one after the
 * other, never concurrently: the portable column types are resolved for the engine right before its entity
 * metadata is built (portable-columns.ts).
 */
export async function openDatabase(
  database: string | DatabaseConfig,
  options: OpenOptions = {},
): Promise<DataSource> {
  const config = { database: typeof database === 'string' ? parseDatabaseUrl(database) : database };
  const dataSource = createDataSource(config, options);
  await dataSource.initialize();
  return dataSource;
}
