import { Module, type DynamicModule } from '@nestjs/common';
import { AppModule } from '../app.module.js';
import { AREAS } from '../config/config.js';
import type { CoreOptions } from '../core/core.module.js';
import { AuditListCommand } from './audit.commands.js';
import { CliProgramName } from './cli-program-name.js';
import { ApiKeyCreateCommand, ApiKeyListCommand, ApiKeyRevokeCommand } from './api-key.commands.js';
import { DbBackupCommand, DbCopyCommand, DbRestoreCommand, DbVerifyCommand } from './db.commands.js';
import { EncryptionRotateKeyCommand } from './encryption.commands.js';
import { JobsListCommand, JobsRetryCommand } from './job.commands.js';
import { MigrationRevertCommand, MigrationRunCommand, MigrationStatusCommand } from './migration.commands.js';
import { OpenApiExportCommand } from './openapi.commands.js';

@Module({})
export class CliModule {
  static forRoot(options: CoreOptions): DynamicModule {
    return {
      module: CliModule,
      // Every area's module, whatever MODULES says, so maintenance covers all of them (e.g. every secret store
      // for key rotation); commands reuse the areas' services.
      imports: [AppModule.forRoot({ ...options, config: { ...options.config, modules: AREAS } })],
      providers: [
        CliProgramName,
        MigrationRunCommand,
        MigrationRevertCommand,
        MigrationStatusCommand,
        ApiKeyCreateCommand,
        ApiKeyListCommand,
        ApiKeyRevokeCommand,
        OpenApiExportCommand,
        EncryptionRotateKeyCommand,
        JobsListCommand,
        JobsRetryCommand,
        DbCopyCommand,
        DbVerifyCommand,
        DbBackupCommand,
        DbRestoreCommand,
        AuditListCommand,
      ],
    };
  }
}
