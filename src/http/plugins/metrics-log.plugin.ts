// Metrics and the access log: every answer is counted by method, route pattern and status (Prometheus), and logged
// as one line with its correlation id, status and duration.
import fp from 'fastify-plugin';
import type { FastifyPluginCallback, FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import type { MetricsService } from '../../metrics/metrics.service.js';
import type { TimedRequest } from './correlation.plugin.js';
import { appendRouteHooks } from './route-hooks.js';

export interface MetricsLogOptions {
  metrics: MetricsService;
  logger: Logger;
}

const metricsLog: FastifyPluginCallback<MetricsLogOptions> = (fastify, { metrics, logger }, done) => {
  function finish(request: TimedRequest, reply: FastifyReply, route: string): void {
    const seconds = request.receivedAt === undefined ? 0 : (performance.now() - request.receivedAt) / 1000;
    metrics.observe(request.method, route, reply.statusCode, seconds);
    if (logger.isLevelEnabled('info'))
      logger.info(
        {
          correlationId: request.context?.correlationId ?? String(request.id),
          ...(request.context?.traceId === undefined ? {} : { trace_id: request.context.traceId }),
          method: request.method,
          url: request.url.split('?')[0],
          status: reply.statusCode,
          durationMs: Math.round(seconds * 10_000) / 10,
        },
        'request completed',
      );
  }

  fastify.addHook('onRoute', (route) => {
    const url = route.url;
    appendRouteHooks(route, 'onResponse', (request: TimedRequest, reply: FastifyReply, done: () => void) => {
      finish(request, reply, url);
      done();
    });
  });
  // Matched routes are finished by their own hook (above); this one covers the not-found handler.
  fastify.addHook('onResponse', (request: TimedRequest, reply, done) => {
    if (request.is404) finish(request, reply, 'unmatched');
    done();
  });
  done();
};

export const metricsLogPlugin = fp(metricsLog, {
  name: 'platform-metrics-log',
  fastify: '5.x',
  dependencies: ['platform-correlation'],
});
