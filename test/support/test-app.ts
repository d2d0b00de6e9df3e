// Boots the real service (createApp: real database, migrations applied, every global mechanism) for e2e specs.
import { Writable } from 'node:stream';
import type { DynamicModule, Type } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import type { DataSource } from 'typeorm';
import { loadConfig, type AppConfig } from '../../src/config/config.js';
import { createApp } from '../../src/create-app.js';
import { createRootLogger } from '../../src/logging/logger.js';
import { OpenApiResponseValidator } from './openapi-response-validator.js';
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
  /** Answers that disagree with the OpenAPI document (openapi-response-validator.ts); close() fails on any. */
  openApiViolations: string[];
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  /** Reuse a database (e.g. to restart on it); default a fresh one. */
  database?: TestDatabase;
  extraModules?: Array<Type | DynamicModule>;
  /** Check every answer against the OpenAPI document (default on; a spec about invalid answers turns it off). */
  validateResponses?: boolean;
}

// One document per set of mounted modules: building it costs a few hundred milliseconds.
const validators = new Map<string, OpenApiResponseValidator>();

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
  let validator: OpenApiResponseValidator | undefined;
  // OPENAPI_VALIDATION=off only to tell whether a failure comes from the check itself.
  if (options.validateResponses !== false && process.env.OPENAPI_VALIDATION !== 'off') {
    const key = JSON.stringify([config.modules, (options.extraModules ?? []).map(moduleName)]);
    validator = validators.get(key);
    if (validator === undefined) {
      const served = await fastify.inject({ method: 'GET', url: '/docs-json' });
      validator = new OpenApiResponseValidator(served.json<Record<string, unknown>>());
      validators.set(key, validator);
    }
  }
  const openApiViolations: string[] = [];
  const request = async (injectOptions: InjectOptions) => {
    const response = await fastify.inject(injectOptions);
    if (validator !== undefined) {
      const before = validator.violations.length;
      validator.check(injectOptions, response);
      openApiViolations.push(...validator.violations.splice(before));
    }
    return response;
  };
  return {
    app,
    config,
    dataSource,
    database,
    bootstrapKey,
    logs,
    request,
    openApiViolations,
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
      if (openApiViolations.length > 0) {
        const unique = [...new Set(openApiViolations)];
        throw new Error(
          `${unique.length} answer(s) disagree with the OpenAPI document:\n${unique.join('\n')}`,
        );
      }
    },
  };
}

function moduleName(module: Type | DynamicModule): string {
  return 'module' in module ? module.module.name : module.name;
}
