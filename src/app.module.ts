// The modular monolith: the core plus the areas this process serves (MODULES).
import { Module, type DynamicModule, type Type } from '@nestjs/common';
import type { Area } from './config/config.js';
import { CoreModule, type CoreOptions } from './core/core.module.js';
import { MigrationRunsModule } from './migration-runs/migration-runs.module.js';

/** Each area's Nest module, by the name MODULES uses. */
export const AREA_MODULES: Record<Area, Type> = {
  migrations: MigrationRunsModule,
};

@Module({})
export class AppModule {
  static forRoot(options: CoreOptions): DynamicModule {
    const areas = options.config.modules.map((area) => AREA_MODULES[area]);
    return { module: AppModule, imports: [CoreModule.forRoot(options), ...areas] };
  }
}
