import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { registerEntities } from '../database/entity-registry.js';
import { DataSource } from 'typeorm';
import { MigrationRun } from '../database/migration-run.entity.js';
import { MigrationRunner } from '../database/migration-runner.js';
import { MigrationRunsController } from './migration-runs.controller.js';
import { MigrationRunsService } from './migration-runs.service.js';

@Module({
  imports: [TypeOrmModule.forFeature(registerEntities([MigrationRun]))],
  controllers: [MigrationRunsController],
  providers: [
    MigrationRunsService,
    {
      provide: MigrationRunner,
      inject: [DataSource],
      useFactory: (dataSource: DataSource) => new MigrationRunner(dataSource),
    },
  ],
})
export class MigrationRunsModule {}
