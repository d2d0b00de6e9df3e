// Every entity of the service, so the one DataSource (app, CLI, TypeORM CLI) knows the whole schema,
// whichever areas a process serves (MODULES).
import { ApiKey } from '../auth/entities/api-key.entity.js';
import { WebhookDeviceEvent } from '../device-webhook/entities/webhook-device-event.entity.js';
import { WebhookInstalledApp } from '../device-webhook/entities/webhook-installed-app.entity.js';
import { SmtpConfiguration } from '../mail/entities/smtp-configuration.entity.js';
import { MigrationRun } from '../migration-runs/entities/migration-run.entity.js';
import { REPLICATION_ENTITIES } from '../replication/entities/replication.entities.js';
import {
  Recurrence,
  RecurrenceException,
  Schedule,
  ScheduleItem,
} from '../schedules/entities/schedule.entity.js';
import { ScimUserEntity } from '../scim/entities/scim-user.entity.js';

export const ENTITIES = [
  ApiKey,
  MigrationRun,
  Schedule,
  ScheduleItem,
  Recurrence,
  RecurrenceException,
  SmtpConfiguration,
  WebhookInstalledApp,
  WebhookDeviceEvent,
  ScimUserEntity,
  ...REPLICATION_ENTITIES,
];
