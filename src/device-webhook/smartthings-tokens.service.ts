// The bearer token for an installed app's SmartThings calls. Lifecycles bring fresh tokens (INSTALL/UPDATE an
// auth + refresh token, EVENT an auth token); calls made after that (background retries) may find the auth token
// expired and refresh it at SMARTTHINGS_TOKEN_URL with the app's OAuth client (SmartThings docs, "How to use
// refresh tokens": Basic client_id:client_secret, grant_type=refresh_token). A refresh token works once, so
// refreshes of one installed app run one at a time: concurrent callers in a process share one refresh, and across
// instances on PostgreSQL an advisory lock is held around read-refresh-store, so a caller that finds the token
// already replaced uses the new one. A refresh that failed for a passing reason (no answer, 5xx) is a durable job
// retried with back-off, so the app has a working token again without waiting for the next lifecycle.
import { createHash } from 'node:crypto';
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import { DataSource, type EntityManager } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/config.js';
import { inTransaction } from '../database/transaction.js';
import { JobFailed, JobsService, RetryLater } from '../jobs/jobs.service.js';
import { RESOLVED_WEBHOOK_OPTIONS, type DeviceWebhookOptions } from './device-webhook.options.js';
import { appKey, InstalledAppStore, type AppRef } from './installed-app.store.js';
import { SingleFlight } from './smartapp/keyed-work.js';
import { backoffDelay } from './smartapp/retry-policy.js';
import { tracedFetch } from '../tracing/tracing.js';

/** The job kind that retries a token refresh that failed for a passing reason. */
export const REFRESH_JOB = 'smartthings.token-refresh';

type Refreshed =
  | { token: string }
  | { token?: undefined; failure: 'transient' | 'permanent'; reason: string; fallback?: string };

/** Refresh a little before SmartThings would refuse the token, so a call does not race the expiry. */
const EXPIRY_MARGIN_MS = 15_000;
/** Refresh tokens SmartThings refused, remembered (as hashes) so they are not sent again; bounded. */
const REFUSED_MEMORY_MS = 60 * 60_000;
const MAX_REFUSED = 1_024;

interface TokenResponse {
  access_token?: unknown;
  refresh_token?: unknown;
  expires_in?: unknown;
}

@Injectable()
export class SmartThingsTokens implements OnModuleInit {
  private readonly refreshes = new SingleFlight<Refreshed>();
  /** sha256 of a refused refresh token → when it may be tried again (this instance). */
  private readonly refused = new Map<string, number>();

  constructor(
    private readonly store: InstalledAppStore,
    private readonly jobs: JobsService,
    private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(RESOLVED_WEBHOOK_OPTIONS) private readonly options: DeviceWebhookOptions,
  ) {}

  onModuleInit(): void {
    this.jobs.register<AppRef>({
      kind: REFRESH_JOB,
      maxAttempts: 1 + this.options.retryDelaysMs.length,
      retryDelayMs: (retry) => backoffDelay(this.options.retryDelaysMs, retry),
      handle: async ({ payload, signal, log }) => {
        const result = await this.refreshes.run(appKey(payload), () =>
          this.refreshLocked(payload, undefined, signal, log),
        );
        if (result.token !== undefined) return;
        if (result.failure === 'transient') throw new RetryLater(result.reason);
        throw new JobFailed(result.reason);
      },
    });
  }

  /** The token to call with now: the stored one, refreshed first when it has (nearly) expired. */
  async current(ref: AppRef, signal: AbortSignal, log: Logger): Promise<string | undefined> {
    const tokens = await this.store.tokensOf(ref, log);
    if (tokens === undefined) return undefined;
    const expired =
      tokens.authTokenExpiresAt !== undefined &&
      tokens.authTokenExpiresAt.getTime() - EXPIRY_MARGIN_MS <= Date.now();
    if (tokens.authToken !== undefined && !expired) return tokens.authToken;
    if (tokens.refreshToken === undefined || !this.canRefresh()) return tokens.authToken;
    return (await this.refresh(ref, tokens.authToken, signal, log)) ?? tokens.authToken;
  }

  /**
   * A new auth token after `stale` was refused (or expired). When another caller already replaced `stale`, its
   * token is returned without a second refresh. Concurrent callers share one refresh, logged by the first.
   */
  async refresh(
    ref: AppRef,
    stale: string | undefined,
    signal: AbortSignal,
    log: Logger,
  ): Promise<string | undefined> {
    const result = await this.refreshes.run(appKey(ref), () => this.refreshLocked(ref, stale, signal, log));
    if (result.token !== undefined) return result.token;
    if (result.failure === 'transient' && !signal.aborted) {
      // One pending refresh job per app; it ends as soon as a token is valid again.
      await this.jobs
        .enqueue({
          kind: REFRESH_JOB,
          uniqueKey: `${REFRESH_JOB}:${JSON.stringify([ref.domain, ref.installedAppId])}`,
          payload: ref,
          runAt: Date.now() + (this.options.retryDelaysMs[0] ?? 1_000),
        })
        .catch((error: unknown) =>
          log.warn({ err: describe(error) }, 'could not store the token refresh job'),
        );
    }
    return result.fallback;
  }

  /** PostgreSQL: the refresh runs under a transaction-scoped advisory lock per installed app (see header). */
  private refreshLocked(
    ref: AppRef,
    stale: string | undefined,
    signal: AbortSignal,
    log: Logger,
  ): Promise<Refreshed> {
    if (this.config.database.type !== 'postgres') return this.refreshNow(ref, stale, signal, log);
    return inTransaction(this.dataSource, async (manager) => {
      const key = `smartthings-token:${JSON.stringify([ref.domain, ref.installedAppId])}`;
      await manager.query('SELECT pg_advisory_xact_lock(hashtext($1))', [key]);
      // Read and write on the locked transaction's connection: the pool is never asked for a second one.
      return this.refreshNow(ref, stale, signal, log, manager);
    });
  }

  private rememberRefused(refreshId: string): void {
    const now = performance.now();
    for (const [id, until] of this.refused) {
      if (until <= now || this.refused.size >= MAX_REFUSED) this.refused.delete(id);
      else break;
    }
    this.refused.set(refreshId, now + REFUSED_MEMORY_MS);
  }

  private isRefused(refreshId: string): boolean {
    const until = this.refused.get(refreshId);
    if (until === undefined) return false;
    if (until > performance.now()) return true;
    this.refused.delete(refreshId);
    return false;
  }

  private canRefresh(): boolean {
    return (
      this.config.smartthings.clientId !== undefined && this.config.smartthings.clientSecret !== undefined
    );
  }

  private async refreshNow(
    ref: AppRef,
    stale: string | undefined,
    signal: AbortSignal,
    log: Logger,
    manager?: EntityManager,
  ): Promise<Refreshed> {
    const tokens = await this.store.tokensOf(ref, log, manager);
    if (tokens === undefined) return { failure: 'permanent', reason: 'the installed app is gone' };
    const stillValid =
      tokens.authTokenExpiresAt === undefined ||
      tokens.authTokenExpiresAt.getTime() - EXPIRY_MARGIN_MS > Date.now();
    if (tokens.authToken !== undefined && tokens.authToken !== stale && stillValid)
      return { token: tokens.authToken };
    const fields = { domain: ref.domain, installedAppId: ref.installedAppId };
    if (tokens.refreshToken === undefined) {
      log.warn(fields, 'SmartThings token expired and no refresh token is stored; waiting for a lifecycle');
      return { failure: 'permanent', reason: 'no refresh token is stored' };
    }
    const refreshId = createHash('sha256').update(tokens.refreshToken).digest('hex');
    if (this.isRefused(refreshId)) {
      return {
        failure: 'permanent',
        reason: 'the stored refresh token was refused; waiting for a lifecycle',
      };
    }
    const { clientId, clientSecret, tokenUrl } = this.config.smartthings;
    if (clientId === undefined || clientSecret === undefined) {
      log.warn(fields, 'SmartThings token expired; set SMARTTHINGS_CLIENT_ID/SECRET to refresh it');
      return { failure: 'permanent', reason: 'SMARTTHINGS_CLIENT_ID/SECRET are not set' };
    }

    let response: Response;
    try {
      response = await tracedFetch('SmartThings token', tokenUrl, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          client_id: clientId,
          refresh_token: tokens.refreshToken,
        }).toString(),
        signal: AbortSignal.any([signal, AbortSignal.timeout(this.options.attemptTimeoutMs)]),
        redirect: 'error',
      });
    } catch (error) {
      log.warn({ ...fields, reason: describe(error) }, 'SmartThings token refresh failed');
      return { failure: 'transient', reason: `token refresh failed: ${describe(error)}` };
    }
    if (!response.ok) {
      await response.body?.cancel();
      log.warn({ ...fields, status: response.status }, 'SmartThings token refresh refused');
      const passing = response.status === 408 || response.status === 429 || response.status >= 500;
      // A refusal is final for this refresh token: later calls (of this job too) do not send it again; the next
      // INSTALL/UPDATE brings new tokens.
      if (!passing) this.rememberRefused(refreshId);
      return {
        failure: passing ? 'transient' : 'permanent',
        reason: `token refresh answered HTTP ${response.status}`,
      };
    }
    let body: TokenResponse;
    try {
      body = (await response.json()) as TokenResponse;
    } catch {
      body = {};
    }
    if (typeof body.access_token !== 'string' || body.access_token === '') {
      log.warn(fields, 'SmartThings token refresh answered without an access_token');
      return { failure: 'transient', reason: 'token refresh answered without an access_token' };
    }
    const lifetimeMs =
      typeof body.expires_in === 'number' && body.expires_in > 0
        ? body.expires_in * 1000
        : this.options.authTokenLifetimeMs;
    const now = new Date();
    await this.store.saveTokens(
      ref,
      {
        authToken: body.access_token,
        authTokenExpiresAt: new Date(now.getTime() + lifetimeMs),
        refreshToken: typeof body.refresh_token === 'string' ? body.refresh_token : undefined,
      },
      now,
      manager,
    );
    log.info(fields, 'SmartThings token refreshed');
    return { token: body.access_token };
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as Error & { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message}: ${cause.message}` : error.message;
  }
  return String(error);
}
