// The maintenance CLI: the app's modules without the HTTP server (nest-commander). `node dist/src/cli.js --help`.
// Loaded by src/cli.ts once the compile cache is on. How a failed command is reported is decided here, once, for
// every command (cli-errors.ts).
import 'reflect-metadata';
import { CommandFactory } from 'nest-commander';
import { pino } from 'pino';
import { loadConfig } from '../config/config.js';
import { forMaintenance } from '../database/counter-deltas.js';
import { createDataSource } from '../database/data-source.js';
import { createRootLogger, NestPinoLogger } from '../logging/logger.js';
import { CliModule } from './cli.module.js';
import { explainCliError } from './cli-errors.js';
import { asksOnlyForHelp, CLI_NAME } from './cli-program-name.js';
import { packageVersion } from './cli-version.js';

const HELP_DATABASE = { type: 'sqlite', database: ':memory:' } as const;

/** Runs one command; the exit code says how it went (0 done, 1 failed, 2 migration:status found drift). */
export async function runCli(): Promise<void> {
  try {
    await run();
  } catch (error) {
    process.stderr.write(`${CLI_NAME}: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}

async function run(): Promise<void> {
  // --version alone is answered by cli.ts before this module loads; here it is listed in --help.
  const loaded = loadConfig();
  // Help and the version need no database: an unreachable DATABASE_URL must not hide them. The modules still load
  // (their commands make the help) on an empty in-memory SQLite database, with nothing written to DATA_DIR (an
  // encryption key that never encrypts anything) and no Redis reached.
  const config = asksOnlyForHelp(process.argv.slice(2))
    ? {
        ...loaded,
        database: HELP_DATABASE,
        rateLimitStore: { kind: 'memory' as const },
        encryptionKey: Buffer.alloc(32),
      }
    : loaded;
  // Command output goes to stdout; logs go to stderr and are quiet unless LOG_LEVEL asks for more.
  const logger = createRootLogger(process.env.LOG_LEVEL ? config.logLevel : 'warn', pino.destination(2));
  const dataSource = createDataSource(config);
  // A command changes only what it is asked to: no background fold moves rows while it reads or copies.
  forMaintenance(dataSource);
  await dataSource.initialize();
  try {
    await CommandFactory.run(CliModule.forRoot({ config, logger, dataSource }), {
      logger: new NestPinoLogger(logger),
      cliName: CLI_NAME,
      version: packageVersion(),
      usePlugins: false,
      // commander has already printed its own errors (unknown command, missing option) and exits with their code
      // after this returns; printing error.message here too would say everything twice.
      errorHandler: () => {},
      // An error a command threw: one line, in words a newcomer can act on (e.g. "run migration:run").
      serviceErrorHandler: async (error: Error) => {
        process.stderr.write(`${await explainCliError(error, dataSource)}\n`);
        process.exitCode = 1;
      },
    });
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
  }
}
