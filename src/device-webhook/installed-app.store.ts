// Persistence of installed apps (tokens encrypted at rest, like every secret) and of the events they received.
import { randomUUID } from 'node:crypto';
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Logger } from 'pino';
import { DataSource, In, LessThan, type EntityManager, type Repository } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/config.js';
import { EncryptionService } from '../crypto/encryption.service.js';
import { JobsService } from '../jobs/jobs.service.js';
import { SecretStoreRegistry } from '../crypto/secret-store.registry.js';
import { WebhookDeviceEvent, type StoredEventPayload } from './entities/webhook-device-event.entity.js';
import { WebhookInstalledApp } from './entities/webhook-installed-app.entity.js';
import type { SmartAppConfig } from './smartapp/automation-plan.js';

export const EVENTS_RETENTION_JOB = 'webhook.events-retention';
const DAY_MS = 86_400_000;
/** Rows deleted per statement: short statements, so retention never holds a lock for long. */
const RETENTION_BATCH = 1_000;
const RETENTION_EVERY_MS = 3_600_000;

/** Names one installation: the tenant of the webhook path and SmartThings' installedAppId. */
export interface AppRef {
  domain: string;
  installedAppId: string;
}

export function appKey(ref: AppRef): string {
  return `${ref.domain}\u0000${ref.installedAppId}`;
}

export interface InstalledAppChanges {
  appId?: string | null;
  locationId?: string | null;
  config?: SmartAppConfig | null;
  permissions?: string[] | null;
  /** Plain text; stored encrypted. Absent = keep the stored one. */
  authToken?: string | null;
  authTokenExpiresAt?: Date;
  refreshToken?: string | null;
}

export interface AppTokens {
  authToken: string | undefined;
  authTokenExpiresAt: Date | undefined;
  refreshToken: string | undefined;
}

export interface NewEvent {
  eventId: string;
  eventType: string;
  eventTime: string | null;
  payload: StoredEventPayload;
}

@Injectable()
export class InstalledAppStore implements OnModuleInit {
  constructor(
    @InjectRepository(WebhookInstalledApp) private readonly apps: Repository<WebhookInstalledApp>,
    @InjectRepository(WebhookDeviceEvent) private readonly events: Repository<WebhookDeviceEvent>,
    private readonly dataSource: DataSource,
    private readonly encryption: EncryptionService,
    private readonly secretStores: SecretStoreRegistry,
    private readonly jobs: JobsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.secretStores.register({
      name: 'webhook installed-app tokens',
      reencrypt: (rewrite, manager) => this.reencrypt(rewrite, manager),
    });
    // Retention: one instance of the fleet at a time deletes events older than WEBHOOK_EVENT_RETENTION_DAYS.
    this.jobs.register({
      kind: EVENTS_RETENTION_JOB,
      maxAttempts: 3,
      retryDelayMs: () => 60_000,
      handle: async ({ log, signal }) => {
        const cutoff = new Date(Date.now() - this.config.retention.webhookEventDays * DAY_MS);
        let deleted = 0;
        for (let batch = RETENTION_BATCH; batch === RETENTION_BATCH && !signal.aborted;) {
          batch = await this.pruneEvents(cutoff, RETENTION_BATCH);
          deleted += batch;
        }
        if (deleted > 0) log.info({ deleted, cutoff }, 'webhook event retention: old events deleted');
        return { rescheduleInMs: RETENTION_EVERY_MS };
      },
    });
    this.jobs.schedulePeriodic(EVENTS_RETENTION_JOB, RETENTION_EVERY_MS);
  }

  find(ref: AppRef): Promise<WebhookInstalledApp | null> {
    return this.apps.findOne({ where: { domain: ref.domain, installedAppId: ref.installedAppId } });
  }

  list(domain: string): Promise<WebhookInstalledApp[]> {
    return this.apps.find({ where: { domain }, order: { installedAt: 'ASC', installedAppId: 'ASC' } });
  }

  /**
   * Creates or updates the installation; fields left undefined keep their stored value. Run inside the lifecycle's
   * transaction (`manager`): the row is created if missing without failing on a concurrent delivery (insert or
   * ignore), then read under a row lock on PostgreSQL, so two deliveries for one app apply one after the other.
   */
  async save(
    ref: AppRef,
    changes: InstalledAppChanges,
    now: Date,
    manager: EntityManager,
  ): Promise<WebhookInstalledApp> {
    const apps = this.repo(manager);
    await apps
      .createQueryBuilder()
      .insert()
      .values({
        id: randomUUID(),
        domain: ref.domain,
        installedAppId: ref.installedAppId,
        appId: null,
        locationId: null,
        config: {},
        permissions: [],
        authToken: null,
        authTokenExpiresAt: null,
        refreshToken: null,
        installedAt: now,
        updatedAt: now,
      })
      .orIgnore()
      .execute();
    const row = await apps.findOneOrFail({
      where: { domain: ref.domain, installedAppId: ref.installedAppId },
      ...(this.dataSource.options.type === 'postgres'
        ? { lock: { mode: 'pessimistic_write' as const } }
        : {}),
    });
    this.apply(row, changes);
    row.updatedAt = now;
    return apps.save(row);
  }

  private repo(manager: EntityManager | undefined): Repository<WebhookInstalledApp> {
    return manager === undefined ? this.apps : manager.getRepository(WebhookInstalledApp);
  }

  private apply(row: WebhookInstalledApp, changes: InstalledAppChanges): void {
    if (changes.appId) row.appId = changes.appId;
    if (changes.locationId) row.locationId = changes.locationId;
    if (changes.config) row.config = changes.config;
    if (changes.permissions) row.permissions = changes.permissions;
    if (changes.authToken) {
      row.authToken = this.encryption.encrypt(changes.authToken);
      row.authTokenExpiresAt = changes.authTokenExpiresAt ?? null;
    }
    if (changes.refreshToken) row.refreshToken = this.encryption.encrypt(changes.refreshToken);
  }

  /** UNINSTALL: the installation, its tokens and its events go (in the lifecycle's transaction). */
  async remove(ref: AppRef, manager: EntityManager): Promise<boolean> {
    await manager.delete(WebhookDeviceEvent, { domain: ref.domain, installedAppId: ref.installedAppId });
    const result = await manager.delete(WebhookInstalledApp, {
      domain: ref.domain,
      installedAppId: ref.installedAppId,
    });
    return (result.affected ?? 0) > 0;
  }

  /**
   * Retention (WEBHOOK_EVENT_RETENTION_DAYS): deletes up to `batch` events received before `cutoff`; answers how
   * many went, so the caller repeats until a batch comes back short.
   */
  async pruneEvents(cutoff: Date, batch: number): Promise<number> {
    const old = await this.events.find({
      select: { id: true },
      where: { receivedAt: LessThan(cutoff) },
      order: { receivedAt: 'ASC' },
      take: batch,
    });
    if (old.length === 0) return 0;
    await this.events.delete({ id: In(old.map((row) => row.id)) });
    return old.length;
  }

  async tokensOf(ref: AppRef, log: Logger, manager?: EntityManager): Promise<AppTokens | undefined> {
    const row = await this.repo(manager).findOne({
      where: { domain: ref.domain, installedAppId: ref.installedAppId },
    });
    if (row === null) return undefined;
    return {
      authToken: this.decrypt(ref, row.authToken, 'auth token', log),
      authTokenExpiresAt: row.authTokenExpiresAt ?? undefined,
      refreshToken: this.decrypt(ref, row.refreshToken, 'refresh token', log),
    };
  }

  async saveTokens(
    ref: AppRef,
    tokens: { authToken: string; authTokenExpiresAt: Date; refreshToken: string | undefined },
    now: Date,
    manager?: EntityManager,
  ): Promise<void> {
    const set: Partial<WebhookInstalledApp> = {
      authToken: this.encryption.encrypt(tokens.authToken),
      authTokenExpiresAt: tokens.authTokenExpiresAt,
      updatedAt: now,
    };
    if (tokens.refreshToken) set.refreshToken = this.encryption.encrypt(tokens.refreshToken);
    await this.repo(manager).update({ domain: ref.domain, installedAppId: ref.installedAppId }, set);
  }

  private decrypt(ref: AppRef, ciphertext: string | null, what: string, log: Logger): string | undefined {
    if (ciphertext === null) return undefined;
    try {
      return this.encryption.decrypt(ciphertext);
    } catch (error) {
      log.error(
        { domain: ref.domain, installedAppId: ref.installedAppId, err: error },
        `stored ${what} cannot be decrypted; the app needs an UPDATE from SmartThings`,
      );
      return undefined;
    }
  }

  /**
   * Stores the events not seen before and returns their ids, so only those drive the automation. Runs in the
   * lifecycle's transaction after save(), whose row lock serialises an app's deliveries on PostgreSQL; the unique
   * index has the last word (a lost race skips the row instead of failing the delivery).
   */
  async recordEvents(
    ref: AppRef,
    batch: readonly NewEvent[],
    now: Date,
    manager: EntityManager,
  ): Promise<Set<string>> {
    const events = manager.getRepository(WebhookDeviceEvent);
    const unique = new Map<string, NewEvent>();
    for (const event of batch) if (!unique.has(event.eventId)) unique.set(event.eventId, event);
    if (unique.size === 0) return new Set();
    const ids = [...unique.keys()];
    const known = new Set<string>();
    // Chunked so a large delivery stays under the databases' bound-parameter limits.
    for (let start = 0; start < ids.length; start += 500) {
      const rows = await events.find({
        select: { eventId: true },
        where: {
          domain: ref.domain,
          installedAppId: ref.installedAppId,
          eventId: In(ids.slice(start, start + 500)),
        },
      });
      for (const row of rows) known.add(row.eventId);
    }
    const fresh = [...unique.values()].filter((event) => !known.has(event.eventId));
    if (fresh.length === 0) return new Set();
    const rows = fresh.map((event) => ({
      id: randomUUID(),
      domain: ref.domain,
      installedAppId: ref.installedAppId,
      eventId: event.eventId,
      eventType: event.eventType,
      eventTime: event.eventTime,
      receivedAt: now,
      payload: event.payload,
    }));
    for (let start = 0; start < rows.length; start += 100) {
      await events
        .createQueryBuilder()
        .insert()
        .into(WebhookDeviceEvent)
        .values(rows.slice(start, start + 100))
        .orIgnore()
        .execute();
    }
    return new Set(fresh.map((event) => event.eventId));
  }

  listEvents(ref: AppRef, pageIndex: number, pageSize: number): Promise<[WebhookDeviceEvent[], number]> {
    return this.events.findAndCount({
      where: { domain: ref.domain, installedAppId: ref.installedAppId },
      order: { receivedAt: 'DESC', eventTime: 'DESC', id: 'ASC' },
      skip: (pageIndex - 1) * pageSize,
      take: pageSize,
    });
  }

  /** Key rotation (encryption:rotate-key): every stored token, in the rotation's transaction. */
  private async reencrypt(rewrite: (ciphertext: string) => string, manager: EntityManager): Promise<number> {
    const rows = await manager.find(WebhookInstalledApp);
    let count = 0;
    for (const row of rows) {
      const set: Partial<WebhookInstalledApp> = {};
      if (row.authToken !== null) set.authToken = rewrite(row.authToken);
      if (row.refreshToken !== null) set.refreshToken = rewrite(row.refreshToken);
      const changed = Object.keys(set).length;
      if (changed === 0) continue;
      await manager.update(WebhookInstalledApp, { id: row.id }, set);
      count += changed;
    }
    return count;
  }
}
