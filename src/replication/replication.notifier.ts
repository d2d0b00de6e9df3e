// Wakes changeSetState waits (WaitSeconds) when a report for their (collection, origin) is committed — without a
// held database connection or a busy loop.
// - In this process: an EventEmitter keyed by (collection, origin), fired by the ingestion after commit.
// - Across instances on PostgreSQL: ingestion calls pg_notify in its transaction; each process keeps ONE dedicated
//   pg client LISTENing (opened on the first wait, reconnected on the next wait after a failure) and re-emits.
// - SQLite has no cross-process notification: an instance hears its own reports at once and another process's at
//   the waits' fallback re-check (SQLITE_RECHECK_MS). The re-check also covers a PostgreSQL listener that is down.
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import pg from 'pg';
import type { Logger } from 'pino';
import { APP_CONFIG, type AppConfig } from '../config/config.js';
import { ROOT_LOGGER } from '../core/core.module.js';
import { NOTIFY_CHANNEL } from './replication.store.js';

const ALL = '*';
/** SQLite: how often a wait re-reads the database to see other processes' reports. */
export const SQLITE_RECHECK_MS = 2_000;
/** PostgreSQL with a live listener: a safety net only (a notification lost while reconnecting). */
export const POSTGRES_RECHECK_MS = 10_000;
/** PostgreSQL while the listener is down. */
const POSTGRES_DEGRADED_RECHECK_MS = 1_000;

interface Payload {
  /** The instance that committed the write (it has already woken its own waits). */
  i: string;
  c?: string;
  o?: string;
}

@Injectable()
export class ReplicationNotifier implements OnModuleDestroy {
  readonly instanceId = randomUUID();
  private readonly emitter = new EventEmitter();
  private listener: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private closedFlag = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
  ) {
    // One listener per waiting request: there is no sensible upper bound to warn at.
    this.emitter.setMaxListeners(0);
  }

  get closed(): boolean {
    return this.closedFlag;
  }

  get recheckMs(): number {
    if (this.config.database.type === 'sqlite') return SQLITE_RECHECK_MS;
    return this.listener ? POSTGRES_RECHECK_MS : POSTGRES_DEGRADED_RECHECK_MS;
  }

  payload(collection: string, origin: string): string {
    return JSON.stringify({ i: this.instanceId, c: collection, o: origin } satisfies Payload);
  }

  /** For changes that can affect every diagnosis (a server or node decommissioned or renamed). */
  payloadAll(): string {
    return JSON.stringify({ i: this.instanceId } satisfies Payload);
  }

  /** After a commit in this process. */
  publish(collection: string, origin: string): void {
    this.emitter.emit(key(collection, origin));
  }

  publishAll(): void {
    this.emitter.emit(ALL);
  }

  subscribe(collection: string, origin: string, wake: () => void): () => void {
    const eventKey = key(collection, origin);
    this.emitter.on(eventKey, wake);
    this.emitter.on(ALL, wake);
    return () => {
      this.emitter.off(eventKey, wake);
      this.emitter.off(ALL, wake);
    };
  }

  /** PostgreSQL: make sure this process listens before a wait reads the state (so no commit falls in between). */
  async ready(): Promise<void> {
    if (this.config.database.type !== 'postgres' || this.closedFlag || this.listener) return;
    this.connecting ??= this.listen(this.config.database.url).finally(() => {
      this.connecting = undefined;
    });
    await this.connecting;
  }

  private async listen(url: string): Promise<void> {
    // Bounded connect (a wait must not hang on an unreachable server) and TCP keep-alive (an idle LISTEN
    // connection is what NAT and firewalls drop silently).
    const client = new pg.Client({
      connectionString: url,
      application_name: 'platform-api-replication',
      connectionTimeoutMillis: 5_000,
      keepAlive: true,
    });
    client.on('notification', (message) => {
      if (message.channel === NOTIFY_CHANNEL) this.onNotification(message.payload);
    });
    client.on('error', (error) => {
      this.logger.warn({ err: error.message }, 'Replication listener failed; waits fall back to re-checking');
      this.drop(client);
    });
    client.on('end', () => this.drop(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${NOTIFY_CHANNEL}`);
      if (this.closedFlag) {
        await client.end();
        return;
      }
      this.listener = client;
    } catch (error) {
      this.logger.warn(
        { err: error instanceof Error ? error.message : String(error) },
        'Replication listener could not start; waits fall back to re-checking',
      );
      await client.end().catch(() => undefined);
    }
  }

  private drop(client: pg.Client): void {
    if (this.listener !== client) return;
    this.listener = undefined;
    // Notifications may have been missed: let every wait look again.
    this.emitter.emit(ALL);
  }

  private onNotification(text: string | undefined): void {
    let payload: Payload;
    try {
      payload = JSON.parse(text ?? '') as Payload;
    } catch {
      return;
    }
    if (payload.i === this.instanceId) return;
    if (typeof payload.c === 'string' && typeof payload.o === 'string') this.publish(payload.c, payload.o);
    else this.publishAll();
  }

  async onModuleDestroy(): Promise<void> {
    this.closedFlag = true;
    // Waits still running answer with what they have instead of holding up the shutdown.
    this.emitter.emit(ALL);
    await this.connecting?.catch(() => undefined);
    const client = this.listener;
    this.listener = undefined;
    await client?.end().catch(() => undefined);
  }
}

function key(collection: string, origin: string): string {
  return JSON.stringify([collection, origin]);
}
