// RATE_LIMIT (DESIGN §2): requests per minute per verified API key, or per client address for requests without a
// valid key (no key, a made-up key, a public route). Counting happens after the key is verified (auth hook), so a
// made-up `Bearer x` spends its address's budget instead of getting a fresh one.
//
// Where the counts live (RATE_LIMIT_STORE):
// - `memory` (default on SQLite): this process, a one-minute window per caller from its first request, in a bounded map. At MAX_BUCKETS the
//   oldest bucket is evicted to make room, so a flood of new addresses never turns the limit off.
// - `database` (default on PostgreSQL): one budget for every instance on the database, kept by rate-limiter-flexible
//   (an atomic upsert into `rate_limits`). An instance takes a small lease of points per upsert and spends it
//   locally, so most requests cost no query and the fleet still never exceeds the limit (see SharedRateStore). A
//   bucket found exhausted is then refused in memory until its window ends. If the database cannot answer, each instance
//   falls back to counting in memory (rate-limiter-flexible's insurance limiter) rather than failing open.
//
// Clocks: windows, leases and local refusals are measured on the monotonic clock (performance.now()), which NTP
// corrections and VM restores do not move. The shared stores keep a window's end as wall-clock time (that is how
// rate-limiter-flexible stores it, and how instances share it), so a window the store says ends more than one
// window away was opened by a clock ahead of this one — this instance's before a step back, or another instance's
// that is wrong: it is started afresh rather than believed. No Retry-After exceeds the window (docs/decisions.md
// "Clock steps").
// - `redis://…`: the same through Redis.
import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import {
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRedis,
  RateLimiterRes,
  RateLimiterSQLite,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/config.js';
import { ROOT_LOGGER } from '../core/tokens.js';
import { PlatformErrorCode } from '../errors/api-error.js';
import type { WithRequestContext } from '../logging/request-context.js';

export const WINDOW_MS = 60_000;
export const MAX_BUCKETS = 100_000;
/** A store's window ending further away than this cannot be one this instance's clock opened: it is restarted. */
const STEPPED_WINDOW_MS = 2 * WINDOW_MS;
/** Longest a start waits for Redis before counting per instance (RATE_LIMIT_STORE=redis://…). */
const REDIS_CONNECT_WAIT_MS = 3_000;

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetSeconds: number;
}

export interface RateStore {
  /** `now` is monotonic milliseconds (performance.now()); only differences between two `now`s mean anything. */
  consume(bucket: string, now: number): RateDecision | Promise<RateDecision>;
  /** Resolves once the store can answer (or it is clear it cannot yet, and the insurance limiter counts). */
  ready?(): Promise<void>;
  close(): Promise<void>;
}

/**
 * One process's counts: a one-minute window per caller that starts with its first request (a window aligned to the
 * clock would give a fresh budget to a burst that straddles the minute), at most `maxBuckets` callers.
 */
export class MemoryRateStore implements RateStore {
  /** Insertion order is window-start order (a new window re-inserts its bucket), so expired ones lead. */
  private readonly buckets = new Map<string, { count: number; resetAt: number }>();

  constructor(
    private readonly limit: number,
    private readonly maxBuckets = MAX_BUCKETS,
  ) {}

  consume(bucket: string, now: number): RateDecision {
    this.sweep(now);
    let entry = this.buckets.get(bucket);
    if (entry === undefined || entry.resetAt <= now) {
      this.buckets.delete(bucket);
      if (this.buckets.size >= this.maxBuckets) {
        // The first key is the bucket that has waited longest: it makes room, so new callers are still counted.
        const oldest = this.buckets.keys().next().value;
        if (oldest !== undefined) this.buckets.delete(oldest);
      }
      entry = { count: 0, resetAt: now + WINDOW_MS };
      this.buckets.set(bucket, entry);
    }
    entry.count += 1;
    return {
      allowed: entry.count <= this.limit,
      limit: this.limit,
      remaining: Math.max(0, this.limit - entry.count),
      resetSeconds: Math.max(1, Math.ceil((entry.resetAt - now) / 1000)),
    };
  }

  /** Drops windows that have ended, a few at a time from the front. */
  private sweep(now: number): void {
    let dropped = 0;
    for (const [bucket, entry] of this.buckets) {
      if (entry.resetAt > now || dropped === 8) return;
      this.buckets.delete(bucket);
      dropped += 1;
    }
  }

  get size(): number {
    return this.buckets.size;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** Points an instance takes from the shared store at once for a bucket (1 = one store call per request). */
export function leaseSize(limit: number): number {
  return Math.max(1, Math.min(MAX_LEASE, Math.floor(limit / 200)));
}
const MAX_LEASE = 20;

interface Lease {
  /** Points taken from the store and not yet spent by this instance. */
  points: number;
  expiresAt: number;
  /** What the store had left when the lease was taken (for X-RateLimit-Remaining). */
  storeRemaining: number;
}

/**
 * A fleet-wide budget in a shared store (rate-limiter-flexible). Each store call takes a small lease of points
 * (at most 1/200 of the limit, at most 20) that this instance then spends without asking the store, so most
 * requests cost no round trip. Points are taken before they are spent, so the fleet never allows more than the
 * limit; what a lease leaves unspent when its window ends is budget the fleet does not use (at most 0.5% of the
 * limit per instance). A bucket found exhausted is refused locally until its window ends.
 */
export class SharedRateStore implements RateStore {
  /** Buckets known to be over the limit, until their window ends: refused without asking the store. */
  private readonly blocked = new Map<string, number>();
  private readonly leases = new Map<string, Lease>();

  constructor(
    private readonly limiter: RateLimiterAbstract,
    private readonly limit: number,
    private readonly hooks: { ready?: () => Promise<void>; close?: () => Promise<void> } = {},
    private readonly lease = leaseSize(limit),
  ) {}

  ready(): Promise<void> {
    return this.hooks.ready?.() ?? Promise.resolve();
  }

  consume(bucket: string, now: number): RateDecision | Promise<RateDecision> {
    const until = this.blocked.get(bucket);
    if (until !== undefined) {
      if (until > now) return this.refused(until - now);
      this.blocked.delete(bucket);
    }
    const held = this.leases.get(bucket);
    if (held !== undefined) {
      if (held.expiresAt > now && held.points > 0) {
        held.points -= 1;
        return {
          allowed: true,
          limit: this.limit,
          remaining: held.storeRemaining + held.points,
          resetSeconds: Math.max(1, Math.ceil((held.expiresAt - now) / 1000)),
        };
      }
      this.leases.delete(bucket);
    }
    const size = this.lease;
    return this.limiter.consume(bucket, size).then(
      (result) =>
        stepped(result) ? this.restart(bucket, size, now) : this.granted(bucket, result, size, now),
      (rejection: unknown) => {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        if (stepped(rejection)) return this.restart(bucket, size, now);
        // The store counted the whole lease; what was left before it is still this instance's to spend.
        const left = this.limit - (rejection.consumedPoints - size);
        if (left > 0) return this.granted(bucket, rejection, Math.min(size, left), now);
        const msLeft = windowLeft(rejection);
        if (this.blocked.size >= MAX_BUCKETS) this.blocked.clear();
        this.blocked.set(bucket, now + msLeft);
        return this.refused(msLeft);
      },
    );
  }

  /** A fresh window for `bucket` in the store, this request's lease taken from it. */
  private restart(bucket: string, size: number, now: number): Promise<RateDecision> {
    this.leases.delete(bucket);
    return this.limiter.set(bucket, size, WINDOW_MS / 1000).then((result) =>
      // Not every store fills in what is left after a set; the window holds this lease alone.
      this.granted(
        bucket,
        new RateLimiterRes(Math.max(0, this.limit - size), result.msBeforeNext, size, true),
        size,
        now,
      ),
    );
  }

  close(): Promise<void> {
    return this.hooks.close?.() ?? Promise.resolve();
  }

  /** One of `points` is this request's; the rest are kept for this bucket's next requests. */
  private granted(bucket: string, result: RateLimiterRes, points: number, now: number): RateDecision {
    const storeRemaining = Math.max(0, result.remainingPoints);
    const msLeft = windowLeft(result);
    if (points > 1) {
      const held = this.leases.get(bucket);
      if (held !== undefined) {
        held.points += points - 1;
        held.storeRemaining = storeRemaining;
      } else {
        if (this.leases.size >= MAX_BUCKETS) this.leases.clear();
        this.leases.set(bucket, {
          points: points - 1,
          expiresAt: now + msLeft,
          storeRemaining,
        });
      }
    }
    return {
      allowed: true,
      limit: this.limit,
      remaining: storeRemaining + points - 1,
      resetSeconds: Math.max(1, Math.ceil(msLeft / 1000)),
    };
  }

  private refused(msLeft: number): RateDecision {
    return {
      allowed: false,
      limit: this.limit,
      remaining: 0,
      resetSeconds: Math.max(1, Math.ceil(msLeft / 1000)),
    };
  }
}

/** Whether the store's window ends further away than a window this instance opened can (see the header). */
function stepped(result: RateLimiterRes): boolean {
  return result.msBeforeNext > STEPPED_WINDOW_MS;
}

/** What is left of the store's window, never more than a window (clocks a little apart across instances). */
function windowLeft(result: RateLimiterRes): number {
  return Math.min(Math.max(0, result.msBeforeNext), WINDOW_MS);
}

@Injectable()
export class RateLimiter implements OnModuleInit, OnModuleDestroy {
  private readonly store: RateStore | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    dataSource: DataSource,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.store = config.rateLimit > 0 ? createStore(config, dataSource, logger) : undefined;
  }

  get enabled(): boolean {
    return this.store !== undefined;
  }

  /** Counts one request of `bucket`; synchronous for the in-memory store. `now`: monotonic milliseconds. */
  hit(bucket: string, now = performance.now()): RateDecision | Promise<RateDecision> {
    if (this.store === undefined) {
      return { allowed: true, limit: 0, remaining: 0, resetSeconds: 0 };
    }
    return this.store.consume(bucket, now);
  }

  static keyBucket(keyId: string): string {
    return `key:${keyId}`;
  }

  static addressBucket(ip: string): string {
    return `ip:${ip}`;
  }

  /** Start-up waits (briefly) for a remote store, so the first requests are counted fleet-wide. */
  async onModuleInit(): Promise<void> {
    await this.store?.ready?.();
  }

  async onModuleDestroy(): Promise<void> {
    await this.store?.close();
  }
}

/** The 429 answer, sent from a hook (before routing and body parsing), in the envelope of DESIGN §2. */
export function sendTooManyRequests(
  request: FastifyRequest,
  reply: FastifyReply,
  decision: RateDecision,
): void {
  void reply
    .code(429)
    .header('Retry-After', String(decision.resetSeconds))
    .send({
      Succeeded: false,
      Message: `Rate limit of ${decision.limit} requests per minute exceeded; retry after ${decision.resetSeconds} s.`,
      Code: PlatformErrorCode.TooManyRequests,
      CorrelationId: (request as WithRequestContext).context?.correlationId ?? String(request.id),
    });
}

function createStore(config: AppConfig, dataSource: DataSource, logger: Logger): RateStore {
  const points = config.rateLimit;
  const common = { points, duration: WINDOW_MS / 1000, keyPrefix: 'rl' };
  // While the shared store cannot answer, each instance counts on its own instead of letting everything through.
  const insuranceLimiter = new RateLimiterMemory(common);
  const store = config.rateLimitStore;
  if (store.kind === 'memory') return new MemoryRateStore(points);
  if (store.kind === 'redis') {
    const client = new Redis(store.url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 2_000,
      lazyConnect: false,
    });
    client.on('error', (error: Error) => logger.warn({ err: error.message }, 'rate limit: Redis error'));
    const limiter = new RateLimiterRedis({ ...common, storeClient: client, insuranceLimiter });
    return new SharedRateStore(limiter, points, {
      ready: () =>
        new Promise<void>((resolve) => {
          if (client.status === 'ready') return resolve();
          const timer = setTimeout(() => {
            logger.warn('rate limit: Redis is not reachable yet; counting per instance until it is');
            resolve();
          }, REDIS_CONNECT_WAIT_MS);
          client.once('ready', () => {
            clearTimeout(timer);
            resolve();
          });
        }),
      close: () => {
        client.disconnect();
        return Promise.resolve();
      },
    });
  }
  if (config.database.type === 'postgres') {
    const pool = (dataSource.driver as unknown as { master: unknown }).master;
    const limiter = new RateLimiterPostgres({
      ...common,
      storeClient: pool,
      storeType: 'pool',
      tableName: 'rate_limits',
      tableCreated: true,
      insuranceLimiter,
    });
    return new SharedRateStore(limiter, points);
  }
  const sqlite = (dataSource.driver as unknown as { databaseConnection: unknown }).databaseConnection;
  const limiter = new RateLimiterSQLite({
    ...common,
    storeClient: sqlite,
    storeType: 'better-sqlite3',
    tableName: 'rate_limits',
    tableCreated: true,
    insuranceLimiter,
  });
  return new SharedRateStore(limiter, points);
}
