import { describe, it, expect } from '@jest/globals';
import fc from 'fast-check';
import { KeyedSerialQueue, SingleFlight } from './keyed-work.js';

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('KeyedSerialQueue', () => {
  it('runs the tasks of one key in submission order, even when earlier ones are slower', async () => {
    const queue = new KeyedSerialQueue();
    const log: string[] = [];
    const task = (name: string, ms: number) => async () => {
      log.push(`start ${name}`);
      await tick(ms);
      log.push(`end ${name}`);
      return name;
    };
    const results = await Promise.all([queue.run('a', task('1', 30)), queue.run('a', task('2', 1))]);
    expect(results).toEqual(['1', '2']);
    expect(log).toEqual(['start 1', 'end 1', 'start 2', 'end 2']);
  });

  it('runs different keys concurrently', async () => {
    const queue = new KeyedSerialQueue();
    const log: string[] = [];
    const slow = queue.run('a', async () => {
      await tick(30);
      log.push('a');
    });
    const fast = queue.run('b', async () => {
      await tick(1);
      log.push('b');
    });
    await Promise.all([slow, fast]);
    expect(log).toEqual(['b', 'a']);
  });

  it('keeps going after a failed task and forgets finished keys', async () => {
    const queue = new KeyedSerialQueue();
    await expect(queue.run('a', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(queue.run('a', () => Promise.resolve(2))).resolves.toBe(2);
    await queue.idle();
    await tick(0);
    expect(queue.size).toBe(0);
  });

  it('never overlaps two tasks of a key, whatever their durations (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ key: fc.constantFrom('a', 'b', 'c'), ms: fc.nat(3) }), {
          minLength: 1,
          maxLength: 12,
        }),
        async (tasks) => {
          const queue = new KeyedSerialQueue();
          const running = new Map<string, number>();
          const order = new Map<string, number[]>();
          let overlap = false;
          await Promise.all(
            tasks.map(({ key, ms }, index) =>
              queue.run(key, async () => {
                running.set(key, (running.get(key) ?? 0) + 1);
                if ((running.get(key) ?? 0) > 1) overlap = true;
                order.set(key, [...(order.get(key) ?? []), index]);
                await tick(ms);
                running.set(key, (running.get(key) ?? 0) - 1);
              }),
            ),
          );
          const sorted = [...order.values()].every((list) =>
            list.every((v, i) => i === 0 || list[i - 1] < v),
          );
          return !overlap && sorted;
        },
      ),
      { numRuns: 30 },
    );
  });
});

describe('SingleFlight', () => {
  it('shares one in-flight run per key and starts a new one after it settled', async () => {
    const flight = new SingleFlight<number>();
    let runs = 0;
    const task = async () => {
      runs++;
      await tick(10);
      return runs;
    };
    const [a, b, c] = await Promise.all([
      flight.run('k', task),
      flight.run('k', task),
      flight.run('other', task),
    ]);
    expect(a).toBe(b);
    expect(runs).toBe(2);
    expect(c).toBeGreaterThan(0);
    await flight.run('k', task);
    expect(runs).toBe(3);
  });

  it('lets a failed run be retried', async () => {
    const flight = new SingleFlight<number>();
    await expect(flight.run('k', () => Promise.reject(new Error('no')))).rejects.toThrow('no');
    await expect(flight.run('k', () => Promise.resolve(1))).resolves.toBe(1);
  });
});
