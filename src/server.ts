// The HTTP service: configuration, app, listen, drain on signals. Loaded by main.ts once the compile cache is on.
import 'reflect-metadata';
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { APP_VERSION } from './common/app-version.js';
import { ConfigError, loadConfig, type AppConfig } from './config/config.js';
import { createApp, type CreatedApp } from './create-app.js';
import { describeDatabase } from './database/database-url.js';
import { createRootLogger } from './logging/logger.js';
import { drainOnSignals } from './shutdown.js';
import { NotStartedListener } from './startup/not-started-listener.js';
import { startCondition, worthRetrying, type StartCondition } from './startup/start-condition.js';
import { tracing } from './tracing/tracing.js';

async function listen(): Promise<void> {
  const config = loadConfig();
  const logger = createRootLogger(config.logLevel);
  const version = APP_VERSION;
  const database = describeDatabase(config.database);
  logger.info(
    { version, node: process.version, database },
    `platform-api ${version} on Node ${process.version}, database ${database}`,
  );
  const { app } = await startWhenStorageAllows(config, logger);
  await app.listen({ port: config.port, host: config.host });
  drainOnSignals(app, config, logger, () => exportLastSpans(logger));
  const shownHost = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const docs = `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${config.port}/docs`;
  logger.info(
    { port: config.port, host: config.host, modules: config.modules, docs },
    `platform-api is listening on ${config.host}:${config.port}; Swagger UI at ${docs}`,
  );
}

/** How often a start deferred for its storage is tried again. */
const START_RETRY_MS = 2_000;

/**
 * Builds the app; when that fails for a storage condition (start-condition.ts) the port is served by a
 * NotStartedListener (live 200, ready 503 with the reason, writes 507/503) and the whole start — migrations, the
 * first admin key, the key file, the jobs — is tried again every START_RETRY_MS until it succeeds. Any other
 * failure ends the start as before.
 */
async function startWhenStorageAllows(config: AppConfig, logger: Logger): Promise<CreatedApp> {
  const options = { handOverBootstrapKey: (key: string) => handOverBootstrapKey(key, config, logger) };
  let waiting: { listener: NotStartedListener; since: number; stopSignals: () => void } | undefined;
  let condition: StartCondition | undefined;
  for (;;) {
    if (condition === undefined || worthRetrying(condition, config.database)) {
      try {
        const created = await createApp(config, logger, [], options);
        if (waiting !== undefined) {
          waiting.stopSignals();
          await waiting.listener.close();
          logger.warn(
            { deferredSeconds: Math.round((performance.now() - waiting.since) / 100) / 10 },
            'start-up: the storage takes writes again; starting',
          );
        }
        return created;
      } catch (error) {
        condition = startCondition(error, config.database);
        if (condition === undefined) {
          waiting?.stopSignals();
          await waiting?.listener.close();
          throw error;
        }
      }
      if (waiting === undefined) {
        logger.error(
          { kind: condition.kind, reason: condition.reason, retryMs: START_RETRY_MS },
          'start-up deferred: the storage does not take writes; /health/live is 200, /health/ready 503, until it does',
        );
        const listener = await NotStartedListener.listen(config.port, config.host, condition, START_RETRY_MS);
        waiting = { listener, since: performance.now(), stopSignals: exitOnSignals(listener) };
      } else {
        waiting.listener.update(condition);
      }
    }
    await new Promise((resolve) => setTimeout(resolve, START_RETRY_MS));
  }
}

/** While start-up is deferred there is nothing to drain: a signal closes the listener and ends the process. */
function exitOnSignals(listener: NotStartedListener): () => void {
  const exit = (): void => {
    void listener.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', exit);
  process.once('SIGINT', exit);
  return () => {
    process.off('SIGTERM', exit);
    process.off('SIGINT', exit);
  };
}

/**
 * The first admin key (the database keeps only its hash) goes to a person at a terminal, never into a log stream:
 * on a terminal it is printed once; otherwise (a container, a service manager collecting stdout) it is written to
 * DATA_DIR/initial-admin-key, readable by the service's user only, and the log names that file. Called before the
 * hash is committed: a file that cannot be written (a full disk) leaves no key stored and the start deferred.
 */
function handOverBootstrapKey(key: string, config: AppConfig, logger: Logger): void {
  if (process.stdout.isTTY) {
    process.stdout.write(
      `\nCreated the first admin API key (it is not shown again; create more with "api-key:create"):\n  ${key}\n\n`,
    );
    return;
  }
  const file = path.join(config.dataDir, 'initial-admin-key');
  fs.mkdirSync(config.dataDir, { recursive: true });
  try {
    fs.writeFileSync(file, `${key}\n`, { mode: 0o600 });
    fs.chmodSync(file, 0o600);
  } catch (error) {
    fs.rmSync(file, { force: true });
    throw error;
  }
  logger.warn(
    { file },
    'Created the first admin API key and wrote it to this file (mode 0600); read it, store it safely, delete the file',
  );
}

/**
 * The last spans of the drained requests are exported before the process ends, for at most 2 s: an unreachable
 * collector is the collector's problem, not a failed shutdown (the exit stays 0 and the spans are lost).
 */
async function exportLastSpans(logger: Logger): Promise<void> {
  const active = tracing();
  if (active === undefined) return;
  const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 2_000).unref());
  try {
    if ((await Promise.race([active.shutdown().then(() => 'done' as const), timeout])) === 'timeout') {
      logger.warn({}, 'tracing: the last spans were not exported within 2 s; shutting down without them');
    }
  } catch (error) {
    logger.warn(
      { err: error instanceof Error ? error.message : String(error) },
      'tracing: the last spans could not be exported; shutting down without them',
    );
  }
}

/** Starts the service; a failed start ends the process with one line naming the problem (for configuration: the variable), no stack. */
export async function startServer(): Promise<void> {
  try {
    await listen();
  } catch (error) {
    const message = error instanceof ConfigError || error instanceof Error ? error.message : String(error);
    process.stderr.write(`platform-api failed to start: ${message}\n`);
    process.exit(1);
  }
}
