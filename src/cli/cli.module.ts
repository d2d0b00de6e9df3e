import { Module, type DynamicModule } from '@nestjs/common';
import { AppModule } from '../app.module.js';
import type { CoreOptions } from '../core/core.module.js';
import { ApiKeyCreateCommand, ApiKeyListCommand, ApiKeyRevokeCommand } from './api-key.commands.js';
import { EncryptionRotateKeyCommand } from './encryption.commands.js';
import { MigrationRevertCommand, MigrationRunCommand, MigrationStatusCommand } from './migration.commands.js';
import { OpenApiExportCommand } from './openapi.commands.js';

@Module({})
export class CliModule {
  static forRoot(options: CoreOptions): DynamicModule {
    return {
      module: CliModule,
      // The areas' modules too, so commands reuse their services (e.g. secret stores for key rotation).
      imports: [AppModule.forRoot(options)],
      providers: [
        MigrationRunCommand,
        MigrationRevertCommand,
        MigrationStatusCommand,
        ApiKeyCreateCommand,
        ApiKeyListCommand,
        ApiKeyRevokeCommand,
        OpenApiExportCommand,
        EncryptionRotateKeyCommand,
      ],
    };
  }
}
