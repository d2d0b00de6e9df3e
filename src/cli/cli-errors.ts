// What the maintenance CLI prints when a command fails: one line a person can act on, never a driver's internals.
// Every command registered in CliModule gets this through run-cli.ts, so new commands need nothing of their own.
import type { DataSource } from 'typeorm';

/** SQLite's and PostgreSQL's (SQLSTATE 42P01) ways of saying a table the command reads does not exist. */
export function isMissingTable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { code, driverError } = error as Error & { code?: unknown; driverError?: { code?: unknown } };
  if (code === '42P01' || driverError?.code === '42P01') return true;
  return /\bno such table\b/i.test(error.message);
}

const MIGRATE = 'run migration:run (npm run cli -- migration:run), or start the service once';

/**
 * The one line for a failed command. A missing table means the database has no schema yet (a command run before
 * the first start or migration:run) or an older one: the line says which, and what to run.
 */
export async function explainCliError(error: unknown, dataSource: DataSource): Promise<string> {
  const message = error instanceof Error ? error.message : String(error);
  if (!isMissingTable(error)) return message;
  const applied = await appliedMigrations(dataSource);
  if (applied === 0) return `The database has no schema yet: ${MIGRATE}; its first start creates it.`;
  if (applied !== undefined && (await dataSource.showMigrations()))
    return `The database schema is older than this version (${message}): ${MIGRATE}; its start applies the pending migrations.`;
  return message;
}

/** How many migrations the database records; 0 when it has no migrations table; undefined when it cannot say. */
async function appliedMigrations(dataSource: DataSource): Promise<number | undefined> {
  try {
    const queryRunner = dataSource.createQueryRunner();
    try {
      const table = dataSource.options.migrationsTableName ?? 'migrations';
      if (!(await queryRunner.hasTable(table))) return 0;
      const rows = (await queryRunner.query(
        `SELECT 1 FROM ${queryRunner.connection.driver.escape(table)}`,
      )) as unknown[];
      return rows.length;
    } finally {
      await queryRunner.release();
    }
  } catch {
    return undefined;
  }
}
