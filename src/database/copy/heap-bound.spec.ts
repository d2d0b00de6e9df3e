import { describe, expect, it } from '@jest/globals';
import { HeapBound } from './heap-bound.js';

describe('HeapBound', () => {
  it('collects once each time another interval of rows has passed', () => {
    let collections = 0;
    const bound = new HeapBound(1_000, () => collections++);
    for (let i = 0; i < 9; i++) bound.advance(100);
    expect(collections).toBe(0);
    bound.advance(100);
    expect(collections).toBe(1);
    for (let i = 0; i < 25; i++) bound.advance(100);
    expect(collections).toBe(3);
  });

  it("runs V8's full collection by default, without --expose-gc on the command line", () => {
    const bound = new HeapBound(1);
    expect(() => bound.advance(1)).not.toThrow();
    expect(typeof (globalThis as { gc?: unknown }).gc).toBe('undefined');
  });
});
