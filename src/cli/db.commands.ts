// db:copy, db:verify, db:backup, db:restore (docs/operations.md). Each takes the service's configuration:
// DATABASE_URL is the default source (copy, backup, verify) or the target (restore).
import path from 'node:path';
import { Command, CommandRunner, Option } from 'nest-commander';
import { APP_CONFIG, type AppConfig, type DatabaseConfig } from '../config/config.js';
import { Inject } from '@nestjs/common';
import { describeDatabase, parseDatabaseUrl } from '../database/database-url.js';
import { backupDatabase } from '../database/copy/db-backup.js';
import { copyDatabase } from '../database/copy/db-copy.js';
import { checkDatabase, compareDatabases } from '../database/copy/db-verify.js';
import { progressFor } from '../database/copy/progress.js';

interface CopyOptions {
  from?: DatabaseConfig;
  to?: DatabaseConfig;
  replace?: boolean;
  against?: DatabaseConfig;
}

function databaseOption(name: string) {
  return (value: string): DatabaseConfig => {
    try {
      return parseDatabaseUrl(value);
    } catch (error) {
      throw new Error(`${name} ${(error as Error).message}`);
    }
  };
}

/** Ctrl-C (or SIGTERM) aborts between batches; the transaction is rolled back and the command exits 130. */
async function interruptible<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const abort = (): void => controller.abort(new Error('interrupted; nothing was changed'));
  process.once('SIGINT', abort);
  process.once('SIGTERM', abort);
  try {
    return await work(controller.signal);
  } catch (error) {
    if (controller.signal.aborted) process.exitCode = 130;
    throw error;
  } finally {
    process.off('SIGINT', abort);
    process.off('SIGTERM', abort);
  }
}

/** Where the key that decrypts stored secrets lives, for the operator; the key itself is never printed. */
export function keyLocation(config: AppConfig): string {
  return config.encryptionKey
    ? 'the ENCRYPTION_KEY setting'
    : `the key file ${path.join(config.dataDir, 'encryption.key')}`;
}

async function verifyAndReport(database: DatabaseConfig, against?: DatabaseConfig): Promise<boolean> {
  const problems = await checkDatabase(database);
  if (against !== undefined) {
    const difference = await compareDatabases(against, database);
    if (difference !== undefined) problems.push(difference);
  }
  for (const problem of problems) console.log(`problem ${problem}`);
  console.log(
    problems.length === 0
      ? `verified ${describeDatabase(database)}: ok`
      : `verified ${describeDatabase(database)}: ${problems.length} problem(s)`,
  );
  return problems.length === 0;
}

@Command({
  name: 'db:copy',
  description: 'Copy every table from one database to another (all or nothing), then verify the target',
})
export class DbCopyCommand extends CommandRunner {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    super();
  }

  async run(_args: string[], options: CopyOptions): Promise<void> {
    if (options.to === undefined) throw new Error('--to <url> is required');
    const from = options.from ?? this.config.database;
    const to = options.to;
    await interruptible((signal) =>
      copyDatabase({ from, to, replace: options.replace ?? false, progress: progressFor(), signal }),
    );
    if (!(await verifyAndReport(to))) process.exitCode = 1;
  }

  @Option({ flags: '--from <url>', description: 'source database (default: DATABASE_URL)' })
  parseFrom(value: string): DatabaseConfig {
    return databaseOption('--from')(value);
  }

  @Option({
    flags: '--to <url>',
    description: 'target database: sqlite:<file> or postgres://…',
    required: true,
  })
  parseTo(value: string): DatabaseConfig {
    return databaseOption('--to')(value);
  }

  @Option({ flags: '--replace', description: 'replace the data a target holds (refused otherwise)' })
  parseReplace(): boolean {
    return true;
  }
}

@Command({
  name: 'db:verify',
  description: 'Check integrity and schema; with --against, compare every table (counts and content hashes)',
})
export class DbVerifyCommand extends CommandRunner {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    super();
  }

  async run(_args: string[], options: CopyOptions): Promise<void> {
    if (!(await verifyAndReport(options.from ?? this.config.database, options.against))) process.exitCode = 1;
  }

  @Option({ flags: '--from <url>', description: 'database to check (default: DATABASE_URL)' })
  parseFrom(value: string): DatabaseConfig {
    return databaseOption('--from')(value);
  }

  @Option({ flags: '--against <url>', description: 'a second database that should hold the same data' })
  parseAgainst(value: string): DatabaseConfig {
    return databaseOption('--against')(value);
  }
}

@Command({
  name: 'db:backup',
  arguments: '<file>',
  description: 'Write an online, consistent snapshot of the database into a new SQLite file',
})
export class DbBackupCommand extends CommandRunner {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    super();
  }

  async run([file]: string[]): Promise<void> {
    const target = path.resolve(file);
    const result = await interruptible((signal) =>
      backupDatabase(this.config.database, target, keyLocation(this.config), progressFor(), signal),
    );
    for (const [table, rows] of Object.entries(result.counts)) console.log(`table=${table} rows=${rows}`);
    const rows = Object.values(result.counts).reduce((sum, count) => sum + count, 0);
    console.log(
      `backup file=${result.file} schema=${result.schemaVersion ?? 'none'} rows=${rows} seconds=${result.seconds.toFixed(2)}`,
    );
    console.log(
      `Secrets in the backup (SMTP passwords, SmartApp tokens) need the encryption key from ${keyLocation(this.config)}; it is not in the file. Keep a copy of the key apart from the backups.`,
    );
  }
}

@Command({
  name: 'db:restore',
  arguments: '<file>',
  description: 'Restore a db:backup file into the configured database (migrating an older backup forward)',
})
export class DbRestoreCommand extends CommandRunner {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    super();
  }

  async run([file]: string[], options: CopyOptions): Promise<void> {
    const from: DatabaseConfig = { type: 'sqlite', database: path.resolve(file) };
    const to = this.config.database;
    await interruptible((signal) =>
      copyDatabase({
        from,
        to,
        replace: options.replace ?? false,
        migrateForward: true,
        progress: progressFor(),
        signal,
      }),
    );
    if (!(await verifyAndReport(to))) process.exitCode = 1;
    console.log(
      `Secrets restored need the key the backup was made with; this service reads ${keyLocation(this.config)}.`,
    );
  }

  @Option({ flags: '--replace', description: 'replace the data the database holds (refused otherwise)' })
  parseReplace(): boolean {
    return true;
  }
}
