import fc from 'fast-check';
import { afterEach, describe, expect, it } from '@jest/globals';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { RateLimiter } from './rate-limiter.js';
import { leaseSize, MemoryRateStore, SharedRateStore } from './rate-stores.js';

const t0 = 1_800_000_000_000;

describe('MemoryRateStore', () => {
  it('allows the budget per minute and resets with the next window', () => {
    const store = new MemoryRateStore(2);
    expect(
      [store.consume('a', t0), store.consume('a', t0 + 1), store.consume('a', t0 + 2)].map((d) => d.allowed),
    ).toEqual([true, true, false]);
    expect(store.consume('b', t0 + 3).allowed).toBe(true);
    expect(store.consume('a', t0 + 60_000).allowed).toBe(true);
  });

  it('evicts the oldest bucket when full instead of letting new callers through uncounted', () => {
    const store = new MemoryRateStore(1, 3);
    for (const bucket of ['a', 'b', 'c']) expect(store.consume(bucket, t0).allowed).toBe(true);
    // A fourth caller is counted (and limited) like any other; the bucket that waited longest makes room.
    expect(store.consume('d', t0).allowed).toBe(true);
    expect(store.consume('d', t0).allowed).toBe(false);
    expect(store.size).toBe(3);
    expect(store.consume('c', t0).allowed).toBe(false);
  });

  it('names the seconds until the window resets', () => {
    const store = new MemoryRateStore(1);
    store.consume('a', t0 + 15_000);
    expect(store.consume('a', t0 + 35_500).resetSeconds).toBe(40);
  });

  it("starts a caller's window with its first request, so a burst across the minute is still one budget", () => {
    const store = new MemoryRateStore(3);
    const minuteEnd = t0 - (t0 % 60_000) + 60_000;
    const decisions = [minuteEnd - 2, minuteEnd - 1, minuteEnd, minuteEnd + 1].map((at) =>
      store.consume('a', at),
    );
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false]);
    expect(store.consume('a', minuteEnd - 2 + 60_000).allowed).toBe(true);
  });

  it('forgets callers whose window has ended', () => {
    const store = new MemoryRateStore(1);
    for (const bucket of ['a', 'b', 'c']) store.consume(bucket, t0);
    store.consume('d', t0 + 60_000);
    expect(store.size).toBe(1);
  });
});

describe('SharedRateStore', () => {
  it('keeps one budget in the store and refuses an exhausted bucket locally until its window ends', async () => {
    const backing = new RateLimiterMemory({ points: 2, duration: 60 });
    let calls = 0;
    const counting = Object.assign(Object.create(backing) as RateLimiterMemory, {
      consume: (key: string, points?: number) => {
        calls += 1;
        return backing.consume(key, points);
      },
    });
    const store = new SharedRateStore(counting, 2);
    const decisions = [];
    for (let i = 0; i < 5; i++) decisions.push(await store.consume('k', Date.now()));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, false, false, false]);
    expect(decisions[2].resetSeconds).toBeGreaterThan(0);
    // The third request found the bucket exhausted; the fourth and fifth were refused without a store call.
    expect(calls).toBe(3);
  });
});

describe('SharedRateStore leases', () => {
  it('takes at most 20 points, at most 1/200 of the limit, at least 1', () => {
    expect(leaseSize(10)).toBe(1);
    expect(leaseSize(600)).toBe(3);
    expect(leaseSize(6000)).toBe(20);
    expect(leaseSize(10_000_000)).toBe(20);
  });

  it('answers most requests from a lease, and instances sharing a store never allow more than the limit', async () => {
    const limit = 1000;
    const backing = new RateLimiterMemory({ points: limit, duration: 60 });
    let calls = 0;
    const counting = Object.assign(Object.create(backing) as RateLimiterMemory, {
      consume: (key: string, points?: number) => {
        calls += 1;
        return backing.consume(key, points);
      },
    });
    const fleet = [0, 1, 2].map(() => new SharedRateStore(counting, limit, {}, 7));
    let allowed = 0;
    for (let i = 0; i < 1500; i++) {
      const decision = await fleet[i % 3].consume('k', Date.now());
      if (decision.allowed) allowed += 1;
      expect(decision.remaining).toBeGreaterThanOrEqual(0);
    }
    expect(allowed).toBeLessThanOrEqual(limit);
    // Unspent at most one lease minus one per instance.
    expect(allowed).toBeGreaterThanOrEqual(limit - 3 * 6);
    expect(calls).toBeLessThan(1500 / 5);
  });

  it('spends what was left before a lease the store refused', async () => {
    const backing = new RateLimiterMemory({ points: 10, duration: 60 });
    const store = new SharedRateStore(backing, 10, {}, 4);
    const decisions = [];
    for (let i = 0; i < 12; i++) decisions.push(await store.consume('k', Date.now()));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
    expect(decisions.slice(10).every((d) => !d.allowed)).toBe(true);
  });

  it('property: any interleaving of instances never exceeds the limit', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 300 }),
        fc.integer({ min: 1, max: 20 }),
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 600 }),
        async (limit, lease, order) => {
          const backing = new RateLimiterMemory({ points: limit, duration: 60 });
          const fleet = [0, 1, 2, 3].map(() => new SharedRateStore(backing, limit, {}, lease));
          let allowed = 0;
          for (const instance of order)
            if ((await fleet[instance].consume('k', Date.now())).allowed) allowed += 1;
          expect(allowed).toBeLessThanOrEqual(limit);
          expect(allowed).toBeGreaterThanOrEqual(Math.min(order.length, limit - 4 * (lease - 1)));
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('SharedRateStore under wall-clock steps', () => {
  const HOUR = 3_600_000;
  const DAY = 24 * HOUR;
  const realNow = Date.now;
  afterEach(() => {
    Date.now = realNow;
  });

  /** Exhausts `k` with the wall clock at `wall`, then moves it to `after` and lets a monotonic minute pass. */
  async function afterStep(wall: number, after: number) {
    // The store keeps a window's end as wall-clock time, as rate-limiter-flexible's database stores do.
    const backing = new RateLimiterMemory({ points: 2, duration: 60 });
    const store = new SharedRateStore(backing, 2);
    Date.now = () => wall;
    const before = [];
    for (let i = 0; i < 3; i++) before.push(await store.consume('k', 1_000 + i));
    Date.now = () => after;
    const refusedAfterStep = await store.consume('k', 2_000);
    const aMinuteLater = await store.consume('k', 62_000);
    return { before, refusedAfterStep, aMinuteLater };
  }

  it.each([
    ['stepped back 2 h', realNow(), realNow() - 2 * HOUR],
    ['forward 2 days and back', realNow() + 2 * DAY, realNow()],
  ])(
    'a clock %s: Retry-After stays within the window and the caller is admitted again',
    async (_, wall, after) => {
      const { before, refusedAfterStep, aMinuteLater } = await afterStep(wall, after);
      expect(before.map((d) => d.allowed)).toEqual([true, true, false]);
      expect(before[2].resetSeconds).toBeLessThanOrEqual(60);
      expect(refusedAfterStep.allowed).toBe(false);
      expect(refusedAfterStep.resetSeconds).toBeLessThanOrEqual(60);
      expect(aMinuteLater.allowed).toBe(true);
      expect(aMinuteLater.resetSeconds).toBeLessThanOrEqual(60);
    },
  );

  it('a window the store says ends hours away is restarted with this request counted in it', async () => {
    const backing = new RateLimiterMemory({ points: 3, duration: 60 });
    const store = new SharedRateStore(backing, 3);
    Date.now = () => realNow() + 2 * DAY;
    await store.consume('k', 0);
    await store.consume('k', 1);
    Date.now = realNow;
    const decision = await store.consume('k', 2);
    expect(decision).toMatchObject({ allowed: true, remaining: 2 });
    expect(decision.resetSeconds).toBeLessThanOrEqual(60);
  });
});

describe('MemoryRateStore on the monotonic clock', () => {
  it('does not read the wall clock: a step of the wall clock changes nothing', () => {
    const store = new MemoryRateStore(1);
    const realNow = Date.now;
    try {
      expect(store.consume('a', 5_000).allowed).toBe(true);
      Date.now = () => realNow() - 7_200_000;
      const refused = store.consume('a', 6_000);
      expect(refused.allowed).toBe(false);
      expect(refused.resetSeconds).toBeLessThanOrEqual(60);
      expect(store.consume('a', 65_000).allowed).toBe(true);
    } finally {
      Date.now = realNow;
    }
  });
});

describe('RateLimiter buckets', () => {
  it('counts a verified key by its id and everything else by address', () => {
    expect(RateLimiter.keyBucket('0b7c')).toBe('key:0b7c');
    expect(RateLimiter.addressBucket('1.2.3.4')).toBe('ip:1.2.3.4');
  });
});
