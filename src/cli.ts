// The maintenance CLI: the app's modules without the HTTP server (nest-commander). `node dist/src/cli.js --help`.
import 'reflect-metadata';
import { CommandFactory } from 'nest-commander';
import { pino } from 'pino';
import { CliModule } from './cli/cli.module.js';
import { loadConfig } from './config/config.js';
import { createDataSource } from './database/data-source.js';
import { createRootLogger, NestPinoLogger } from './logging/logger.js';

async function main(): Promise<void> {
  const config = loadConfig();
  // Command output goes to stdout; logs go to stderr and are quiet unless LOG_LEVEL asks for more.
  const logger = createRootLogger(process.env.LOG_LEVEL ? config.logLevel : 'warn', pino.destination(2));
  const dataSource = createDataSource(config);
  await dataSource.initialize();
  try {
    await CommandFactory.run(CliModule.forRoot({ config, logger, dataSource }), {
      logger: new NestPinoLogger(logger),
      cliName: 'platform-api',
      usePlugins: false,
      errorHandler: (error: Error & { exitCode?: number; code?: string }) => {
        // commander reports --help and --version through this handler too, with exit code 0.
        if (error.exitCode === 0) return;
        process.stderr.write(`${error.message}\n`);
        process.exitCode = error.exitCode ?? 1;
      },
      serviceErrorHandler: (error) => {
        process.stderr.write(`${error.message}\n`);
        process.exitCode = 1;
      },
    });
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`platform-api: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
