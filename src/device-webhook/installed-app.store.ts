// Persistence of installed apps (tokens encrypted at rest, DESIGN §2) and of the events they received.
import { randomUUID } from 'node:crypto';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Logger } from 'pino';
import { DataSource, In, QueryFailedError, type Repository } from 'typeorm';
import { EncryptionService } from '../crypto/encryption.service.js';
import { SecretStoreRegistry } from '../crypto/secret-store.registry.js';
import { WebhookDeviceEvent, type StoredEventPayload } from './entities/webhook-device-event.entity.js';
import { WebhookInstalledApp } from './entities/webhook-installed-app.entity.js';
import type { SmartAppConfig } from './smartapp/automation-plan.js';

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
  ) {}

  onModuleInit(): void {
    this.secretStores.register({
      name: 'webhook installed-app tokens',
      reencrypt: (rewrite) => this.reencrypt(rewrite),
    });
  }

  find(ref: AppRef): Promise<WebhookInstalledApp | null> {
    return this.apps.findOne({ where: { domain: ref.domain, installedAppId: ref.installedAppId } });
  }

  list(domain: string): Promise<WebhookInstalledApp[]> {
    return this.apps.find({ where: { domain }, order: { installedAt: 'ASC', installedAppId: 'ASC' } });
  }

  /** Creates or updates the installation; fields left undefined keep their stored value. */
  async save(ref: AppRef, changes: InstalledAppChanges, now: Date): Promise<WebhookInstalledApp> {
    for (let attempt = 0; ; attempt++) {
      const existing = await this.find(ref);
      const row =
        existing ??
        this.apps.create({
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
        });
      this.apply(row, changes);
      row.updatedAt = now;
      try {
        return await this.apps.save(row);
      } catch (error) {
        // Two deliveries for a new installation raced; the second one updates the row the first created.
        if (existing !== null || attempt > 0 || !(error instanceof QueryFailedError)) throw error;
      }
    }
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

  /** UNINSTALL: the installation, its tokens and its events go. */
  async remove(ref: AppRef): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      await manager.delete(WebhookDeviceEvent, { domain: ref.domain, installedAppId: ref.installedAppId });
      const result = await manager.delete(WebhookInstalledApp, {
        domain: ref.domain,
        installedAppId: ref.installedAppId,
      });
      return (result.affected ?? 0) > 0;
    });
  }

  async tokensOf(ref: AppRef, log: Logger): Promise<AppTokens | undefined> {
    const row = await this.find(ref);
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
  ): Promise<void> {
    const set: Partial<WebhookInstalledApp> = {
      authToken: this.encryption.encrypt(tokens.authToken),
      authTokenExpiresAt: tokens.authTokenExpiresAt,
      updatedAt: now,
    };
    if (tokens.refreshToken) set.refreshToken = this.encryption.encrypt(tokens.refreshToken);
    await this.apps.update({ domain: ref.domain, installedAppId: ref.installedAppId }, set);
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
   * Stores the events not seen before and returns their ids, so only those drive the automation. Within one
   * process the automation queue serialises an app's deliveries; across processes the unique index has the last
   * word (a lost race skips the row instead of failing the delivery).
   */
  async recordEvents(ref: AppRef, batch: readonly NewEvent[], now: Date): Promise<Set<string>> {
    const unique = new Map<string, NewEvent>();
    for (const event of batch) if (!unique.has(event.eventId)) unique.set(event.eventId, event);
    if (unique.size === 0) return new Set();
    const ids = [...unique.keys()];
    const known = new Set<string>();
    // Chunked so a large delivery stays under the databases' bound-parameter limits.
    for (let start = 0; start < ids.length; start += 500) {
      const rows = await this.events.find({
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
      await this.events
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

  /** Key rotation (encryption:rotate-key): every stored token, in one transaction. */
  private reencrypt(rewrite: (ciphertext: string) => string): Promise<number> {
    return this.dataSource.transaction(async (manager) => {
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
    });
  }
}
