import { ApiError } from '../errors/api-error.js';

export enum MigrationRunsErrorCode {
  MigrationNotFound = 'MigrationNotFound',
}

export class MigrationRunsError extends ApiError<MigrationRunsErrorCode> {
  /** Business outcomes of operations 7 and 8: 200 with Succeeded:false and the documented shape. */
  readonly status = 200;

  static notFound(migrationId: string): MigrationRunsError {
    return new MigrationRunsError(
      MigrationRunsErrorCode.MigrationNotFound,
      `No migration or run is named "${migrationId}".`,
      undefined,
      { MigrationRuns: null },
    );
  }
}
