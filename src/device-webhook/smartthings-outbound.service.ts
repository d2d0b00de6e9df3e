// Every call the SmartApp makes to SmartThings: the automation's plans (subscriptions, schedules, device commands)
// and the CONFIRMATION GET. A plan is a durable job (src/jobs/), stored in the transaction of the lifecycle that
// caused it, and run at once by the instance that took the lifecycle; the reply waits for it at most replyBudgetMs.
// What is not done by then continues in the background, and survives a crash or restart: another instance (or this
// one after a restart) resumes it from the calls not yet done. Failures are retried with back-off when the answer
// says "not now" (5xx, 429, no answer; Retry-After honoured), a refused token is refreshed once, and a plan that
// keeps failing ends as a dead job with its last error (jobs:list, jobs:retry, `platform_jobs` on /metrics).
// Nothing here ever throws into a lifecycle reply.
import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import type { EntityManager } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/config.js';
import {
  JobFailed,
  JobsService,
  RetryLater,
  type JobContext,
  type RunOutcome,
} from '../jobs/jobs.service.js';
import { RESOLVED_WEBHOOK_OPTIONS, type DeviceWebhookOptions } from './device-webhook.options.js';
import type { AppRef } from './installed-app.store.js';
import type { ApiCall, ApiPlan } from './smartapp/automation-plan.js';
import { isTrustedConfirmationUrl } from './smartapp/lifecycle.js';
import { backoffDelay, classifyAttempt } from './smartapp/retry-policy.js';
import { SmartThingsTokens } from './smartthings-tokens.service.js';
import { tracedFetch } from '../tracing/tracing.js';

export type { RunOutcome };

/** The job kind of an installed app's SmartThings calls. */
export const PLAN_JOB = 'smartthings.calls';

/** What a plan job stores: the calls, and which of them are settled (`stage.call`), so a retry resumes there. */
export interface PlanPayload {
  domain: string;
  installedAppId: string;
  lifecycle: string;
  plan: ApiPlan;
  settled: string[];
}

interface Answer {
  status?: number;
  retryAfter?: string | null;
  detail?: string;
}

type CallResult = { kind: 'settled' } | { kind: 'retry'; reason: string; retryAfterMs?: number };

/** Longest a shutdown waits for a CONFIRMATION GET. */
const SHUTDOWN_WAIT_MS = 5_000;

/** An installed app's jobs run one at a time, in lifecycle order ("open" must not overtake the "closed" before it). */
export function planQueueKey(ref: AppRef): string {
  return `smartthings:${JSON.stringify([ref.domain, ref.installedAppId])}`;
}

@Injectable()
export class SmartThingsOutbound implements OnModuleInit, OnModuleDestroy {
  private readonly shutdown = new AbortController();
  private readonly background = new Set<Promise<unknown>>();
  private readonly apiUrl: string;

  constructor(
    private readonly tokens: SmartThingsTokens,
    private readonly jobs: JobsService,
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(RESOLVED_WEBHOOK_OPTIONS) private readonly options: DeviceWebhookOptions,
  ) {
    this.apiUrl = config.smartthings.apiUrl;
  }

  onModuleInit(): void {
    this.jobs.register<PlanPayload>({
      kind: PLAN_JOB,
      maxAttempts: 1 + this.options.retryDelaysMs.length,
      retryDelayMs: (retry) => backoffDelay(this.options.retryDelaysMs, retry),
      handle: (context) => this.executePlan(context),
    });
  }

  async onModuleDestroy(): Promise<void> {
    this.shutdown.abort();
    await Promise.race([
      Promise.all(this.background),
      new Promise((resolve) => setTimeout(resolve, SHUTDOWN_WAIT_MS).unref()),
    ]);
  }

  /** Stores `plan` as a job in the lifecycle's transaction; undefined when there is nothing to call. */
  enqueue(
    ref: AppRef,
    plan: ApiPlan,
    lifecycle: string,
    correlationId: string,
    manager: EntityManager,
  ): Promise<number | undefined> {
    if (plan.length === 0) return Promise.resolve(undefined);
    const payload: PlanPayload = { ...ref, lifecycle, plan, settled: [] };
    return this.jobs.enqueue(
      { kind: PLAN_JOB, queueKey: planQueueKey(ref), payload, correlationId },
      manager,
    );
  }

  /**
   * After the lifecycle committed: runs its plan job here and waits for it at most replyBudgetMs. Resolves
   * 'continuing' when it is still running or retrying (it finishes in the background), never rejects.
   */
  async run(jobId: number | undefined, ref: AppRef, lifecycle: string, log: Logger): Promise<RunOutcome> {
    if (jobId === undefined) return 'completed';
    const outcome = await this.jobs.runNow(jobId, this.options.replyBudgetMs).catch((error: unknown) => {
      log.warn({ err: describe(error) }, 'SmartThings calls could not start now; a worker picks them up');
      return 'continuing' as const;
    });
    if (outcome === 'continuing') {
      log.info(
        { domain: ref.domain, installedAppId: ref.installedAppId, lifecycle },
        'SmartThings calls continue after the reply',
      );
    }
    return outcome;
  }

  /** UNINSTALL: SmartThings has dropped the app's subscriptions and schedules; waiting calls are pointless. */
  cancel(ref: AppRef, manager: EntityManager): Promise<void> {
    return this.jobs.discard(planQueueKey(ref), manager);
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
        const response = await tracedFetch('SmartThings confirmation', confirmationUrl, {
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

  /** One attempt at the plan: stages in order, the unsettled calls of a stage together. */
  private async executePlan(context: JobContext<PlanPayload>): Promise<void> {
    const { payload, log, signal } = context;
    const ref: AppRef = { domain: payload.domain, installedAppId: payload.installedAppId };
    const settled = new Set(payload.settled);
    for (const [stageIndex, stage] of payload.plan.entries()) {
      const pending = stage
        .map((call, callIndex) => ({ call, id: `${stageIndex}.${callIndex}` }))
        .filter((entry) => !settled.has(entry.id));
      if (pending.length === 0) continue;
      const results = await Promise.all(
        pending.map((entry) => this.attemptCall(ref, entry.call, context.attempt, signal, log)),
      );
      if (signal.aborted) throw new Error('shutting down');
      let retry: { reason: string; retryAfterMs?: number } | undefined;
      results.forEach((result, index) => {
        if (result.kind === 'settled') settled.add(pending[index].id);
        else if (retry === undefined || (result.retryAfterMs ?? 0) > (retry.retryAfterMs ?? 0))
          retry = result;
      });
      if (retry === undefined) continue;
      const failing = pending.filter((entry) => !settled.has(entry.id));
      if (context.attempt >= 1 + this.options.retryDelaysMs.length) {
        for (const entry of failing) {
          log.error(
            { ...fieldsOf(ref, entry.call), reason: retry.reason, attempt: context.attempt },
            'SmartThings call failed; giving up after retries',
          );
        }
        throw new JobFailed(`SmartThings call failed after ${context.attempt} attempts: ${retry.reason}`);
      }
      await context.saveProgress({ ...payload, settled: [...settled] });
      const delayMs = backoffDelay(this.options.retryDelaysMs, context.attempt - 1, {
        retryAfterMs: retry.retryAfterMs,
        maxMs: 10 * 60_000,
      });
      for (const entry of failing) {
        log.warn(
          { ...fieldsOf(ref, entry.call), reason: retry.reason, attempt: context.attempt, delayMs },
          'SmartThings call failed; will retry',
        );
      }
      throw new RetryLater(retry.reason, delayMs);
    }
  }

  /** One try of one call (with one immediate retry after a refused token was refreshed). */
  private async attemptCall(
    ref: AppRef,
    call: ApiCall,
    attempt: number,
    signal: AbortSignal,
    log: Logger,
  ): Promise<CallResult> {
    const fields = fieldsOf(ref, call);
    let token = await this.tokens.current(ref, signal, log);
    for (let refreshed = false; ; refreshed = true) {
      if (token === undefined) {
        log.warn(fields, 'SmartThings call skipped: no usable token for the installed app');
        return { kind: 'settled' };
      }
      const answer = await this.send(call, token, signal);
      const outcome = classifyAttempt(answer.status, call.alsoOk, answer.retryAfter);
      switch (outcome.kind) {
        case 'ok':
          if (attempt > 1) log.info({ ...fields, attempt }, 'SmartThings call succeeded after retrying');
          return { kind: 'settled' };
        case 'unauthorized': {
          if (!refreshed) {
            const fresh = await this.tokens.refresh(ref, token, signal, log);
            if (fresh !== undefined && fresh !== token) {
              token = fresh;
              continue;
            }
          }
          log.error({ ...fields, status: 401, attempt }, 'SmartThings refused the installed app’s token');
          return { kind: 'settled' };
        }
        case 'fail':
          log.error(
            { ...fields, status: answer.status, detail: answer.detail, attempt },
            'SmartThings call failed',
          );
          return { kind: 'settled' };
        case 'retry':
          return {
            kind: 'retry',
            reason: answer.detail === undefined ? outcome.reason : `${outcome.reason}: ${answer.detail}`,
            retryAfterMs: outcome.retryAfterMs,
          };
      }
    }
  }

  private async send(call: ApiCall, token: string, signal: AbortSignal): Promise<Answer> {
    try {
      const response = await tracedFetch(`SmartThings ${call.method}`, this.apiUrl + call.path, {
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

function fieldsOf(ref: AppRef, call: ApiCall) {
  return {
    domain: ref.domain,
    installedAppId: ref.installedAppId,
    purpose: call.purpose,
    method: call.method,
    path: call.path,
  };
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as Error & { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message}: ${cause.message}` : error.message;
  }
  return String(error);
}
