// The modular monolith: the core plus the areas this process serves (MODULES).
import { Module, type DynamicModule, type Type } from '@nestjs/common';
import type { Area } from './config/config.js';
import { CoreModule, type CoreOptions } from './core/core.module.js';
import { DeviceWebhookModule } from './device-webhook/device-webhook.module.js';
import { MailModule } from './mail/mail.module.js';
import { MigrationRunsModule } from './migration-runs/migration-runs.module.js';
import { ReplicationModule } from './replication/replication.module.js';
import { SchedulesModule } from './schedules/schedules.module.js';
import { ScimModule } from './scim/scim.module.js';

/** Each area's Nest module, by the name MODULES uses. */
export const AREA_MODULES: Record<Area, Type> = {
  schedules: SchedulesModule,
  migrations: MigrationRunsModule,
  mail: MailModule,
  webhook: DeviceWebhookModule,
  users: ScimModule,
  replication: ReplicationModule,
};

@Module({})
export class AppModule {
  static forRoot(options: CoreOptions): DynamicModule {
    const areas = options.config.modules.map((area) => AREA_MODULES[area]);
    return { module: AppModule, imports: [CoreModule.forRoot(options), ...areas] };
  }
}
