import 'reflect-metadata';
import { ConfigError, loadConfig } from './config/config.js';
import { createApp } from './create-app.js';

async function main(): Promise<void> {
  const config = loadConfig();
  const { app, logger, bootstrapKey } = await createApp(config);
  await app.listen({ port: config.port, host: config.host });
  if (bootstrapKey !== undefined) {
    // Printed once, to the console only: the database keeps just its hash.
    process.stdout.write(
      `\nCreated the first admin API key (it is not shown again; create more with "api-key:create"):\n  ${bootstrapKey}\n\n`,
    );
  }
  logger.info({ port: config.port, host: config.host, modules: config.modules }, 'platform-api is listening');
}

main().catch((error: unknown) => {
  // One line naming the problem (for configuration: the variable), no stack.
  const message = error instanceof ConfigError || error instanceof Error ? error.message : String(error);
  process.stderr.write(`platform-api failed to start: ${message}\n`);
  process.exit(1);
});
