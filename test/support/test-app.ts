// Boots the real service (createApp: real database, migrations applied, every global mechanism) for e2e specs.
import { Writable } from 'node:stream';
import type { DynamicModule, Type } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import type { DataSource } from 'typeorm';
import { loadConfig, type AppConfig } from '../../src/config/config.js';
import { createApp } from '../../src/create-app.js';
import { createRootLogger } from '../../src/logging/logger.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';

export const ADMIN_KEY = 'test-admin-key-0123456789abcdef';

export interface TestApp {
  app: NestFastifyApplication;
  config: AppConfig;
  dataSource: DataSource;
  database: TestDatabase;
  bootstrapKey: string | undefined;
  /** Every JSON log line written while the app ran. */
  logs: Array<Record<string, unknown>>;
  request(options: InjectOptions): Promise<LightMyRequestResponse>;
  /** POST a JSON body with the admin key. */
  post(url: string, body: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  /** Reuse a database (e.g. to restart on it); default a fresh one. */
  database?: TestDatabase;
  extraModules?: Array<Type | DynamicModule>;
}

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const database = options.database ?? (await createTestDatabase());
  const config = loadConfig({
    DATA_DIR: database.dataDir,
    DATABASE_URL: database.url,
    API_KEYS: ADMIN_KEY,
    RATE_LIMIT: '0',
    LOG_LEVEL: 'info',
    // The app shares this process's event loop with the test (and its heavy set-ups): no load shedding unless a
    // test asks for it (test/overload.e2e-spec.ts).
    OVERLOAD_EVENT_LOOP_DELAY_MS: '0',
    // Lets a developer boot only some areas while others are half-built: TEST_MODULES=schedules,migrations.
    ...(process.env.TEST_MODULES ? { MODULES: process.env.TEST_MODULES } : {}),
    ...options.env,
  });
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n'))
        if (line.trim()) logs.push(JSON.parse(line) as Record<string, unknown>);
      callback();
    },
  });
  const logger = createRootLogger(config.logLevel, sink);
  const created = await createApp(config, logger, options.extraModules).catch(async (error: unknown) => {
    if (!options.database) await database.drop();
    throw error;
  });
  const { app, dataSource, bootstrapKey } = created;
  const fastify = app.getHttpAdapter().getInstance();
  const request = (injectOptions: InjectOptions) => fastify.inject(injectOptions);
  return {
    app,
    config,
    dataSource,
    database,
    bootstrapKey,
    logs,
    request,
    post: (url, body, headers = {}) =>
      request({
        method: 'POST',
        url,
        headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json', ...headers },
        payload: typeof body === 'string' ? body : JSON.stringify(body),
      }),
    close: async () => {
      await app.close();
      if (!options.database) await database.drop();
    },
  };
}
