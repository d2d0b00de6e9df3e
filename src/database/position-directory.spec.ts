import { describe, expect, it } from '@jest/globals';
import { DIRECTORY_STEP, PositionDirectory, type DirectoryRows } from './position-directory.js';

const keys = (count: number) =>
  Array.from({ length: Math.ceil(count / DIRECTORY_STEP) }, (_, index) => ({
    created: `2026-01-01 00:00:${String(index).padStart(2, '0')}+00`,
    id: `id-${String(index * DIRECTORY_STEP)}`,
  }));

function directory(rows: () => DirectoryRows) {
  let clock = 0;
  const loads: number[] = [];
  const errors: unknown[] = [];
  const positions = new PositionDirectory(
    (step) => {
      loads.push(step);
      return Promise.resolve(rows());
    },
    (error) => errors.push(error),
    () => clock,
  );
  return { positions, loads, errors, advance: (ms: number) => (clock += ms) };
}

describe('PositionDirectory', () => {
  const S = DIRECTORY_STEP;

  it('answers nothing until built, then the nearest key below the offset and how far past it the page starts', async () => {
    const { positions, loads } = directory(() => ({ generation: '7', keys: keys(2.5 * S) }));
    expect(positions.startOf(1.5 * S, '7')).toBeUndefined();
    await positions.idle();
    expect(loads).toEqual([S]);
    expect(positions.startOf(0, '7')).toEqual({ key: keys(2.5 * S)[0], skip: 0 });
    expect(positions.startOf(S - 1, '7')).toEqual({ key: keys(2.5 * S)[0], skip: S - 1 });
    expect(positions.startOf(S, '7')).toEqual({ key: keys(2.5 * S)[1], skip: 0 });
    expect(positions.startOf(2.5 * S - 1, '7')).toEqual({ key: keys(2.5 * S)[2], skip: 0.5 * S - 1 });
  });

  it('tells the start by the directory as built with its generation (current), without starting a build', async () => {
    const { positions, loads } = directory(() => ({ generation: '7', keys: keys(2.5 * S) }));
    expect(positions.current(S)).toBeUndefined();
    expect(loads).toEqual([]);
    positions.startOf(S, '7');
    await positions.idle();
    expect(positions.current(S + 3)).toEqual({ key: keys(2.5 * S)[1], skip: 3, generation: '7' });
    // Past the last key: from the last key (the page statement finds fewer rows, or none).
    expect(positions.current(4 * S)).toEqual({ key: keys(2.5 * S)[2], skip: 2 * S, generation: '7' });
    expect(loads).toHaveLength(1);
  });

  it('is unused for any other generation, and rebuilt at most once per second, one build at a time', async () => {
    let generation = '1';
    const { positions, loads, advance } = directory(() => ({ generation, keys: keys(3 * S) }));
    positions.startOf(S, '1');
    positions.startOf(S, '1'); // a build is running: no second one
    await positions.idle();
    expect(loads).toHaveLength(1);
    generation = '2';
    expect(positions.startOf(S, '2')).toBeUndefined(); // stale, and the last build started < 1 s ago
    await positions.idle();
    expect(loads).toHaveLength(1);
    expect(positions.current(S)?.generation).toBe('1'); // the caller's statement sees '2' and does not use it
    advance(1_000);
    expect(positions.startOf(S, '2')).toBeUndefined();
    await positions.idle();
    expect(loads).toHaveLength(2);
    expect(positions.startOf(S, '2')).toEqual({ key: keys(3 * S)[1], skip: 0 });
    expect(positions.startOf(S, '1')).toBeUndefined();
  });

  it('keeps nothing from a build that saw no generation, and reports a failed build', async () => {
    const failing = directory(() => {
      throw new Error('connection lost');
    });
    failing.positions.startOf(1_000, '1');
    await failing.positions.idle();
    expect(failing.errors).toHaveLength(1);
    expect(failing.positions.startOf(1_000, '1')).toBeUndefined();

    const empty = directory(() => ({ generation: undefined, keys: [] }));
    empty.positions.startOf(1_000, '1');
    await empty.positions.idle();
    empty.advance(1_000);
    expect(empty.positions.startOf(1_000, '1')).toBeUndefined();
    expect(empty.errors).toEqual([]);
  });
});
