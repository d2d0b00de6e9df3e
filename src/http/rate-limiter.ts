// Fixed-window rate limit (DESIGN §2: RATE_LIMIT requests per minute per API key, or per client address when
// unauthenticated; 0 turns it off). In-process: with several instances each enforces its own budget.
import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { APP_CONFIG, type AppConfig } from '../config/config.js';

const WINDOW_MS = 60_000;
const MAX_BUCKETS = 100_000;

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetSeconds: number;
}

@Injectable()
export class RateLimiter {
  private windowStart = 0;
  private counts = new Map<string, number>();

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  get enabled(): boolean {
    return this.config.rateLimit > 0;
  }

  /** The bucket a request is counted in: its bearer token (hashed, never kept in clear) or its address. */
  static bucketFor(authorization: string | undefined, ip: string): string {
    const token = authorization === undefined ? undefined : /^Bearer\s+(\S+)/i.exec(authorization)?.[1];
    return token === undefined
      ? `ip:${ip}`
      : `key:${createHash('sha256').update(token).digest('base64url').slice(0, 22)}`;
  }

  hit(bucket: string, now = Date.now()): RateDecision {
    this.roll(now);
    const count = (this.counts.get(bucket) ?? 0) + 1;
    if (this.counts.size < MAX_BUCKETS || this.counts.has(bucket)) this.counts.set(bucket, count);
    const limit = this.config.rateLimit;
    return {
      allowed: count <= limit,
      limit,
      remaining: Math.max(0, limit - count),
      resetSeconds: Math.ceil((this.windowStart + WINDOW_MS - now) / 1000),
    };
  }

  /** A failed authentication also spends the address's budget, so rotating fake keys does not escape the limit. */
  penalize(ip: string, now = Date.now()): void {
    if (this.enabled) this.hit(`ip:${ip}`, now);
  }

  private roll(now: number): void {
    if (now - this.windowStart >= WINDOW_MS) {
      this.windowStart = now - (now % WINDOW_MS);
      this.counts = new Map();
    }
  }
}
