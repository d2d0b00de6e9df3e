// What a failed statement says about the data, read from the driver's code the same way on both engines
// (PostgreSQL SQLSTATE, better-sqlite3's extended result code).
import { QueryFailedError } from 'typeorm';

/** The driver's error code of a failed statement (TypeORM's QueryFailedError, or a driver error as it came). */
function driverCode(error: unknown): unknown {
  if (error instanceof QueryFailedError) return (error.driverError as { code?: unknown } | undefined)?.code;
  return error !== null && typeof error === 'object' && 'code' in error ? error.code : undefined;
}

/** A unique index or the primary key already holds the value (PostgreSQL 23505 covers both). */
export function isUniqueViolation(error: unknown): boolean {
  const code = driverCode(error);
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** A foreign key names a row that is not there (any more). */
export function isForeignKeyViolation(error: unknown): boolean {
  const code = driverCode(error);
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}

/** PostgreSQL gave up one of two transactions waiting on each other (deadlock, serialization): run it again. */
export function isTransientConflict(error: unknown): boolean {
  const code = driverCode(error);
  return code === '40P01' || code === '40001';
}
