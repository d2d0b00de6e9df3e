// Builds the whole service: database (migrated under a lock), Nest app on Fastify, HTTP plumbing, Swagger.
// Used by main.ts, by the e2e tests and by the benchmarks, so all of them run the same thing.
import type { DynamicModule, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Logger } from 'pino';
import type { DataSource } from 'typeorm';
import { AppModule } from './app.module.js';
import { ApiKeysService, createBootstrapKeyIfNeeded } from './auth/api-keys.service.js';
import { ApiKey } from './auth/entities/api-key.entity.js';
import type { AppConfig } from './config/config.js';
import { applyServingTimeouts, createDataSource } from './database/data-source.js';
import { watchDatabase } from './database/database-health.js';
import { watchSqliteFiles } from './database/sqlite-file-watch.js';
import { configureHttp, fastifyOptions } from './http/configure-http.js';
import { createRootLogger, NestPinoLogger } from './logging/logger.js';
import { JobsService } from './jobs/jobs.service.js';
import { MigrationRunner } from './database/migration-runner.js';
import { setupSwagger } from './openapi/swagger.js';
import { precompileRouteDtos } from './validation/precompile-route-dtos.js';
import { traceQueries } from './tracing/database-tracing.js';
import { startTracing } from './tracing/tracing.js';

export interface CreatedApp {
  app: NestFastifyApplication;
  dataSource: DataSource;
  logger: Logger;
  /** Set on the first start of an empty database without API_KEYS: shown once, never stored in clear. */
  bootstrapKey: string | undefined;
}

export interface CreateOptions {
  /** Gives the first admin key to its reader before its hash is stored (createBootstrapKeyIfNeeded). */
  handOverBootstrapKey?: (key: string) => void;
}

export async function prepareDatabase(
  config: AppConfig,
  logger: Logger,
  options: CreateOptions = {},
): Promise<{ dataSource: DataSource; bootstrapKey?: string }> {
  const dataSource = createDataSource(config);
  const health = watchDatabase(dataSource, logger);
  await dataSource.initialize();
  try {
    // Each migration's start and end at debug; the start-up log says once how many were applied.
    const runner = new MigrationRunner(dataSource, (message, fields) => logger.debug(fields ?? {}, message));
    if (config.migrationsRun) {
      const applied = await runner.runPending('startup');
      if (applied.length > 0) logger.info({ migrations: applied }, `Applied ${applied.length} migration(s)`);
    }
    const status = await runner.status();
    const pending = status.filter((entry) => entry.state === 'pending').map((entry) => entry.name);
    if (pending.length > 0) {
      throw new Error(
        `The database schema is behind this build (pending: ${pending.join(', ')}); run migration:run or set MIGRATIONS_RUN=true`,
      );
    }
    // Through the lock's own runner: on SQLite the lock is the connection, which no other runner gets meanwhile.
    const created = await runner.withLock((queryRunner) =>
      createBootstrapKeyIfNeeded(
        queryRunner.manager.getRepository(ApiKey),
        config,
        options.handOverBootstrapKey,
      ),
    );
    servingBusyTimeout(dataSource);
    await applyServingTimeouts(dataSource, config.databaseTimeouts);
    watchSqliteFiles(dataSource, health);
    return { dataSource, bootstrapKey: created?.key };
  } catch (error) {
    await dataSource.destroy();
    throw error;
  }
}

/**
 * SQLite waits for another process's write lock (a CLI migrating) by blocking the event loop: long at start-up,
 * where another instance may be migrating, but once serving a write that cannot get the lock within 5 s is a 503
 * DatabaseUnavailable, not a process frozen for 30 s.
 */
function servingBusyTimeout(dataSource: DataSource): void {
  if (dataSource.options.type !== 'better-sqlite3') return;
  const driver = dataSource.driver as unknown as { databaseConnection: { pragma(sql: string): unknown } };
  driver.databaseConnection.pragma(`busy_timeout = ${SERVING_BUSY_TIMEOUT_MS}`);
}

const SERVING_BUSY_TIMEOUT_MS = 5_000;

export async function createApp(
  config: AppConfig,
  logger: Logger = createRootLogger(config.logLevel),
  /** Only for tests: modules mounted beside the areas (e.g. a route that fails on purpose). */
  extraModules: Array<Type | DynamicModule> = [],
  options: CreateOptions = {},
): Promise<CreatedApp> {
  // OTEL_EXPORTER_OTLP_ENDPOINT set: tracing starts before anything is traced; unset, nothing is loaded.
  const tracing = await startTracing();
  const { dataSource, bootstrapKey } = await prepareDatabase(config, logger, options);
  if (tracing !== undefined) {
    traceQueries(dataSource, tracing);
    logger.info(
      { service: process.env.OTEL_SERVICE_NAME ?? 'platform-api' },
      'OpenTelemetry tracing on (OTLP/HTTP)',
    );
  }
  const app = await NestFactory.create<NestFastifyApplication>(
    {
      module: class PlatformApi {},
      imports: [AppModule.forRoot({ config, logger, dataSource }), ...extraModules],
    },
    // skipMiddie: no Nest middleware here (cross-cutting work is in Fastify hooks, src/http/plugins/), and middie
    // costs every request a pass through its (empty) chain. A module that adds middleware fails at start.
    new FastifyAdapter({ ...fastifyOptions(config), skipMiddie: true }),
    // bodyParser: false keeps Fastify's own JSON parser: Nest's replacement builds a parser closure per request
    // and exists only for its global rawBody option. The one route that needs the bytes (the device webhook) asks
    // with @RouteLimits; other JSON media types are added in src/http/plugins/content-types.plugin.ts.
    { logger: new NestPinoLogger(logger), abortOnError: false, bodyParser: false },
  ).catch(async (error: unknown) => {
    // The module graph did not build: nothing owns the data source yet.
    await dataSource.destroy();
    throw error;
  });
  try {
    await configureHttp(app, config, logger);
    setupSwagger(app);
    await app.init();
    precompileRouteDtos(app);
    await app.get(ApiKeysService).watchRevocations();
    await app.get(JobsService).start();
  } catch (error) {
    await app.close();
    // A start deferred for its storage (server.ts) tries again with a data source of its own.
    if (dataSource.isInitialized) await dataSource.destroy().catch(() => undefined);
    throw error;
  }
  return { app, dataSource, logger, bootstrapKey };
}
