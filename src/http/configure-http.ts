// The HTTP layer every route shares, one concern a plugin (src/http/plugins/), registered here in order. Fastify
// plugins and hooks rather than Nest middleware or interceptors: they also cover 404s and body errors, and cost less
// per request. Each is wrapped with fastify-plugin, so its hooks reach Nest's routes; each adds its per-route work
// in an onRoute hook, so all of them are registered before app.init() adds the routes.
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import cors from '@fastify/cors';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Logger } from 'pino';
import { AuditTrail } from '../audit/audit-trail.js';
import { ApiKeyAuthenticator } from '../auth/api-key.auth.js';
import type { AppConfig } from '../config/config.js';
import { POOL_WAIT_MS } from '../database/data-source.js';
import { ShutdownState } from '../health/shutdown-state.js';
import { httpTracer } from '../tracing/http-tracing.js';
import { tracing } from '../tracing/tracing.js';
import { DirectRoutes } from './direct-routes.js';
import { IdempotencyStore } from './idempotency-store.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { auditRefusalsPlugin } from './plugins/audit-refusals.plugin.js';
import { authPlugin } from './plugins/auth.plugin.js';
import { contentTypesPlugin } from './plugins/content-types.plugin.js';
import { CORRELATION_HEADER, CORRELATION_ID, correlationPlugin } from './plugins/correlation.plugin.js';
import { directRoutesPlugin } from './plugins/direct-routes.plugin.js';
import { drainPlugin } from './plugins/drain.plugin.js';
import { idempotencyPlugin } from './plugins/idempotency.plugin.js';
import { areaSharePlugin } from './plugins/area-share.plugin.js';
import { longWorkPlugin } from './plugins/long-work.plugin.js';
import { metricsLogPlugin } from './plugins/metrics-log.plugin.js';
import { overloadPlugin } from './plugins/overload.plugin.js';
import { tracingPlugin } from './plugins/tracing.plugin.js';
import { RateLimiter } from '../rate-limit/rate-limiter.js';
import { clientErrorHandler, frameworkErrors } from './router-errors.js';

/** Request line plus headers: room for 1,000 comma-separated GUIDs in a query string and ordinary headers. */
export const MAX_REQUEST_HEAD_BYTES = 64 * 1024;

export function fastifyOptions(config: AppConfig) {
  return {
    bodyLimit: config.bodyLimit,
    // Node's own limit on receiving a whole request (headers and body), a backstop behind the 503 of
    // REQUEST_TIMEOUT_MS (Node checks it only every 30 s); 0 = none, as REQUEST_TIMEOUT_MS=0 says.
    requestTimeout: config.requestTimeoutMs > 0 ? config.requestTimeoutMs + 1_000 : 0,
    // maxParamLength: Fastify answers a path parameter over its limit (default 100) with its own bare 414, neither a
    // documented status nor the envelope. The request head is already bounded (MAX_REQUEST_HEAD_BYTES), so a path
    // parameter may take all of it and the route's own id check answers (400 naming the field, or 404), as it does
    // for a shorter wrong id.
    routerOptions: {
      caseSensitive: false,
      ignoreTrailingSlash: true,
      maxParamLength: MAX_REQUEST_HEAD_BYTES,
    },
    // GET lists of up to 1,000 GUIDs (`?ids=` of the iCalendar export, `?ScheduleIds=` of the occurrence listing)
    // make a ~37 KB request line; Node's default limit on the request head is 16 KiB (431 beyond it).
    http: { maxHeaderSize: MAX_REQUEST_HEAD_BYTES },
    trustProxy: config.trustProxy,
    // What the router and Node's parser answer on their own, in the envelope (router-errors.ts).
    frameworkErrors,
    clientErrorHandler,
    genReqId: (request: { headers: IncomingHttpHeaders }): string => {
      const header = request.headers[CORRELATION_HEADER];
      return typeof header === 'string' && CORRELATION_ID.test(header) ? header : randomUUID();
    },
  };
}

export async function configureHttp(
  app: NestFastifyApplication,
  config: AppConfig,
  logger: Logger,
): Promise<void> {
  const fastify = app.getHttpAdapter().getInstance();
  const active = tracing();
  const directRoutes = config.directRoutes ? new DirectRoutes(app) : undefined;
  const state = app.get(ShutdownState);
  const authenticator = app.get(ApiKeyAuthenticator);
  const rateLimiter = app.get(RateLimiter);
  const metrics = app.get(MetricsService);
  const idempotencyStore = app.get(IdempotencyStore);
  const trail = app.get(AuditTrail);

  if (config.corsOrigins !== undefined) {
    await fastify.register(cors, {
      origin: config.corsOrigins === '*' ? '*' : [...config.corsOrigins],
      exposedHeaders: ['X-Correlation-Id', 'Retry-After', 'Location', 'ETag'],
    });
  }
  // In this order: a route's handler is chosen first; its onRequest hooks run tracing, then the correlation
  // headers and deadline, then load shedding, then authentication (so a 401/403 carries the headers); an Idempotency-Key is looked up once the caller is known.
  await fastify.register(drainPlugin, { state });
  await fastify.register(directRoutesPlugin, { directRoutes, logger });
  await fastify.register(tracingPlugin, { tracer: active === undefined ? undefined : httpTracer(active) });
  await fastify.register(correlationPlugin, { config, logger });
  await fastify.register(overloadPlugin, { maxEventLoopDelayMs: config.overloadEventLoopDelayMs, metrics });
  await fastify.register(authPlugin, { config, authenticator, rateLimiter });
  await fastify.register(longWorkPlugin, { concurrency: config.longWorkConcurrency, metrics });
  await fastify.register(areaSharePlugin, { concurrency: config.areaConcurrency, waitMs: POOL_WAIT_MS });
  await fastify.register(auditRefusalsPlugin, { config, trail });
  await fastify.register(idempotencyPlugin, { store: idempotencyStore });
  await fastify.register(contentTypesPlugin, { config });
  await fastify.register(metricsLogPlugin, { metrics, logger });
}
