import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { latestChangeSet, resolveChangeSet } from './resolve-change-set.js';

describe('resolveChangeSet (Increment forms)', () => {
  const cases: Array<{ name: string; increment: number; latest: number | null; expected: number | null }> = [
    { name: 'absolute: the first change set', increment: 1, latest: 7, expected: 1 },
    { name: 'absolute: a middle one', increment: 4, latest: 7, expected: 4 },
    { name: 'absolute: the latest itself', increment: 7, latest: 7, expected: 7 },
    { name: 'absolute: beyond the latest is not found', increment: 8, latest: 7, expected: null },
    { name: 'relative: 0 is the latest', increment: 0, latest: 7, expected: 7 },
    { name: 'relative: -1 is the one before', increment: -1, latest: 7, expected: 6 },
    { name: 'relative: back to change set 1', increment: -6, latest: 7, expected: 1 },
    { name: 'relative: before change set 1 is not found', increment: -7, latest: 7, expected: null },
    { name: 'no change set known: latest', increment: 0, latest: null, expected: null },
    { name: 'no change set known: absolute', increment: 1, latest: null, expected: null },
    { name: 'a fraction is not a change set', increment: 1.5, latest: 7, expected: null },
  ];
  it.each(cases)('$name', ({ increment, latest, expected }) => {
    const result = resolveChangeSet(increment, latest);
    if (expected === null) {
      expect(result.found).toBe(false);
      if (!result.found) expect(result.reason).not.toBe('');
    } else {
      expect(result).toEqual({ found: true, changeSet: expected });
    }
  });

  it('always lands in 1…latest when it resolves', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -1000, max: 1000 }),
        fc.integer({ min: 1, max: 500 }),
        (increment, latest) => {
          const result = resolveChangeSet(increment, latest);
          const expected = increment >= 1 ? increment : latest + increment;
          expect(result.found).toBe(expected >= 1 && expected <= latest);
          if (result.found) expect(result.changeSet).toBe(expected);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('latestChangeSet', () => {
  it.each([
    { announced: null, reported: null, expected: null },
    { announced: 0, reported: null, expected: null },
    { announced: 5, reported: null, expected: 5 },
    { announced: null, reported: 3, expected: 3 },
    { announced: 5, reported: 9, expected: 9 },
    { announced: 9, reported: 5, expected: 9 },
  ])('announced $announced, reported $reported → $expected', ({ announced, reported, expected }) => {
    expect(latestChangeSet(announced, reported)).toBe(expected);
  });
});
