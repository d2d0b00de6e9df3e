// RATE_LIMIT: requests per minute per verified API key, or per client address for requests without a
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
// - `redis://…`: the same through Redis.
// The stores themselves, and how they bear wall-clock steps: rate-stores.ts.
import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import {
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRedis,
  RateLimiterSQLite,
} from 'rate-limiter-flexible';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/config.js';
import { ROOT_LOGGER } from '../core/tokens.js';
import { PlatformErrorCode } from '../errors/api-error.js';
import type { WithRequestContext } from '../logging/request-context.js';
import {
  MemoryRateStore,
  SharedRateStore,
  WINDOW_MS,
  type RateDecision,
  type RateStore,
} from './rate-stores.js';

export { type RateDecision } from './rate-stores.js';

/** Longest a start waits for Redis before counting per instance (RATE_LIMIT_STORE=redis://…). */
const REDIS_CONNECT_WAIT_MS = 3_000;

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

/** The 429 answer, sent from a hook (before routing and body parsing), in the outcome envelope. */
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
