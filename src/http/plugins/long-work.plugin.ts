// A bulkhead for long work: the routes that declare `longWork` (RouteLimits) — an iCalendar import, a whole
// export — share LONG_WORK_CONCURRENCY places per instance. Beyond them a request is answered at once with 503
// Overloaded and Retry-After, before its body is read: a dozen large imports then hold a bounded share of the
// pool's connections, the memory and the event loop, and reads of the other areas (and readiness) keep being
// answered. The place is taken after authentication (an unauthenticated flood takes none) and given back when
// the answer is sent or the client goes away.
import fp from 'fastify-plugin';
import type { FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import { Counter, Gauge } from 'prom-client';
import { PlatformError, PlatformErrorCode } from '../../errors/api-error.js';
import type { MetricsService } from '../../metrics/metrics.service.js';
import { routeLimitsOf } from '../../route-config/route-limits.js';
import { appendRouteHooks } from './route-hooks.js';

export interface LongWorkOptions {
  /** How many long-work requests run at once on this instance (LONG_WORK_CONCURRENCY). */
  concurrency: number;
  metrics: MetricsService;
}

const longWork: FastifyPluginCallback<LongWorkOptions> = (fastify, { concurrency, metrics }, done) => {
  let running = 0;
  const refused = new Counter({
    name: 'platform_long_work_refused_total',
    help: 'Long-work requests (imports, exports) answered 503 Overloaded because LONG_WORK_CONCURRENCY were running',
    registers: [metrics.registry],
  });
  new Gauge({
    name: 'platform_long_work_running',
    help: 'Long-work requests (imports, exports) running on this instance',
    registers: [metrics.registry],
    collect() {
      this.set(running);
    },
  });
  const holding = new WeakSet<FastifyRequest>();
  const release = (request: FastifyRequest, _reply: FastifyReply, next: () => void): void => {
    if (holding.delete(request)) running -= 1;
    next();
  };
  const enter = (request: FastifyRequest, _reply: FastifyReply, next: (error?: Error) => void): void => {
    if (running >= concurrency) {
      refused.inc();
      next(
        new PlatformError(
          PlatformErrorCode.Overloaded,
          `This instance is already carrying out ${concurrency} imports or exports; nothing was done. ` +
            'Retry after the time given in Retry-After.',
        ),
      );
      return;
    }
    running += 1;
    holding.add(request);
    next();
  };
  fastify.addHook('onRoute', (route) => {
    if (routeLimitsOf(route.config)?.longWork !== true) return;
    appendRouteHooks(route, 'onRequest', enter);
    appendRouteHooks(route, 'onResponse', release);
    const aborted = route.onRequestAbort;
    route.onRequestAbort = [
      ...(aborted === undefined ? [] : Array.isArray(aborted) ? aborted : [aborted]),
      (request: FastifyRequest, next: () => void) => release(request, undefined as never, next),
    ] as typeof route.onRequestAbort;
  });
  done();
};

export const longWorkPlugin = fp(longWork, {
  name: 'platform-long-work',
  fastify: '5.x',
  dependencies: ['platform-auth'],
});
