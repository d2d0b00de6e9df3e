import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { forMaintenance, PeriodicFold } from './counter-deltas.js';

/** A fold that counts its runs; the data source is only a key here (no statement runs). */
function counting(dataSource: DataSource): { fold: PeriodicFold; runs: () => number } {
  let runs = 0;
  const fold = new PeriodicFold(
    dataSource,
    () => {
      runs += 1;
      return Promise.resolve(0);
    },
    (error) => {
      throw error;
    },
  );
  return { fold, runs: () => runs };
}

// Fake timers: the interval's firings are driven by the test, so the outcome does not depend on how fast the
// machine running it is.
describe('PeriodicFold', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('folds once per interval on its timer in a serving instance, and not after stop', async () => {
    const { fold, runs } = counting({} as DataSource);
    fold.start(5);
    expect(runs()).toBe(0);
    await jest.advanceTimersByTimeAsync(5);
    expect(runs()).toBe(1);
    await jest.advanceTimersByTimeAsync(10);
    expect(runs()).toBe(3);
    await fold.stop();
    await jest.advanceTimersByTimeAsync(50);
    expect(runs()).toBe(3);
  });

  it('does not start its timer on the maintenance CLI’s data source, and still folds when asked', async () => {
    const dataSource = {} as DataSource;
    forMaintenance(dataSource);
    const { fold, runs } = counting(dataSource);
    fold.start(5);
    await jest.advanceTimersByTimeAsync(60);
    expect(runs()).toBe(0);
    await fold.fold();
    expect(runs()).toBe(1);
    await fold.stop();
  });
});
