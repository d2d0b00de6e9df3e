// Operation 6: the SmartApp's answer to each lifecycle. State changes (installed app, tokens, events)
// are written before the reply; the automation's SmartThings calls are handed to SmartThingsOutbound, which holds
// the reply for at most its budget and never fails it.
import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { DataSource } from 'typeorm';
import { writeAuditEvent, type AuditEntry } from '../audit/audit-trail.js';
import { inTransaction } from '../database/transaction.js';
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
import { Counter } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service.js';

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
    private readonly dataSource: DataSource,
    @Inject(RESOLVED_WEBHOOK_OPTIONS) private readonly options: DeviceWebhookOptions,
    metrics: MetricsService,
  ) {
    this.lifecycles = new Counter({
      name: 'webhook_lifecycles_total',
      help: 'SmartApp lifecycle requests handled, by lifecycle and outcome (answered, rejected)',
      labelNames: ['lifecycle', 'outcome'],
      registers: [metrics.registry],
    });
    // Every series exists from the start (0), so rates and alerts see the first request.
    for (const lifecycle of LIFECYCLES)
      for (const outcome of ['answered', 'rejected']) this.lifecycles.inc({ lifecycle, outcome }, 0);
  }

  /** Lifecycles handled by outcome: the dashboard's webhook row (follow-up calls are jobs: platform_jobs). */
  private readonly lifecycles: Counter<'lifecycle' | 'outcome'>;

  /** A request refused before it reached the service (its HTTP signature): counted as `rejected` too. */
  countRejected(lifecycle: string | undefined): void {
    const value = lifecycle?.trim().toUpperCase() ?? '';
    this.lifecycles.inc({ lifecycle: isLifecycle(value) ? value : 'UNKNOWN', outcome: 'rejected' });
  }

  async handle(
    domainParam: string,
    body: DeviceWebhookBody,
    info: RequestInfo,
    ctx: RequestContext,
  ): Promise<LifecycleReply> {
    let label = 'UNKNOWN';
    try {
      label = lifecycleOfBody(body);
    } catch {
      // Answered below as the validation error it is.
    }
    try {
      const reply = await this.dispatch(domainParam, body, info, ctx);
      this.lifecycles.inc({ lifecycle: label, outcome: 'answered' });
      return reply;
    } catch (error) {
      this.lifecycles.inc({ lifecycle: label, outcome: 'rejected' });
      throw error;
    }
  }

  private async dispatch(
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
        await this.installOrUpdate(domain, body.InstallData, 'InstallData', 'INSTALL', body.AppId, ctx);
        return { installData: {} };
      case 'UPDATE':
        await this.installOrUpdate(domain, body.UpdateData, 'UpdateData', 'UPDATE', body.AppId, ctx);
        return { updateData: {} };
      case 'EVENT':
        await this.event(domain, body, ctx);
        return { eventData: {} };
      case 'OAUTH_CALLBACK':
        // A SmartApp that links a third-party account would finish that here; this automation has none.
        log.info(
          { domain, installedAppId: body.OAuthCallbackData?.InstalledAppId ?? null },
          'SmartThings OAUTH_CALLBACK received',
        );
        return { oAuthCallbackData: {} };
      case 'UNINSTALL':
        await this.uninstall(domain, body, log, ctx);
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
    ctx: RequestContext,
  ): Promise<void> {
    const log = ctx.logFor('webhook');
    const installedApp = requiredApp(data?.InstalledApp, `${field}.InstalledApp`);
    const authToken = required(data?.AuthToken, `${field}.AuthToken`);
    const ref: AppRef = { domain, installedAppId: installedApp.InstalledAppId };
    const now = new Date();
    // The installation and the calls it leads to are stored together: a crash after the reply loses neither.
    const jobId = await inTransaction(this.dataSource, async (manager) => {
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
        manager,
      );
      const plan = subscriptionPlan(ref.installedAppId, row.config);
      await writeAuditEvent(
        manager,
        webhookChange(ctx, appId, lifecycle === 'INSTALL' ? 'install' : 'update', ref),
      );
      return this.outbound.enqueue(ref, plan, lifecycle, ctx.correlationId, manager);
    });
    log.info({ domain, installedAppId: ref.installedAppId, lifecycle }, `SmartApp ${lifecycle} stored`);
    await this.outbound.run(jobId, ref, lifecycle, log);
  }

  private async event(domain: string, body: DeviceWebhookBody, ctx: RequestContext): Promise<void> {
    const log = ctx.logFor('webhook');
    const data = body.EventData;
    const installedApp = requiredApp(data?.InstalledApp, 'EventData.InstalledApp');
    const events = data?.Events ?? [];
    const stored = events.map((event, index) => toStoredEvent(event, index));
    const ref: AppRef = { domain, installedAppId: installedApp.InstalledAppId };
    const now = new Date();
    // The events, the app's state and the calls they lead to are stored in one transaction.
    const { jobId, skipped } = await inTransaction(this.dataSource, async (manager) => {
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
        manager,
      );
      const fresh = await this.store.recordEvents(ref, stored, now, manager);
      const acted = automationEvents(events, stored, fresh);
      const work = eventPlan(ref.installedAppId, row.config, acted, now.getTime());
      for (const warning of work.warnings) {
        log.warn({ domain, installedAppId: ref.installedAppId }, `door lights: ${warning}`);
      }
      return {
        jobId: await this.outbound.enqueue(ref, work.plan, 'EVENT', ctx.correlationId, manager),
        skipped: events.length - acted.length,
      };
    });
    log.info(
      { domain, installedAppId: ref.installedAppId, events: events.length, ignoredOrRepeated: skipped },
      'SmartApp EVENT received',
    );
    await this.outbound.run(jobId, ref, 'EVENT', log);
  }

  private async uninstall(
    domain: string,
    body: DeviceWebhookBody,
    log: Logger,
    ctx: RequestContext,
  ): Promise<void> {
    const installedApp = requiredApp(body.UninstallData?.InstalledApp, 'UninstallData.InstalledApp');
    const ref: AppRef = { domain, installedAppId: installedApp.InstalledAppId };
    const removed = await inTransaction(this.dataSource, async (manager) => {
      await this.outbound.cancel(ref, manager);
      const gone = await this.store.remove(ref, manager);
      await writeAuditEvent(manager, webhookChange(ctx, body.AppId, 'uninstall', ref));
      return gone;
    });
    log.info({ domain, installedAppId: ref.installedAppId, removed }, 'SmartApp UNINSTALL');
  }
}

/**
 * An installation change, made by SmartThings on the user's behalf (the request's HTTP signature proved the sender):
 * the actor is the SmartApp's app id. The auth token in the same body is never recorded.
 */
function webhookChange(
  ctx: RequestContext,
  appId: string | null | undefined,
  verb: 'install' | 'update' | 'uninstall',
  ref: AppRef,
): AuditEntry {
  return {
    by: {
      actor: { type: 'webhook', id: appId ?? null, name: 'SmartThings', issuer: null },
      correlationId: ctx.correlationId,
      clientAddress: null,
    },
    action: `webhook.${verb}`,
    resourceType: 'InstalledApp',
    resourceId: ref.installedAppId,
    detail: { domain: ref.domain },
  };
}

/** The fresh events (not seen before) the automation acts on, in delivery order. */
function automationEvents(
  events: readonly EventDto[],
  stored: readonly NewEvent[],
  freshIds: ReadonlySet<string>,
): AutomationEvent[] {
  const fresh = new Set(freshIds);
  const result: AutomationEvent[] = [];
  events.forEach((event, index) => {
    const record = stored[index];
    if (!fresh.has(record.eventId)) return;
    fresh.delete(record.eventId);
    if (event.EventType === 'DEVICE_EVENT' && event.DeviceEvent) {
      result.push({
        type: 'DEVICE_EVENT',
        capability: event.DeviceEvent.Capability,
        attribute: event.DeviceEvent.Attribute,
        value: event.DeviceEvent.Value,
      });
    } else if (event.EventType === 'TIMER_EVENT' && event.TimerEvent?.Name) {
      result.push({ type: 'TIMER_EVENT', name: event.TimerEvent.Name });
    }
  });
  return result;
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
