// Every entity of the service, so the one DataSource (app, CLI, TypeORM CLI) knows the whole schema,
// whichever areas a process serves (MODULES).
import { ApiKey } from '../auth/entities/api-key.entity.js';
import { MigrationRun } from '../migration-runs/entities/migration-run.entity.js';

export const ENTITIES = [ApiKey, MigrationRun];
