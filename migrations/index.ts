// Every schema migration, oldest first. A new migration (npm run typeorm -- migration:generate migrations/Name)
// is added here by hand: an explicit list works the same under nest build, ts-node and jest.
import { Init1763780000000 } from './1763780000000-Init.js';
import { Schedules1763780000100 } from './1763780000100-Schedules.js';
import { ScimUsers1763780000200 } from './1763780000200-ScimUsers.js';
import { Mail1763780000300 } from './1763780000300-Mail.js';
import { Replication1763780000400 } from './1763780000400-Replication.js';
import { DeviceWebhook1763780000500 } from './1763780000500-DeviceWebhook.js';
import { Jobs1763780000600 } from './1763780000600-Jobs.js';
import { ApiKeyDomains1763780000650 } from './1763780000650-ApiKeyDomains.js';
import { WebhookSignatures1763780000660 } from './1763780000660-WebhookSignatures.js';
import { ScimGroups1763780000700 } from './1763780000700-ScimGroups.js';
import { RecurrenceDates1763780000750 } from './1763780000750-RecurrenceDates.js';
import { ScimUserEmails1763780000800 } from './1763780000800-ScimUserEmails.js';
import { ScimUserCount1763780000900 } from './1763780000900-ScimUserCount.js';
import { ScimCodePointOrder1763780001000 } from './1763780001000-ScimCodePointOrder.js';
import { IdempotencyKeys1763780001100 } from './1763780001100-IdempotencyKeys.js';
import { IcalImportKeys1763780001200 } from './1763780001200-IcalImportKeys.js';
import { ScheduleStats1763780001250 } from './1763780001250-ScheduleStats.js';
import { AuditEvents1763780001500 } from './1763780001500-AuditEvents.js';
import { CounterDeltas1763780001600 } from './1763780001600-CounterDeltas.js';
import { IcalUids1763780001700 } from './1763780001700-IcalUids.js';
import { AuditEventsTail1763780001800 } from './1763780001800-AuditEventsTail.js';

export const MIGRATIONS = [
  Init1763780000000,
  Schedules1763780000100,
  ScimUsers1763780000200,
  Mail1763780000300,
  Replication1763780000400,
  DeviceWebhook1763780000500,
  Jobs1763780000600,
  ApiKeyDomains1763780000650,
  WebhookSignatures1763780000660,
  ScimGroups1763780000700,
  RecurrenceDates1763780000750,
  ScimUserEmails1763780000800,
  ScimUserCount1763780000900,
  ScimCodePointOrder1763780001000,
  IdempotencyKeys1763780001100,
  IcalImportKeys1763780001200,
  ScheduleStats1763780001250,
  AuditEvents1763780001500,
  CounterDeltas1763780001600,
  IcalUids1763780001700,
  AuditEventsTail1763780001800,
];
