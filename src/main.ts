import 'reflect-metadata';
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { ConfigError, loadConfig, type AppConfig } from './config/config.js';
import { createApp } from './create-app.js';
import { drainOnSignals } from './shutdown.js';
import { tracing } from './tracing/tracing.js';

async function main(): Promise<void> {
  const config = loadConfig();
  const { app, logger, bootstrapKey } = await createApp(config);
  await app.listen({ port: config.port, host: config.host });
  drainOnSignals(app, config, logger, () => exportLastSpans(logger));
  if (bootstrapKey !== undefined) handOverBootstrapKey(bootstrapKey, config, logger);
  logger.info({ port: config.port, host: config.host, modules: config.modules }, 'platform-api is listening');
}

/**
 * The first admin key (the database keeps only its hash) goes to a person at a terminal, never into a log stream:
 * on a terminal it is printed once; otherwise (a container, a service manager collecting stdout) it is written to
 * DATA_DIR/initial-admin-key, readable by the service's user only, and the log names that file.
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
  fs.writeFileSync(file, `${key}\n`, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
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

main().catch((error: unknown) => {
  // One line naming the problem (for configuration: the variable), no stack.
  const message = error instanceof ConfigError || error instanceof Error ? error.message : String(error);
  process.stderr.write(`platform-api failed to start: ${message}\n`);
  process.exit(1);
});
