// Operation 6: the SmartApp's answer to each lifecycle (DESIGN §7). State changes (installed app, tokens, events)
// are written before the reply; the automation's SmartThings calls are handed to SmartThingsOutbound, which holds
// the reply for at most its budget and never fails it.
import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { PlatformError, type FieldError } from '../errors/api-error.js';
import type { RequestContext } from '../logging/request-context.js';
import { RESOLVED_WEBHOOK_OPTIONS, type DeviceWebhookOptions } from './device-webhook.options.js';
import type {
  DeviceWebhookBody,
  EventDto,
  InstallDataDto,
  InstalledAppBodyDto,
} from './dto/webhook-body.dto.js';
import type { JsonValue, StoredEventPayload } from './entities/webhook-device-event.entity.js';
import { InstalledAppStore, type AppRef, type NewEvent } from './installed-app.store.js';
import { eventPlan, subscriptionPlan, type AutomationEvent } from './smartapp/automation-plan.js';
import { isLifecycle, LIFECYCLES, type Lifecycle } from './smartapp/lifecycle.js';
import { initializeReply, pageReply } from './smartapp/smartapp-definition.js';
import { SmartThingsOutbound } from './smartthings-outbound.service.js';
import { normaliseDomain } from './webhook-domain.js';

export type LifecycleReply = Record<string, unknown>;

export interface RequestInfo {
  /** `scheme://host/path` the request was posted to: CONFIRMATION answers it as targetUrl. */
  targetUrl: string;
}

@Injectable()
export class DeviceWebhookService {
  constructor(
    private readonly store: InstalledAppStore,
    private readonly outbound: SmartThingsOutbound,
    @Inject(RESOLVED_WEBHOOK_OPTIONS) private readonly options: DeviceWebhookOptions,
  ) {}

  async handle(
    domainParam: string,
    body: DeviceWebhookBody,
    info: RequestInfo,
    ctx: RequestContext,
  ): Promise<LifecycleReply> {
    const log = ctx.logFor('webhook');
    const domain = normaliseDomain(domainParam);
    const lifecycle = lifecycleOfBody(body);
    switch (lifecycle) {
      case 'PING':
        return { pingData: { challenge: required(body.PingData?.Challenge, 'PingData.Challenge') } };
      case 'CONFIRMATION':
        return this.confirmation(body, info, log);
      case 'CONFIGURATION':
        return configuration(body);
      case 'INSTALL':
        await this.installOrUpdate(domain, body.InstallData, 'InstallData', 'INSTALL', body.AppId, log);
        return { installData: {} };
      case 'UPDATE':
        await this.installOrUpdate(domain, body.UpdateData, 'UpdateData', 'UPDATE', body.AppId, log);
        return { updateData: {} };
      case 'EVENT':
        await this.event(domain, body, log);
        return { eventData: {} };
      case 'OAUTH_CALLBACK':
        // A SmartApp that links a third-party account would finish that here; this automation has none.
        log.info(
          { domain, installedAppId: body.OAuthCallbackData?.InstalledAppId ?? null },
          'SmartThings OAUTH_CALLBACK received',
        );
        return { oAuthCallbackData: {} };
      case 'UNINSTALL':
        await this.uninstall(domain, body, log);
        return { uninstallData: {} };
    }
  }

  private confirmation(body: DeviceWebhookBody, info: RequestInfo, log: Logger): LifecycleReply {
    const url = required(body.ConfirmationData?.ConfirmationUrl, 'ConfirmationData.ConfirmationUrl');
    this.outbound.confirm(body.ConfirmationData?.AppId ?? body.AppId, url, log);
    return { targetUrl: info.targetUrl };
  }

  private async installOrUpdate(
    domain: string,
    data: InstallDataDto | null | undefined,
    field: 'InstallData' | 'UpdateData',
    lifecycle: 'INSTALL' | 'UPDATE',
    appId: string | null | undefined,
    log: Logger,
  ): Promise<void> {
    const installedApp = requiredApp(data?.InstalledApp, `${field}.InstalledApp`);
    const authToken = required(data?.AuthToken, `${field}.AuthToken`);
    const ref: AppRef = { domain, installedAppId: installedApp.InstalledAppId };
    const now = new Date();
    const row = await this.store.save(
      ref,
      {
        appId,
        locationId: installedApp.LocationId,
        config: installedApp.Config ?? {},
        permissions: installedApp.Permissions ?? [],
        authToken,
        authTokenExpiresAt: new Date(now.getTime() + this.options.authTokenLifetimeMs),
        refreshToken: data?.RefreshToken,
      },
      now,
    );
    log.info({ domain, installedAppId: ref.installedAppId, lifecycle }, `SmartApp ${lifecycle} stored`);
    await this.outbound.run(ref, subscriptionPlan(ref.installedAppId, row.config), lifecycle, log);
  }

  private async event(domain: string, body: DeviceWebhookBody, log: Logger): Promise<void> {
    const data = body.EventData;
    const installedApp = requiredApp(data?.InstalledApp, 'EventData.InstalledApp');
    const events = data?.Events ?? [];
    const stored = events.map((event, index) => toStoredEvent(event, index));
    const ref: AppRef = { domain, installedAppId: installedApp.InstalledAppId };
    const now = new Date();
    // The delivery's config and token are the newest SmartThings has; an app this service never saw installed
    // (e.g. a database restored from backup) is recorded from them.
    const row = await this.store.save(
      ref,
      {
        locationId: installedApp.LocationId,
        config: installedApp.Config,
        permissions: installedApp.Permissions,
        authToken: data?.AuthToken,
        authTokenExpiresAt: new Date(now.getTime() + this.options.authTokenLifetimeMs),
      },
      now,
    );
    const fresh = await this.store.recordEvents(ref, stored, now);
    const automationEvents: AutomationEvent[] = [];
    events.forEach((event, index) => {
      const record = stored[index];
      if (!fresh.has(record.eventId)) return;
      fresh.delete(record.eventId);
      if (event.EventType === 'DEVICE_EVENT' && event.DeviceEvent) {
        automationEvents.push({
          type: 'DEVICE_EVENT',
          capability: event.DeviceEvent.Capability,
          attribute: event.DeviceEvent.Attribute,
          value: event.DeviceEvent.Value,
        });
      } else if (event.EventType === 'TIMER_EVENT' && event.TimerEvent?.Name) {
        automationEvents.push({ type: 'TIMER_EVENT', name: event.TimerEvent.Name });
      }
    });
    const skipped = events.length - automationEvents.length;
    const work = eventPlan(ref.installedAppId, row.config, automationEvents, now.getTime());
    for (const warning of work.warnings) {
      log.warn({ domain, installedAppId: ref.installedAppId }, `door lights: ${warning}`);
    }
    log.info(
      { domain, installedAppId: ref.installedAppId, events: events.length, ignoredOrRepeated: skipped },
      'SmartApp EVENT received',
    );
    await this.outbound.run(ref, work.plan, 'EVENT', log);
  }

  private async uninstall(domain: string, body: DeviceWebhookBody, log: Logger): Promise<void> {
    const installedApp = requiredApp(body.UninstallData?.InstalledApp, 'UninstallData.InstalledApp');
    const ref: AppRef = { domain, installedAppId: installedApp.InstalledAppId };
    this.outbound.cancel(ref);
    const removed = await this.store.remove(ref);
    log.info({ domain, installedAppId: ref.installedAppId, removed }, 'SmartApp UNINSTALL');
  }
}

function lifecycleOfBody(body: DeviceWebhookBody): Lifecycle {
  const raw = body.Lifecycle?.trim() || body.MessageType?.trim();
  if (!raw) throw invalid('Lifecycle', 'Lifecycle (or messageType) is required');
  const value = raw.toUpperCase();
  if (!isLifecycle(value)) {
    throw invalid(
      body.Lifecycle?.trim() ? 'Lifecycle' : 'MessageType',
      `Lifecycle ${raw} is not supported (supported: ${LIFECYCLES.join(', ')})`,
    );
  }
  return value;
}

function configuration(body: DeviceWebhookBody): LifecycleReply {
  const phase = required(body.ConfigurationData?.Phase, 'ConfigurationData.Phase').toUpperCase();
  if (phase === 'INITIALIZE') return { ...initializeReply() };
  if (phase === 'PAGE') return { ...pageReply() };
  throw invalid('ConfigurationData.Phase', `Phase ${phase} is not supported (INITIALIZE or PAGE)`);
}

function toStoredEvent(event: EventDto, index: number): NewEvent {
  const field = `EventData.Events[${index}]`;
  if (event.EventType === 'TIMER_EVENT') {
    const timer = event.TimerEvent;
    const name = required(timer?.Name, `${field}.TimerEvent.Name`);
    const payload: StoredEventPayload = {
      DeviceEvent: null,
      TimerEvent: {
        EventId: timer?.EventId ?? null,
        Name: name,
        Type: timer?.Type ?? null,
        Time: timer?.Time ?? null,
      },
    };
    // A timer event without an id is identified by what fired when, so a redelivery is still recognised.
    const eventId = timer?.EventId || `timer:${name}@${timer?.Time ?? event.EventTime ?? ''}`;
    return { eventId, eventType: event.EventType, eventTime: event.EventTime ?? null, payload };
  }
  const device = event.DeviceEvent;
  if (event.EventType === 'DEVICE_EVENT' && !device)
    throw invalid(`${field}.DeviceEvent`, 'DeviceEvent is required');
  const eventId = device?.EventId?.trim();
  if (event.EventType === 'DEVICE_EVENT' && !eventId) {
    throw invalid(`${field}.DeviceEvent.EventId`, 'EventId is required');
  }
  const payload: StoredEventPayload = {
    DeviceEvent: device
      ? {
          SubscriptionName: device.SubscriptionName ?? null,
          EventId: device.EventId ?? null,
          LocationId: device.LocationId ?? null,
          DeviceId: device.DeviceId ?? null,
          ComponentId: device.ComponentId ?? null,
          Capability: device.Capability ?? null,
          Attribute: device.Attribute ?? null,
          Value: (device.Value ?? null) as JsonValue,
          StateChange: device.StateChange ?? null,
        }
      : null,
    TimerEvent: null,
  };
  // Other event types (mode, health, …) are kept for the record under a stable made-up id when they have none.
  return {
    eventId: eventId || `${event.EventType}@${event.EventTime ?? ''}#${index}`,
    eventType: event.EventType,
    eventTime: event.EventTime ?? null,
    payload,
  };
}

function required(value: string | null | undefined, field: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw invalid(field, `${field} is required`);
  return value;
}

function requiredApp(app: InstalledAppBodyDto | null | undefined, field: string): InstalledAppBodyDto {
  if (!app) throw invalid(field, `${field} is required`);
  return app;
}

function invalid(field: string, message: string): PlatformError {
  const errors: FieldError[] = [{ Field: field, Message: message }];
  return PlatformError.validation(errors);
}
