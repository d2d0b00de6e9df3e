import { describe, it, expect } from '@jest/globals';
import fc from 'fast-check';
import { backoffDelay, classifyAttempt, retryAfterMs } from './retry-policy.js';

describe('classifyAttempt', () => {
  it.each([
    [200, [], 'ok'],
    [204, [], 'ok'],
    [404, [404], 'ok'],
    [409, [409], 'ok'],
    [404, [], 'fail'],
    [400, [], 'fail'],
    [403, [], 'fail'],
    [422, [], 'fail'],
    [401, [], 'unauthorized'],
    [408, [], 'retry'],
    [429, [], 'retry'],
    [500, [], 'retry'],
    [503, [], 'retry'],
    [undefined, [], 'retry'],
  ] as const)('HTTP %s (also ok: %j) → %s', (status, alsoOk, kind) => {
    expect(classifyAttempt(status, alsoOk).kind).toBe(kind);
  });

  it('carries Retry-After of a 429 or 503', () => {
    expect(classifyAttempt(429, [], '7')).toEqual({ kind: 'retry', reason: 'HTTP 429', retryAfterMs: 7000 });
  });
});

describe('retryAfterMs (RFC 9110 §10.2.3)', () => {
  const now = Date.parse('2026-11-22T10:00:00Z');
  it.each([
    ['120', 120_000],
    ['0', 0],
    ['Sun, 22 Nov 2026 10:00:30 GMT', 30_000],
    ['Sun, 22 Nov 2026 09:00:00 GMT', 0],
    ['soon', undefined],
    ['', undefined],
    [null, undefined],
  ])('%s → %s', (value, expected) => {
    expect(retryAfterMs(value, now)).toBe(expected);
  });
});

describe('backoffDelay', () => {
  it('grows with the steps and stays on the last one', () => {
    const mid = () => 0.5;
    expect([0, 1, 2, 3, 9].map((retry) => backoffDelay([100, 1000, 5000], retry, { random: mid }))).toEqual([
      100, 1000, 5000, 5000, 5000,
    ]);
  });

  it('waits at least what Retry-After asks, but never beyond the cap', () => {
    expect(backoffDelay([100], 0, { retryAfterMs: 3000, random: () => 0.5 })).toBe(3000);
    expect(backoffDelay([100], 0, { retryAfterMs: 3_600_000, maxMs: 60_000 })).toBe(60_000);
  });

  it('keeps the jitter within ±20 % of the step (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 600_000 }), { minLength: 1, maxLength: 6 }),
        fc.nat(10),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (steps, retry, random) => {
          const step = steps[Math.min(retry, steps.length - 1)];
          const delay = backoffDelay(steps, retry, { random: () => random });
          return delay >= Math.floor(step * 0.8) && delay <= Math.ceil(step * 1.2);
        },
      ),
      { numRuns: 200 },
    );
  });
});
