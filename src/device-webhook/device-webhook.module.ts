import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DeviceWebhookController } from './device-webhook.controller.js';
import {
  DEVICE_WEBHOOK_OPTIONS,
  RESOLVED_WEBHOOK_OPTIONS,
  resolveWebhookOptions,
  type DeviceWebhookOptions,
} from './device-webhook.options.js';
import { DeviceWebhookService } from './device-webhook.service.js';
import { WebhookDeviceEvent } from './entities/webhook-device-event.entity.js';
import { WebhookInstalledApp } from './entities/webhook-installed-app.entity.js';
import { WebhookSignature } from './entities/webhook-signature.entity.js';
import { registerEntities } from '../database/entity-registry.js';
import { InstalledAppStore } from './installed-app.store.js';
import { InstalledAppsController } from './installed-apps.controller.js';
import { SmartThingsOutbound } from './smartthings-outbound.service.js';
import { SmartThingsTokens } from './smartthings-tokens.service.js';
import { WebhookReplays } from './webhook-replays.js';
import { WebhookSignatureGuard, WebhookSignatureVerifier } from './webhook-signature.guard.js';

/** Operation 6: the SmartThings SmartApp (docs/device-webhook.md). */
@Module({
  imports: [
    TypeOrmModule.forFeature(registerEntities([WebhookInstalledApp, WebhookDeviceEvent, WebhookSignature])),
  ],
  controllers: [DeviceWebhookController, InstalledAppsController],
  providers: [
    {
      provide: RESOLVED_WEBHOOK_OPTIONS,
      // Overrides come from a global provider of DEVICE_WEBHOOK_OPTIONS when one exists (tests); else defaults.
      inject: [{ token: DEVICE_WEBHOOK_OPTIONS, optional: true }],
      useFactory: (overrides?: Partial<DeviceWebhookOptions>) => resolveWebhookOptions(overrides),
    },
    InstalledAppStore,
    SmartThingsTokens,
    SmartThingsOutbound,
    WebhookSignatureVerifier,
    WebhookSignatureGuard,
    WebhookReplays,
    DeviceWebhookService,
  ],
})
export class DeviceWebhookModule {}
