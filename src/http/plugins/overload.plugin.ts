// Load shedding (overload is a retryable 503 with Retry-After). @fastify/under-pressure samples the event
// loop's delay once a second (its mean over the second); while that is above OVERLOAD_EVENT_LOOP_DELAY_MS, a new
// request is answered at once with 503 Overloaded and Retry-After instead of queueing behind work the instance
// cannot finish in time (a client that times out costs the instance the whole request anyway). The health routes
// and /metrics are never shed: a liveness probe must be answered while the instance is busy, not broken, and the
// operator must see why it sheds. 0 turns shedding off. Nothing is shed in the first STARTUP_GRACE_MS after the
// server is ready: start-up itself holds the loop (module init, the OpenAPI document), and the sample covering it
// would otherwise shed an instance's first requests.
import fp from 'fastify-plugin';
import underPressure from '@fastify/under-pressure';
import type { FastifyPluginCallback } from 'fastify';
import { Counter } from 'prom-client';
import { PlatformError, PlatformErrorCode } from '../../errors/api-error.js';
import type { MetricsService } from '../../metrics/metrics.service.js';

export interface OverloadOptions {
  /** Mean event-loop delay (ms) above which requests are shed; 0 = never. */
  maxEventLoopDelayMs: number;
  metrics: MetricsService;
}

const NEVER_SHED = /^\/(health\/|metrics(\?|$))/;
const STARTUP_GRACE_MS = 1_500;

const overload: FastifyPluginCallback<OverloadOptions> = (
  fastify,
  { maxEventLoopDelayMs, metrics },
  done,
) => {
  if (maxEventLoopDelayMs === 0) return done();
  const shed = new Counter({
    name: 'platform_requests_shed_total',
    help: 'Requests answered 503 Overloaded because the event loop was overloaded (OVERLOAD_EVENT_LOOP_DELAY_MS)',
    registers: [metrics.registry],
  });
  let armedAt = Number.POSITIVE_INFINITY;
  fastify.addHook('onReady', (ready) => {
    armedAt = performance.now() + STARTUP_GRACE_MS;
    ready();
  });
  void fastify.register(underPressure, {
    maxEventLoopDelay: maxEventLoopDelayMs,
    pressureHandler: (request, _reply, _type, value) => {
      // Not shed: handled as usual.
      if (NEVER_SHED.test(request.url) || performance.now() < armedAt) return undefined;
      shed.inc();
      return Promise.reject(
        new PlatformError(
          PlatformErrorCode.Overloaded,
          `The service is overloaded (event loop delay ${Math.round(Number(value))} ms); nothing was done. ` +
            'Retry after the time given in Retry-After.',
        ),
      );
    },
  });
  done();
};

export const overloadPlugin = fp(overload, { name: 'platform-overload', fastify: '5.x' });
