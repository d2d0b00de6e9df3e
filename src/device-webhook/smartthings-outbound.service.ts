// Every call the SmartApp makes to SmartThings: the automation's plans (subscriptions, schedules, device commands)
// and the CONFIRMATION GET. A lifecycle reply waits for them at most replyBudgetMs; after that they carry on in
// the background. Failures are retried with back-off when the answer says "not now" (5xx, 429, no answer), a
// refused token is refreshed once, and whatever still fails is logged with the installed app. Nothing here ever
// throws into a lifecycle reply.
import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { Logger } from 'pino';
import { APP_CONFIG, type AppConfig } from '../config/config.js';
import { RESOLVED_WEBHOOK_OPTIONS, type DeviceWebhookOptions } from './device-webhook.options.js';
import { appKey, type AppRef } from './installed-app.store.js';
import type { ApiCall, ApiPlan } from './smartapp/automation-plan.js';
import { KeyedSerialQueue } from './smartapp/keyed-work.js';
import { isTrustedConfirmationUrl } from './smartapp/lifecycle.js';
import { backoffDelay, classifyAttempt } from './smartapp/retry-policy.js';
import { SmartThingsTokens } from './smartthings-tokens.service.js';

export type RunOutcome = 'completed' | 'continuing';

interface Answer {
  status?: number;
  retryAfter?: string | null;
  detail?: string;
}

/** Longest a shutdown waits for background work to notice it was cancelled. */
const SHUTDOWN_WAIT_MS = 5_000;

@Injectable()
export class SmartThingsOutbound implements OnModuleDestroy {
  private readonly queue = new KeyedSerialQueue();
  private readonly shutdown = new AbortController();
  /** Bumped by UNINSTALL so queued work of a removed installation stops instead of failing call by call. */
  private readonly generations = new Map<string, number>();
  private readonly background = new Set<Promise<unknown>>();
  private readonly apiUrl: string;

  constructor(
    private readonly tokens: SmartThingsTokens,
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(RESOLVED_WEBHOOK_OPTIONS) private readonly options: DeviceWebhookOptions,
  ) {
    this.apiUrl = config.smartthings.apiUrl;
  }

  async onModuleDestroy(): Promise<void> {
    this.shutdown.abort();
    await Promise.race([
      Promise.all([this.queue.idle(), ...this.background]),
      sleep(SHUTDOWN_WAIT_MS, undefined, { ref: false }),
    ]);
  }

  /**
   * Queues `plan` behind the app's earlier work and waits for it at most replyBudgetMs. Resolves 'continuing'
   * when the plan is still running (it finishes in the background), never rejects. `log` is the lifecycle
   * request's logger: background calls keep logging with its correlation id.
   */
  async run(ref: AppRef, plan: ApiPlan, lifecycle: string, log: Logger): Promise<RunOutcome> {
    if (plan.length === 0) return 'completed';
    const key = appKey(ref);
    const generation = this.generations.get(key) ?? 0;
    const done = this.queue.run(key, () => this.execute(ref, plan, generation, log));
    this.track(done);
    let timer: NodeJS.Timeout | undefined;
    const budget = new Promise<RunOutcome>((resolve) => {
      timer = setTimeout(() => resolve('continuing'), this.options.replyBudgetMs);
    });
    const outcome = await Promise.race([done.then((): RunOutcome => 'completed'), budget]);
    clearTimeout(timer);
    if (outcome === 'continuing') {
      log.info(
        { domain: ref.domain, installedAppId: ref.installedAppId, lifecycle },
        'SmartThings calls continue after the reply',
      );
    }
    return outcome;
  }

  /** UNINSTALL: SmartThings has dropped the app's subscriptions and schedules; pending calls are pointless. */
  cancel(ref: AppRef): void {
    const key = appKey(ref);
    this.generations.set(key, (this.generations.get(key) ?? 0) + 1);
  }

  /**
   * CONFIRMATION: GET the confirmationUrl in the background when its host is trusted; otherwise (or when the GET
   * fails) log it, because an operator then has to open it for SmartThings to enable the app.
   */
  confirm(appId: string | null | undefined, confirmationUrl: string, log: Logger): void {
    const fields = { appId: appId ?? null, confirmationUrl };
    if (!isTrustedConfirmationUrl(confirmationUrl, this.apiUrl)) {
      log.warn(
        fields,
        'SmartThings CONFIRMATION: the confirmationUrl is not on smartthings.com, so it was not opened; ' +
          'open it yourself (GET) to confirm the app',
      );
      return;
    }
    const work = (async () => {
      try {
        const response = await fetch(confirmationUrl, {
          method: 'GET',
          headers: { accept: 'application/json' },
          signal: AbortSignal.any([
            this.shutdown.signal,
            AbortSignal.timeout(this.options.confirmationTimeoutMs),
          ]),
          redirect: 'error',
        });
        await response.body?.cancel();
        if (response.ok) {
          log.info({ appId: appId ?? null }, 'SmartThings CONFIRMATION: app registration confirmed');
          return;
        }
        log.warn(
          { ...fields, status: response.status },
          'SmartThings CONFIRMATION: the confirmationUrl answered an error; open it yourself (GET) to confirm the app',
        );
      } catch (error) {
        log.warn(
          { ...fields, reason: describe(error) },
          'SmartThings CONFIRMATION: the confirmationUrl could not be reached; open it yourself (GET) to confirm the app',
        );
      }
    })();
    this.track(work);
  }

  private track(work: Promise<unknown>): void {
    const settled = work.then(
      () => undefined,
      () => undefined,
    );
    this.background.add(settled);
    void settled.then(() => this.background.delete(settled));
  }

  private cancelled(ref: AppRef, generation: number): boolean {
    return this.shutdown.signal.aborted || (this.generations.get(appKey(ref)) ?? 0) !== generation;
  }

  private async execute(ref: AppRef, plan: ApiPlan, generation: number, log: Logger): Promise<void> {
    try {
      for (const stage of plan) {
        if (this.cancelled(ref, generation)) return;
        await Promise.all(stage.map((call) => this.call(ref, call, generation, log)));
      }
    } catch (error) {
      log.error(
        { domain: ref.domain, installedAppId: ref.installedAppId, err: error },
        'SmartThings calls stopped by an unexpected error',
      );
    }
  }

  /** One call with its retries; true when SmartThings accepted it. */
  private async call(ref: AppRef, call: ApiCall, generation: number, log: Logger): Promise<boolean> {
    const fields = {
      domain: ref.domain,
      installedAppId: ref.installedAppId,
      purpose: call.purpose,
      method: call.method,
      path: call.path,
    };
    const signal = this.shutdown.signal;
    let refreshed = false;
    for (let attempt = 1; ; attempt++) {
      if (this.cancelled(ref, generation)) return false;
      const token = await this.tokens.current(ref, signal, log);
      if (token === undefined) {
        log.warn(fields, 'SmartThings call skipped: no usable token for the installed app');
        return false;
      }
      const answer = await this.send(call, token, signal);
      const outcome = classifyAttempt(answer.status, call.alsoOk, answer.retryAfter);
      switch (outcome.kind) {
        case 'ok':
          if (attempt > 1) log.info({ ...fields, attempt }, 'SmartThings call succeeded after retrying');
          return true;
        case 'unauthorized': {
          if (!refreshed) {
            refreshed = true;
            const fresh = await this.tokens.refresh(ref, token, signal, log);
            if (fresh !== undefined && fresh !== token) continue;
          }
          log.error({ ...fields, status: 401, attempt }, 'SmartThings refused the installed app’s token');
          return false;
        }
        case 'fail':
          log.error(
            { ...fields, status: answer.status, detail: answer.detail, attempt },
            'SmartThings call failed',
          );
          return false;
        case 'retry': {
          const retry = attempt - 1;
          const reason = answer.detail === undefined ? outcome.reason : `${outcome.reason}: ${answer.detail}`;
          if (retry >= this.options.retryDelaysMs.length) {
            log.error({ ...fields, reason, attempt }, 'SmartThings call failed; giving up after retries');
            return false;
          }
          const delayMs = backoffDelay(this.options.retryDelaysMs, retry, {
            retryAfterMs: outcome.retryAfterMs,
            maxMs: 10 * 60_000,
          });
          log.warn({ ...fields, reason, attempt, delayMs }, 'SmartThings call failed; will retry');
          try {
            await sleep(delayMs, undefined, { signal });
          } catch {
            return false;
          }
        }
      }
    }
  }

  private async send(call: ApiCall, token: string, signal: AbortSignal): Promise<Answer> {
    try {
      const response = await fetch(this.apiUrl + call.path, {
        method: call.method,
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json',
          ...(call.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: call.body === undefined ? undefined : JSON.stringify(call.body),
        signal: AbortSignal.any([signal, AbortSignal.timeout(this.options.attemptTimeoutMs)]),
        redirect: 'error',
      });
      const ok = response.ok || call.alsoOk.includes(response.status);
      // SmartThings explains refusals in a small JSON body; keep a bounded excerpt for the log.
      const detail = ok ? undefined : (await response.text().catch(() => '')).slice(0, 300) || undefined;
      if (ok) await response.body?.cancel();
      return { status: response.status, retryAfter: response.headers.get('retry-after'), detail };
    } catch (error) {
      return { detail: describe(error) };
    }
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as Error & { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message}: ${cause.message}` : error.message;
  }
  return String(error);
}
