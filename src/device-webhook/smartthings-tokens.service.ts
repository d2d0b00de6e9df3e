// The bearer token for an installed app's SmartThings calls. Lifecycles bring fresh tokens (INSTALL/UPDATE an
// auth + refresh token, EVENT an auth token); calls made after that (background retries) may find the auth token
// expired and refresh it at SMARTTHINGS_TOKEN_URL with the app's OAuth client (SmartThings docs, "How to use
// refresh tokens": Basic client_id:client_secret, grant_type=refresh_token). A refresh token works once, so
// refreshes of one installed app run one at a time and concurrent callers share the result.
import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { APP_CONFIG, type AppConfig } from '../config/config.js';
import { RESOLVED_WEBHOOK_OPTIONS, type DeviceWebhookOptions } from './device-webhook.options.js';
import { appKey, InstalledAppStore, type AppRef } from './installed-app.store.js';
import { SingleFlight } from './smartapp/keyed-work.js';

/** Refresh a little before SmartThings would refuse the token, so a call does not race the expiry. */
const EXPIRY_MARGIN_MS = 15_000;

interface TokenResponse {
  access_token?: unknown;
  refresh_token?: unknown;
  expires_in?: unknown;
}

@Injectable()
export class SmartThingsTokens {
  private readonly refreshes = new SingleFlight<string | undefined>();

  constructor(
    private readonly store: InstalledAppStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(RESOLVED_WEBHOOK_OPTIONS) private readonly options: DeviceWebhookOptions,
  ) {}

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
  refresh(
    ref: AppRef,
    stale: string | undefined,
    signal: AbortSignal,
    log: Logger,
  ): Promise<string | undefined> {
    return this.refreshes.run(appKey(ref), () => this.refreshNow(ref, stale, signal, log));
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
  ): Promise<string | undefined> {
    const tokens = await this.store.tokensOf(ref, log);
    if (tokens === undefined) return undefined;
    const stillValid =
      tokens.authTokenExpiresAt === undefined ||
      tokens.authTokenExpiresAt.getTime() - EXPIRY_MARGIN_MS > Date.now();
    if (tokens.authToken !== undefined && tokens.authToken !== stale && stillValid) return tokens.authToken;
    const fields = { domain: ref.domain, installedAppId: ref.installedAppId };
    if (tokens.refreshToken === undefined) {
      log.warn(fields, 'SmartThings token expired and no refresh token is stored; waiting for a lifecycle');
      return undefined;
    }
    const { clientId, clientSecret, tokenUrl } = this.config.smartthings;
    if (clientId === undefined || clientSecret === undefined) {
      log.warn(fields, 'SmartThings token expired; set SMARTTHINGS_CLIENT_ID/SECRET to refresh it');
      return undefined;
    }

    let response: Response;
    try {
      response = await fetch(tokenUrl, {
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
      return undefined;
    }
    if (!response.ok) {
      await response.body?.cancel();
      log.warn({ ...fields, status: response.status }, 'SmartThings token refresh refused');
      return undefined;
    }
    let body: TokenResponse;
    try {
      body = (await response.json()) as TokenResponse;
    } catch {
      body = {};
    }
    if (typeof body.access_token !== 'string' || body.access_token === '') {
      log.warn(fields, 'SmartThings token refresh answered without an access_token');
      return undefined;
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
    );
    log.info(fields, 'SmartThings token refreshed');
    return body.access_token;
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as Error & { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message}: ${cause.message}` : error.message;
  }
  return String(error);
}
