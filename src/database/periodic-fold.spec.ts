import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from '@jest/globals';
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

describe('PeriodicFold', () => {
  it('folds on its timer in a serving instance', async () => {
    const { fold, runs } = counting({} as DataSource);
    fold.start(5);
    await sleep(60);
    await fold.stop();
    expect(runs()).toBeGreaterThan(1);
  });

  it('does not start its timer on the maintenance CLI’s data source, and still folds when asked', async () => {
    const dataSource = {} as DataSource;
    forMaintenance(dataSource);
    const { fold, runs } = counting(dataSource);
    fold.start(5);
    await sleep(60);
    expect(runs()).toBe(0);
    await fold.fold();
    expect(runs()).toBe(1);
    await fold.stop();
  });
});
