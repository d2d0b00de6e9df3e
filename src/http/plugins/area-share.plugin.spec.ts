import { describe, expect, it, jest } from '@jest/globals';
import type { FastifyRequest } from 'fastify';
import { AreaGate } from './area-share.plugin.js';

const request = (destroyed = false) => ({ raw: { socket: { destroyed } } }) as unknown as FastifyRequest;

describe('AreaGate', () => {
  it('lets `limit` requests in, queues the next in order and hands a place on when one leaves', async () => {
    const gate = new AreaGate(2, 60_000);
    const [a, b, c, d] = [request(), request(), request(), request()];
    expect(gate.enter(a)).toBeUndefined();
    expect(gate.enter(b)).toBeUndefined();
    const order: string[] = [];
    const waitC = gate.enter(c)!.then(() => order.push('c'));
    const waitD = gate.enter(d)!.then(() => order.push('d'));
    gate.leave(a);
    gate.leave(b);
    await Promise.all([waitC, waitD]);
    expect(order).toEqual(['c', 'd']);
    gate.leave(c);
    gate.leave(d);
    // All places free again: the next two enter at once.
    expect(gate.enter(request())).toBeUndefined();
    expect(gate.enter(request())).toBeUndefined();
  });

  it('answers a request that waited past its limit 503 busy, and skips a waiter whose client left', async () => {
    jest.useFakeTimers();
    try {
      const gate = new AreaGate(1, 5_000);
      const holder = request();
      expect(gate.enter(holder)).toBeUndefined();
      const late = gate.enter(request())!;
      jest.advanceTimersByTime(5_000);
      await expect(late).rejects.toMatchObject({ code: 'DatabaseUnavailable', status: 503 });
      const gone = request(true);
      let goneEntered = false;
      void gate.enter(gone)!.then(() => (goneEntered = true));
      const next = gate.enter(request())!;
      gate.leave(holder);
      await next;
      expect(goneEntered).toBe(false);
    } finally {
      jest.useRealTimers();
    }
  });

  it('gives the place back when a waiting request leaves before its turn', () => {
    const gate = new AreaGate(1, 60_000);
    const holder = request();
    const waiter = request();
    expect(gate.enter(holder)).toBeUndefined();
    void gate.enter(waiter)?.catch(() => undefined);
    gate.leave(waiter);
    gate.leave(holder);
    expect(gate.enter(request())).toBeUndefined();
  });
});
