// A bulkhead per area: the requests of one area whose work is the database's (schedules with occurrences, SCIM)
// hold at most AREA_CONCURRENCY of the instance's places at a time; more wait their turn here, in arrival order,
// for as long as a request waits for a pooled connection, then get 503 DatabaseUnavailable "busy" with
// Retry-After, nothing done. So when a lock (another session's LOCK TABLE, a long transaction) blocks every
// request of one area, they hold at most that many of the pool's connections, and the other areas' requests
// still find one. Routes with their own gate (long work) or their own waits (extra time-out) are not counted.
import fp from 'fastify-plugin';
import type { FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import { PlatformError, PlatformErrorCode } from '../../errors/api-error.js';
import { routeLimitsOf } from '../../route-config/route-limits.js';
import { appendRouteHooks } from './route-hooks.js';

export interface AreaShareOptions {
  /** Requests of one area in flight at a time (AREA_CONCURRENCY); 0 = no limit. */
  concurrency: number;
  /** How long a request waits for its area's place (as long as for a pooled connection). */
  waitMs: number;
}

/** The areas whose requests are database work, by the start of their routes' paths. */
const AREAS: ReadonlyArray<readonly [string, RegExp]> = [
  ['schedules', /^\/api\/v1\/(?:Schedule|Occurrence)(?:\/|$)/],
  ['users', /^\/api\/v1\/scim(?:\/|$)/],
];

interface Waiter {
  request: FastifyRequest;
  grant: () => void;
  timer: NodeJS.Timeout;
}

export class AreaGate {
  private running = 0;
  private readonly waiting: Waiter[] = [];
  private readonly holding = new WeakSet<FastifyRequest>();

  constructor(
    private readonly limit: number,
    private readonly waitMs: number,
  ) {}

  enter(request: FastifyRequest): Promise<void> | undefined {
    if (this.running < this.limit) {
      this.running += 1;
      this.holding.add(request);
      return undefined;
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        request,
        grant: () => {
          clearTimeout(waiter.timer);
          this.holding.add(request);
          resolve();
        },
        timer: setTimeout(() => {
          this.waiting.splice(this.waiting.indexOf(waiter), 1);
          reject(busy());
        }, this.waitMs),
      };
      this.waiting.push(waiter);
    });
  }

  leave(request: FastifyRequest): void {
    const index = this.waiting.findIndex((waiter) => waiter.request === request);
    if (index >= 0) {
      clearTimeout(this.waiting[index].timer);
      this.waiting.splice(index, 1);
      return;
    }
    if (!this.holding.delete(request)) return;
    // The place goes to the next waiter whose client is still there.
    for (let next = this.waiting.shift(); next !== undefined; next = this.waiting.shift()) {
      if (next.request.raw.socket?.destroyed === true) {
        clearTimeout(next.timer);
        continue;
      }
      next.grant();
      return;
    }
    this.running -= 1;
  }
}

function busy(): PlatformError {
  return new PlatformError(
    PlatformErrorCode.DatabaseUnavailable,
    'The database is busy with other requests of this area and this request waited past its limit for a turn; ' +
      'nothing was stored. Retry after the time given in Retry-After.',
  );
}

const areaShare: FastifyPluginCallback<AreaShareOptions> = (fastify, { concurrency, waitMs }, done) => {
  if (concurrency === 0) return done();
  const gates = new Map(AREAS.map(([area]) => [area, new AreaGate(concurrency, waitMs)]));
  fastify.addHook('onRoute', (route) => {
    const limits = routeLimitsOf(route.config);
    if (limits?.longWork === true || limits?.extraTimeoutMs !== undefined) return;
    const area = AREAS.find(([, path]) => path.test(route.url))?.[0];
    if (area === undefined) return;
    const gate = gates.get(area)!;
    appendRouteHooks(
      route,
      'onRequest',
      (request: FastifyRequest, _reply: FastifyReply, next: (error?: Error) => void) => {
        const turn = gate.enter(request);
        if (turn === undefined) next();
        else turn.then(() => next(), next);
      },
    );
    const leave = (request: FastifyRequest, _reply: FastifyReply, next: () => void) => {
      gate.leave(request);
      next();
    };
    appendRouteHooks(route, 'onResponse', leave);
    const aborted = route.onRequestAbort;
    route.onRequestAbort = [
      ...(aborted === undefined ? [] : Array.isArray(aborted) ? aborted : [aborted]),
      (request: FastifyRequest, next: () => void) => leave(request, undefined as never, next),
    ] as typeof route.onRequestAbort;
  });
  done();
};

export const areaSharePlugin = fp(areaShare, {
  name: 'platform-area-share',
  fastify: '5.x',
  dependencies: ['platform-auth'],
});
