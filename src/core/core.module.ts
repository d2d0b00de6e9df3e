// Cross-cutting providers every area gets for free: configuration, logger, encryption, API-key auth (a hook
// per route, see src/http/plugins/auth.plugin.ts), validation (global pipe), the error envelope (global filter), rate limiting and metrics.
import { Global, Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_PIPE, HttpAdapterHost } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { Logger } from 'pino';
import type { DataSource } from 'typeorm';
import { AuditModule } from '../audit/audit.module.js';
import { ApiKeyAuthenticator } from '../auth/api-key.auth.js';
import { AccessTokensService } from '../auth/access-tokens.service.js';
import { ApiKeysService } from '../auth/api-keys.service.js';
import { ApiKey } from '../auth/entities/api-key.entity.js';
import { APP_CONFIG, type AppConfig } from '../config/config.js';
import { EncryptionService, loadKeyRing } from '../crypto/encryption.service.js';
import { SecretStoreRegistry } from '../crypto/secret-store.registry.js';
import { DatabaseHealth, watchDatabase } from '../database/database-health.js';
import { registerEntities } from '../database/entity-registry.js';
import { AllExceptionsFilter } from '../errors/all-exceptions.filter.js';
import { HealthController } from '../health/health.controller.js';
import { ShutdownState } from '../health/shutdown-state.js';
import { IdempotencyKeyRecord } from '../http/entities/idempotency-key.entity.js';
import { IdempotencyStore } from '../http/idempotency-store.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { RateLimiter } from '../rate-limit/rate-limiter.js';
import { Job, RateLimitRow } from '../jobs/entities/job.entity.js';
import { JobsService } from '../jobs/jobs.service.js';
import { DtoValidationPipe } from '../validation/validation.pipe.js';

import { ROOT_LOGGER } from './tokens.js';

export { ROOT_LOGGER };

export interface CoreOptions {
  config: AppConfig;
  logger: Logger;
  /** Initialised (and migrated) before Nest starts, so no provider ever sees an unmigrated schema. */
  dataSource: DataSource;
}

registerEntities([ApiKey, Job, RateLimitRow, IdempotencyKeyRecord]);

@Global()
@Module({})
export class CoreModule {
  static forRoot({ config, logger, dataSource }: CoreOptions): DynamicModule {
    // Installed when the database was prepared (create-app.ts); here for apps built around a data source alone.
    const database = watchDatabase(dataSource, logger);
    return {
      module: CoreModule,
      imports: [
        TypeOrmModule.forRootAsync({
          // The options of the data source already opened (data-source.ts), not a second set made from config.
          useFactory: () => dataSource.options,
          dataSourceFactory: () => Promise.resolve(dataSource),
        }),
        TypeOrmModule.forFeature([ApiKey, IdempotencyKeyRecord]),
        AuditModule,
      ],
      controllers: [HealthController],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: ROOT_LOGGER, useValue: logger },
        {
          provide: EncryptionService,
          useFactory: () => new EncryptionService(loadKeyRing(config), () => loadKeyRing(config)),
        },
        SecretStoreRegistry,
        ApiKeysService,
        AccessTokensService,
        RateLimiter,
        MetricsService,
        JobsService,
        IdempotencyStore,
        ShutdownState,
        { provide: DatabaseHealth, useValue: database },
        ApiKeyAuthenticator,
        { provide: APP_PIPE, useClass: DtoValidationPipe },
        {
          provide: APP_FILTER,
          inject: [HttpAdapterHost],
          useFactory: (adapterHost: HttpAdapterHost) =>
            new AllExceptionsFilter(adapterHost, logger, database),
        },
      ],
      exports: [
        APP_CONFIG,
        ROOT_LOGGER,
        EncryptionService,
        SecretStoreRegistry,
        ApiKeysService,
        RateLimiter,
        MetricsService,
        JobsService,
        IdempotencyStore,
        ShutdownState,
        DatabaseHealth,
        TypeOrmModule,
      ],
    };
  }
}
