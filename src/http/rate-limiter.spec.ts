import { describe, expect, it } from '@jest/globals';
import type { AppConfig } from '../config/config.js';
import { RateLimiter } from './rate-limiter.js';

const limiter = (rateLimit: number) => new RateLimiter({ rateLimit } as AppConfig);

describe('RateLimiter', () => {
  it('allows the budget per minute and resets with the next window', () => {
    const rl = limiter(2);
    const t0 = 1_800_000_000_000;
    expect([rl.hit('a', t0), rl.hit('a', t0 + 1), rl.hit('a', t0 + 2)].map((d) => d.allowed)).toEqual([
      true,
      true,
      false,
    ]);
    expect(rl.hit('b', t0 + 3).allowed).toBe(true);
    expect(rl.hit('a', t0 + 60_000).allowed).toBe(true);
  });

  it('buckets by hashed bearer token, else by address', () => {
    expect(RateLimiter.bucketFor('Bearer abc', '1.2.3.4')).toMatch(/^key:/);
    expect(RateLimiter.bucketFor('Bearer abc', '1.2.3.4')).not.toContain('abc');
    expect(RateLimiter.bucketFor(undefined, '1.2.3.4')).toBe('ip:1.2.3.4');
  });
});
