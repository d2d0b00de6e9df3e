// Fastify-level plumbing shared by every route: correlation ids, rate limiting, metrics, access logs, security
// headers, CORS and content types. Hooks rather than Nest interceptors: they also cover 404s and body errors,
// and cost less per request.
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import helmet from '@fastify/helmet';
import cors from '@fastify/cors';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/config.js';
import { PlatformErrorCode } from '../errors/api-error.js';
import { requestContext, type RequestContext } from '../logging/request-context.js';
import { MetricsService } from './metrics.service.js';
import { RateLimiter } from './rate-limiter.js';
import { routeLimitsOf } from './route-limits.js';

const CORRELATION_HEADER = 'x-correlation-id';
const CORRELATION_ID = /^[\w.:@/+=-]{1,128}$/;

export function fastifyOptions(config: AppConfig) {
  return {
    bodyLimit: config.bodyLimit,
    handlerTimeout: config.requestTimeoutMs,
    routerOptions: { caseSensitive: false, ignoreTrailingSlash: true },
    trustProxy: config.trustProxy,
    genReqId: (request: { headers: IncomingHttpHeaders }): string => {
      const header = request.headers[CORRELATION_HEADER];
      return typeof header === 'string' && CORRELATION_ID.test(header) ? header : randomUUID();
    },
  };
}

interface TimedRequest extends FastifyRequest {
  context?: RequestContext;
  receivedAt?: number;
}

export async function configureHttp(
  app: NestFastifyApplication,
  config: AppConfig,
  logger: Logger,
): Promise<void> {
  const fastify = app.getHttpAdapter().getInstance();
  const metrics = app.get(MetricsService);
  const rateLimiter = app.get(RateLimiter);

  if (config.securityHeaders)
    await fastify.register(helmet, {
      // Swagger UI at /docs loads its own scripts and styles from the same origin.
      contentSecurityPolicy: {
        directives: {
          defaultSrc: ["'self'"],
          imgSrc: ["'self'", 'data:'],
          styleSrc: ["'self'", "'unsafe-inline'"],
        },
      },
    });
  if (config.corsOrigins !== undefined) {
    await fastify.register(cors, {
      origin: config.corsOrigins === '*' ? '*' : [...config.corsOrigins],
      exposedHeaders: ['X-Correlation-Id', 'Retry-After', 'Location', 'ETag'],
    });
  }

  // Registered before app.init(), so it sees every Nest route as it is added.
  fastify.addHook('onRoute', (route) => {
    const limits = routeLimitsOf(route.config);
    if (limits?.bodyLimit !== undefined) route.bodyLimit = Math.max(limits.bodyLimit, config.bodyLimit);
    // REQUEST_TIMEOUT_MS 0 means no time-out at all: nothing to extend.
    if (limits?.extraTimeoutMs !== undefined && config.requestTimeoutMs > 0) {
      route.handlerTimeout = config.requestTimeoutMs + limits.extraTimeoutMs;
    }
  });

  // JSON only: text/plain bodies are 415, and JSON media types such as application/scim+json parse as JSON.
  fastify.removeContentTypeParser('text/plain');
  fastify.addContentTypeParser(
    // Fastify tests the whole header, parameters included (`application/scim+json; charset=utf-8`).
    /^application\/[\w.+-]+\+json\s*(?:;.*)?$/i,
    { parseAs: 'string' },
    fastify.getDefaultJsonParser('error', 'error'),
  );

  fastify.addHook('onRequest', (request: TimedRequest, reply, done) => {
    request.receivedAt = performance.now();
    const context: RequestContext = { correlationId: String(request.id) };
    request.context = context;
    reply.header('X-Correlation-Id', context.correlationId);
    if (rateLimiter.enabled) {
      const decision = rateLimiter.hit(RateLimiter.bucketFor(request.headers.authorization, request.ip));
      if (!decision.allowed) {
        reply
          .code(429)
          .header('Retry-After', String(decision.resetSeconds))
          .send({
            Succeeded: false,
            Message: `Rate limit of ${decision.limit} requests per minute exceeded; retry after ${decision.resetSeconds} s.`,
            Code: PlatformErrorCode.TooManyRequests,
            CorrelationId: context.correlationId,
          });
        return;
      }
    }
    requestContext.run(context, done);
  });

  // DESIGN §2: without the header, a body's Context.CorrelationId names the request.
  fastify.addHook('preValidation', (request: TimedRequest, reply, done) => {
    if (request.headers[CORRELATION_HEADER] === undefined && request.context) {
      const fromBody = correlationIdFromBody(request.body);
      if (fromBody !== undefined) {
        request.context.correlationId = fromBody;
        reply.header('X-Correlation-Id', fromBody);
      }
    }
    done();
  });

  fastify.addHook('onResponse', (request: TimedRequest, reply, done) => {
    const seconds = request.receivedAt === undefined ? 0 : (performance.now() - request.receivedAt) / 1000;
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.observe(request.method, route, reply.statusCode, seconds);
    logger.info(
      {
        correlationId: request.context?.correlationId ?? String(request.id),
        method: request.method,
        url: request.url.split('?')[0],
        status: reply.statusCode,
        durationMs: Math.round(seconds * 10_000) / 10,
      },
      'request completed',
    );
    done();
  });
}

function correlationIdFromBody(body: unknown): string | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const contextKey = Object.keys(body).find((key) => key.toLowerCase() === 'context');
  const context = contextKey === undefined ? undefined : (body as Record<string, unknown>)[contextKey];
  if (context === null || typeof context !== 'object') return undefined;
  const idKey = Object.keys(context).find((key) => key.toLowerCase() === 'correlationid');
  const id = idKey === undefined ? undefined : (context as Record<string, unknown>)[idKey];
  return typeof id === 'string' && CORRELATION_ID.test(id) ? id : undefined;
}
