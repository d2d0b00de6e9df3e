// Durable background work (any instance runs it; a crash loses none): every piece of work the service accepts and finishes
// later is a row in `jobs`, written in the transaction of the state change that caused it where there is one.
// Each instance runs a small worker: it claims due jobs (job-store.ts: one atomic UPDATE, SKIP LOCKED on
// PostgreSQL), keeps them leased with a heartbeat while they run, and deletes them when done. A job whose instance
// dies is taken over by another once its lease (JOB_LEASE_MS) runs out; on SIGTERM running jobs are handed back at
// once. Areas register the kinds they handle; an instance claims only kinds it has handlers for (MODULES).
import { AsyncResource } from 'node:async_hooks';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { Logger } from 'pino';
import { Gauge } from 'prom-client';
import { DataSource, type EntityManager } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/config.js';
import { ROOT_LOGGER } from '../core/tokens.js';
import { databaseHealthOf } from '../database/database-health.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { JOB_STATES } from './entities/job.entity.js';
import { JobStore, type JobRecord, type NewJob } from './job-store.js';

/** Thrown by a handler: the attempt failed but may succeed later (after `delayMs`, else the kind's back-off). */
export class RetryLater extends Error {
  constructor(
    reason: string,
    readonly delayMs?: number,
  ) {
    super(reason);
    this.name = 'RetryLater';
  }
}

/** Thrown by a handler: the job cannot succeed; it ends as dead with this message. */
export class JobFailed extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'JobFailed';
  }
}

export interface JobContext<P> {
  id: number;
  payload: P;
  /** 1 on the first attempt. */
  attempt: number;
  /** Aborted when the instance shuts down: stop, the job is handed back. */
  signal: AbortSignal;
  /** Carries the correlation id of the request that caused the job. */
  log: Logger;
  /** Stores how far the job got, so the next attempt (anywhere) resumes there. */
  saveProgress(payload: P): Promise<void>;
}

/** What a handler answers: done (the job goes), or for periodic work when to run again. */
export type JobOutcome = void | { rescheduleInMs: number };

export interface JobKind<P> {
  kind: string;
  /** Attempts before the job is dead. */
  maxAttempts: number;
  /** The pause before retry `retry` (0-based) when the handler's RetryLater names none. */
  retryDelayMs(retry: number): number;
  handle(context: JobContext<P>): Promise<JobOutcome>;
}

export type RunOutcome = 'completed' | 'continuing';

/** Jobs one instance runs at once. */
const CONCURRENCY = 8;
/** Longest a shutdown waits for running handlers to notice the abort before handing their jobs back. */
const STOP_WAIT_MS = 3_000;

@Injectable()
export class JobsService implements OnModuleDestroy {
  /** This process in `locked_by`: host, pid and a random part (pids are reused across restarts). */
  readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly store: JobStore;
  private readonly kinds = new Map<string, JobKind<never>>();
  private readonly periodic = new Map<string, number>();
  private readonly running = new Map<number, { abort: AbortController; done: Promise<void> }>();
  private readonly waiters = new Map<number, Set<() => void>>();
  private started = false;
  private stopping = false;
  private pollTimer: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  private pollAgain = false;
  /**
   * Runs a function in the context the service was created in (start-up: no request). The poll timer is often
   * set while a request is being handled (it enqueued a job); created there, every later poll would inherit that
   * request's context — its trace (a span a second, for ever, in a finished request's trace) and its log fields.
   */
  private readonly outsideRequests = AsyncResource.bind((work: () => void): void => work());

  constructor(
    private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
    metrics: MetricsService,
  ) {
    this.store = new JobStore(dataSource);
    const store = this.store;
    const kinds = this.kinds;
    metrics.registry.registerMetric(
      new Gauge({
        name: 'platform_jobs',
        help: 'Background jobs in the shared database by kind and state (queued, running, failed = waiting to retry, dead)',
        labelNames: ['kind', 'state'],
        registers: [],
        async collect() {
          this.reset();
          for (const kind of kinds.keys()) for (const state of JOB_STATES) this.set({ kind, state }, 0);
          try {
            for (const row of await store.counts()) this.set({ kind: row.kind, state: row.state }, row.count);
          } catch {
            // The database is down: the scrape still answers, readiness reports the outage.
          }
        },
      }),
    );
  }

  /** An area's job kind; call it from the area's constructor or onModuleInit. */
  register<P>(kind: JobKind<P>): void {
    this.kinds.set(kind.kind, kind);
  }

  /** A job of `kind` that runs every `everyMs` on one instance of the fleet (a unique row, rescheduled by its handler). */
  schedulePeriodic(kind: string, everyMs: number): void {
    this.periodic.set(kind, everyMs);
  }

  /** Stores a job; pass the transaction's `manager` to make it part of the state change that caused it. */
  async enqueue(job: NewJob, manager?: EntityManager): Promise<number | undefined> {
    const id = await this.store.enqueue(job, Date.now(), manager);
    // Outside a transaction the row is visible now; inside one, the caller runs it after commit (runNow).
    if (manager === undefined) this.wake();
    return id;
  }

  /**
   * Runs job `id` in this instance if it can be claimed now, and waits for it at most `budgetMs`. 'continuing':
   * it is still running, waiting for an older job of its queue, or retrying later (here or on another instance).
   */
  async runNow(id: number, budgetMs: number): Promise<RunOutcome> {
    if (!this.started || this.stopping) return 'continuing';
    const finished = this.waitFor(id, budgetMs);
    const [job] = await this.store.claim(
      this.owner,
      [...this.kinds.keys()],
      Date.now(),
      this.leaseUntil(),
      1,
      id,
    );
    if (job === undefined) this.wake();
    else this.execute(job);
    return (await finished) ? 'completed' : 'continuing';
  }

  /** Starts this instance's worker (the service; never the CLI). */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    const now = Date.now();
    for (const [kind, everyMs] of this.periodic) {
      if (!this.kinds.has(kind)) continue;
      // The first instance to start creates the row; the first run comes after a short settling delay.
      await this.store.enqueue(
        { kind, uniqueKey: `periodic:${kind}`, payload: { everyMs }, runAt: now + 5_000 },
        now,
      );
    }
    this.heartbeat = setInterval(
      () => {
        if (this.running.size === 0) return;
        this.store.renewLeases(this.owner, this.leaseUntil()).catch((error: unknown) => {
          if (!this.isDatabaseFailure(error))
            this.logger.warn({ err: errorText(error) }, 'jobs: could not renew leases');
        });
      },
      Math.max(250, Math.floor(this.config.jobs.leaseMs / 3)),
    );
    this.heartbeat.unref();
    this.schedulePoll(0);
  }

  /** Stops claiming, aborts running handlers and hands their jobs back to the fleet. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    clearTimeout(this.pollTimer);
    clearInterval(this.heartbeat);
    await this.polling?.catch(() => undefined);
    for (const entry of this.running.values()) entry.abort.abort();
    const settled = Promise.all([...this.running.values()].map((entry) => entry.done));
    await Promise.race([settled, new Promise((resolve) => setTimeout(resolve, STOP_WAIT_MS).unref())]);
    const left = [...this.running.keys()];
    if (left.length > 0) await this.store.release(this.owner, left, Date.now()).catch(() => undefined);
  }

  async onModuleDestroy(): Promise<void> {
    await this.stop();
  }

  list(filter: Parameters<JobStore['list']>[0]): Promise<JobRecord[]> {
    return this.store.list(filter);
  }

  find(id: number): Promise<JobRecord | undefined> {
    return this.store.find(id);
  }

  retry(id: number): Promise<boolean> {
    return this.store.retry(id, Date.now()).then((retried) => {
      if (retried) this.wake();
      return retried;
    });
  }

  /** Drops the jobs of `queueKey` still waiting to run (in the caller's transaction when given). */
  discard(queueKey: string, manager?: EntityManager): Promise<void> {
    return this.store.discard(queueKey, manager);
  }

  /** Looks for due jobs soon (a job was enqueued or retried here). */
  wake(): void {
    if (this.started && !this.stopping) this.schedulePoll(0);
  }

  private leaseUntil(): number {
    return Date.now() + this.config.jobs.leaseMs;
  }

  private schedulePoll(delayMs: number): void {
    if (this.stopping) return;
    if (this.polling !== undefined) {
      this.pollAgain = true;
      return;
    }
    clearTimeout(this.pollTimer);
    this.outsideRequests(() => {
      this.pollTimer = setTimeout(() => this.poll(), delayMs);
      this.pollTimer.unref();
    });
  }

  /** An outage or a full storage is logged once by DatabaseHealth, not by every poll while it lasts. */
  private isDatabaseFailure(error: unknown): boolean {
    return databaseHealthOf(this.dataSource)?.observe(error) !== undefined;
  }

  private poll(): void {
    this.polling = this.claimDue()
      .catch((error: unknown) => {
        if (!this.isDatabaseFailure(error))
          this.logger.warn({ err: errorText(error) }, 'jobs: could not claim due jobs');
      })
      .finally(() => {
        this.polling = undefined;
        const again = this.pollAgain;
        this.pollAgain = false;
        this.schedulePoll(again ? 0 : this.config.jobs.pollMs);
      });
  }

  private async claimDue(): Promise<void> {
    const free = CONCURRENCY - this.running.size;
    if (free <= 0 || this.stopping) return;
    const jobs = await this.store.claim(
      this.owner,
      [...this.kinds.keys()],
      Date.now(),
      this.leaseUntil(),
      free,
    );
    for (const job of jobs) this.execute(job);
  }

  private execute(job: JobRecord): void {
    const abort = new AbortController();
    const done = this.attempt(job, abort.signal)
      .catch((error: unknown) => {
        this.logger.error({ job: job.id, kind: job.kind, err: errorText(error) }, 'jobs: bookkeeping failed');
      })
      .finally(() => {
        this.running.delete(job.id);
        if (!this.stopping) this.schedulePoll(0);
      });
    this.running.set(job.id, { abort, done });
  }

  private async attempt(job: JobRecord, signal: AbortSignal): Promise<void> {
    const kind = this.kinds.get(job.kind);
    const log = this.logger.child({
      ...(job.correlationId === null ? {} : { correlationId: job.correlationId }),
      job: job.id,
      kind: job.kind,
    });
    if (kind === undefined) return;
    if (job.attempts > kind.maxAttempts) {
      // Claimed again after its instances kept dying mid-attempt.
      await this.store.fail(job.id, this.owner, 'dead', job.runAt, job.lastError ?? 'abandoned', Date.now());
      log.error({ attempts: job.attempts }, 'job is dead: too many attempts');
      return this.notify(job.id);
    }
    let outcome: JobOutcome;
    try {
      outcome = await kind.handle({
        id: job.id,
        payload: job.payload as never,
        attempt: job.attempts,
        signal,
        log,
        saveProgress: (payload) => this.store.saveProgress(job.id, this.owner, payload, Date.now()),
      });
    } catch (error) {
      if (signal.aborted) return; // shutting down: stop() hands the job back
      await this.failed(job, kind, error, log);
      return;
    }
    if (signal.aborted && outcome === undefined && this.stopping) {
      // A handler that returned because of the abort has not finished its work.
      return;
    }
    if (outcome !== undefined) {
      await this.store.reschedule(job.id, this.owner, Date.now() + outcome.rescheduleInMs, Date.now());
    } else {
      await this.store.complete(job.id, this.owner);
      if (job.attempts > 1) log.info({ attempt: job.attempts }, 'job succeeded after retrying');
    }
    this.notify(job.id);
  }

  private async failed(job: JobRecord, kind: JobKind<never>, error: unknown, log: Logger): Promise<void> {
    const reason = errorText(error);
    const now = Date.now();
    if (error instanceof JobFailed || job.attempts >= kind.maxAttempts) {
      await this.store.fail(job.id, this.owner, 'dead', now, reason, now);
      log.error({ attempt: job.attempts, reason }, 'job is dead; jobs:retry runs it again');
      this.notify(job.id);
      return;
    }
    const delayMs =
      error instanceof RetryLater && error.delayMs !== undefined
        ? error.delayMs
        : kind.retryDelayMs(job.attempts - 1);
    await this.store.fail(job.id, this.owner, 'failed', now + delayMs, reason, now);
    if (!(error instanceof RetryLater))
      log.error({ attempt: job.attempts, err: reason }, 'job failed unexpectedly; will retry');
    else log.warn({ attempt: job.attempts, reason, delayMs }, 'job will retry');
    // This instance looks again when the retry is due (others find it by polling).
    const timer = setTimeout(() => this.wake(), delayMs + 5);
    timer.unref();
  }

  private waitFor(id: number, budgetMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      const waiters = this.waiters.get(id) ?? new Set();
      this.waiters.set(id, waiters);
      const timer = setTimeout(() => {
        waiters.delete(onDone);
        if (waiters.size === 0) this.waiters.delete(id);
        resolve(false);
      }, budgetMs);
      const onDone = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      waiters.add(onDone);
    });
  }

  private notify(id: number): void {
    const waiters = this.waiters.get(id);
    if (waiters === undefined) return;
    this.waiters.delete(id);
    for (const wake of waiters) wake();
  }
}

function errorText(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as Error & { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message}: ${cause.message}` : error.message;
  }
  return String(error);
}
