// Where RATE_LIMIT's counts are kept (rate-limiter.ts chooses): this process's map, or a store shared by the
// fleet through rate-limiter-flexible, spent in small leases.
//
// Clocks: windows, leases and local refusals are measured on the monotonic clock (performance.now()), which NTP
// corrections and VM restores do not move. The shared stores keep a window's end as wall-clock time (that is how
// rate-limiter-flexible stores it, and how instances share it), so a window the store says ends more than two
// windows away was opened by a clock ahead of this one — this instance's before a step back, or another instance's
// that is wrong: it is started afresh rather than believed. No Retry-After exceeds the window (docs/decisions.md
// "Clock steps, a lost SQLite file, one log line per outage").
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';

export const WINDOW_MS = 60_000;
export const MAX_BUCKETS = 100_000;
/** A store's window ending further away than this cannot be one this instance's clock opened: it is restarted. */
const STEPPED_WINDOW_MS = 2 * WINDOW_MS;

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
