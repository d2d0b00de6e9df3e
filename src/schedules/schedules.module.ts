import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { registerEntities } from '../database/entity-registry.js';
import { ScheduleStats } from './entities/schedule-stats.entity.js';
import { ScheduleStatsDelta } from './entities/schedule-stats-delta.entity.js';
import { Recurrence, RecurrenceException, Schedule, ScheduleItem } from './entities/schedule.entity.js';
import { OccurrencesController } from './occurrences.controller.js';
import { OccurrencesService } from './occurrences.service.js';
import { ScheduleReader } from './schedule-reader.js';
import { SchedulesController } from './schedules.controller.js';
import { SchedulesIcalController } from './schedules-ical.controller.js';
import { SchedulesImportController } from './schedules-import.controller.js';
import { IcalIdentityStore } from './ical-identity-store.js';
import { ImportAdmission } from './import-admission.js';
import { SchedulesImportService } from './schedules-import.service.js';
import { SchedulesService } from './schedules.service.js';
import { SeriesCache } from './series-cache.js';

@Module({
  imports: [
    TypeOrmModule.forFeature(
      registerEntities([
        Schedule,
        ScheduleItem,
        Recurrence,
        RecurrenceException,
        ScheduleStats,
        ScheduleStatsDelta,
      ]),
    ),
  ],
  controllers: [
    OccurrencesController,
    SchedulesController,
    SchedulesIcalController,
    SchedulesImportController,
  ],
  providers: [
    SchedulesService,
    OccurrencesService,
    SeriesCache,
    ScheduleReader,
    SchedulesImportService,
    IcalIdentityStore,
    ImportAdmission,
  ],
})
export class SchedulesModule {}
