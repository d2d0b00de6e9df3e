// The single DataSource definition used by the app, the maintenance CLI and the TypeORM CLI (ormconfig.ts).
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from '../../migrations/index.js';
import type { AppConfig, DatabaseConfig } from '../config/config.js';
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
const POOL_WAIT_MS = 5_000;

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

export function createDataSource(config: Pick<AppConfig, 'database'>): DataSource {
  resolvePortableColumns(dialectOf(config.database));
  const dataSource = new DataSource(dataSourceOptions(config));
  ownSqliteConnection(dataSource);
  return dataSource;
}
