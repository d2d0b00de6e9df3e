// Fastify-level plumbing shared by every route: correlation ids, rate limiting, metrics, access logs, security
// headers, CORS and content types. Hooks rather than Nest interceptors: they also cover 404s and body errors,
// and cost less per request.
import { randomUUID } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import type { IncomingHttpHeaders } from 'node:http';
import cors from '@fastify/cors';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { ApiKeyAuthenticator, tenantHookFor } from '../auth/api-key.auth.js';
import { accessRuleOf, ADMIN_ONLY, namesTenant, PUBLIC, type AccessRule } from '../auth/scopes.js';
import type { AppConfig } from '../config/config.js';
import { PlatformError, PlatformErrorCode } from '../errors/api-error.js';
import { RequestContext, type WithRequestContext } from '../logging/request-context.js';
import { httpTracer } from '../tracing/http-tracing.js';
import { tracing } from '../tracing/tracing.js';
import { refuseNulCharacters } from '../validation/nul-characters.js';
import { DirectRoutes } from './direct-routes.js';
import { idempotencyOnRoute } from './idempotency.js';
import { IdempotencyStore } from './idempotency-store.js';
import { MetricsService } from './metrics.service.js';
import { RateLimiter, sendTooManyRequests, type RateDecision } from './rate-limiter.js';
import { routeLimitsOf } from './route-limits.js';
import { apiSecurityHeaders, docsSecurityHeaders, isDocsRoute } from './security-headers.js';

const CORRELATION_HEADER = 'x-correlation-id';
const CORRELATION_ID = /^[\w.:@/+=-]{1,128}$/;

/** Request line plus headers: room for 1,000 comma-separated GUIDs in a query string and ordinary headers. */
export const MAX_REQUEST_HEAD_BYTES = 64 * 1024;

export function fastifyOptions(config: AppConfig) {
  return {
    bodyLimit: config.bodyLimit,
    // Node's own limit on receiving a whole request (headers and body), a backstop behind the 503 of
    // REQUEST_TIMEOUT_MS (Node checks it only every 30 s); 0 = none, as REQUEST_TIMEOUT_MS=0 says.
    requestTimeout: config.requestTimeoutMs > 0 ? config.requestTimeoutMs + 1_000 : 0,
    routerOptions: { caseSensitive: false, ignoreTrailingSlash: true },
    // GET lists of up to 1,000 GUIDs (`?ids=` of the iCalendar export, `?ScheduleIds=` of the occurrence listing)
    // make a ~37 KB request line; Node's default limit on the request head is 16 KiB (431 beyond it).
    http: { maxHeaderSize: MAX_REQUEST_HEAD_BYTES },
    trustProxy: config.trustProxy,
    genReqId: (request: { headers: IncomingHttpHeaders }): string => {
      const header = request.headers[CORRELATION_HEADER];
      return typeof header === 'string' && CORRELATION_ID.test(header) ? header : randomUUID();
    },
  };
}

interface TimedRequest extends FastifyRequest, WithRequestContext {
  receivedAt?: number;
}

/** How often the request deadlines are checked: a time-out answers within this much of REQUEST_TIMEOUT_MS. */
const DEADLINE_SWEEP_MS = 100;

export async function configureHttp(
  app: NestFastifyApplication,
  config: AppConfig,
  logger: Logger,
): Promise<void> {
  const fastify = app.getHttpAdapter().getInstance();
  const metrics = app.get(MetricsService);
  const active = tracing();
  const tracer = active === undefined ? undefined : httpTracer(active);
  const rateLimiter = app.get(RateLimiter);
  const authenticator = app.get(ApiKeyAuthenticator);
  const directRoutes = config.directRoutes ? new DirectRoutes(app) : undefined;

  // The headers every answer carries, set with one call per request: a per-route object whose correlation id
  // slot is overwritten before each use (reply.headers() copies the values).
  const apiHeaders = config.securityHeaders ? apiSecurityHeaders() : {};
  const docsHeaders = config.securityHeaders ? docsSecurityHeaders() : {};
  const headerSet = (url: string) => ({
    'x-correlation-id': '',
    ...(isDocsRoute(url) ? docsHeaders : apiHeaders),
  });
  const unmatchedHeaders = headerSet('');
  if (config.corsOrigins !== undefined) {
    await fastify.register(cors, {
      origin: config.corsOrigins === '*' ? '*' : [...config.corsOrigins],
      exposedHeaders: ['X-Correlation-Id', 'Retry-After', 'Location', 'ETag'],
    });
  }

  // Per-route work is set up once here, with what it needs in closures: reading `request.routeOptions` in a global
  // hook builds an object on every request (measured: ~45 µs of ~150 µs per request). Registered before
  // app.init(), so it sees every Nest route as it is added.
  fastify.addHook('onRoute', (route) => {
    const limits = routeLimitsOf(route.config);
    const direct = directRoutes?.handlerFor(route);
    if (direct !== undefined) route.handler = direct;
    if (limits?.bodyLimit !== undefined) route.bodyLimit = Math.max(limits.bodyLimit, config.bodyLimit);
    const timeoutMs =
      config.requestTimeoutMs > 0 ? config.requestTimeoutMs + (limits?.extraTimeoutMs ?? 0) : 0;
    if (limits?.rawBody === true) {
      route.preParsing = [...hooksOf(route.preParsing), keepRawBody] as typeof route.preParsing;
    }
    if (limits?.textBodies !== undefined) {
      route.preParsing = [
        ...hooksOf(route.preParsing),
        onlyMediaTypes(limits.textBodies),
      ] as typeof route.preParsing;
    }
    const url = route.url;
    const headers = headerSet(url);
    const rule = accessRuleOfRoute(route);
    const authenticate = authenticator.hookFor(rule);
    const needsKey = !(rule.scope === 'public' || rule.publicWhen?.(config));
    route.onRequest = [
      ...hooksOf(route.onRequest),
      // Only when tracing is on (src/tracing): off, no hook is added and requests pay nothing.
      ...(tracer === undefined ? [] : [tracer.onRequest(route.method, url)]),
      (request: TimedRequest, reply: FastifyReply, done: () => void) => {
        headers['x-correlation-id'] = request.context!.correlationId;
        reply.headers(headers);
        if (timeoutMs > 0 && !reply.sent) {
          inFlight.set(request, {
            due: Date.now() + timeoutMs,
            reply,
            context: request.context!,
          });
        }
        done();
      },
      // After the headers: a 401/403 carries them too.
      ...(authenticate === undefined ? [] : [authenticate]),
    ] as typeof route.onRequest;
    if (needsKey) {
      route.preHandler = [
        ...hooksOf(route.preHandler),
        tenantHookFor(namesTenant(route.config)),
      ] as typeof route.preHandler;
    }
    route.onResponse = [
      ...hooksOf(route.onResponse),
      (request: TimedRequest, reply: FastifyReply, done: () => void) => {
        finish(request, reply, url);
        done();
      },
      ...(tracer === undefined ? [] : [tracer.onResponse]),
    ] as typeof route.onResponse;
  });

  // After the hook above: a replay or a 409 comes after authentication and the tenant check.
  fastify.addHook('onRoute', idempotencyOnRoute(app.get(IdempotencyStore), config));

  if (directRoutes !== undefined) {
    fastify.addHook('onReady', (done) => {
      logger.info(
        { direct: directRoutes.direct, viaNest: directRoutes.viaNest },
        `${directRoutes.direct} routes are called directly; ${directRoutes.viaNest.length} go through Nest's pipeline`,
      );
      done();
    });
  }

  // JSON only: text/plain bodies are 415, and JSON media types such as application/scim+json parse as JSON.
  fastify.removeContentTypeParser('text/plain');
  const jsonParser = fastify.getDefaultJsonParser('error', 'error');
  fastify.addContentTypeParser(
    // Fastify tests the whole header, parameters included (`application/scim+json; charset=utf-8`).
    /^application\/[\w.+-]+\+json\s*(?:;.*)?$/i,
    { parseAs: 'string' },
    (request, body, done) => {
      // Some provisioning clients send `Content-Type: application/scim+json` on GET and DELETE without a body.
      if (
        body === '' &&
        (request.method === 'GET' || request.method === 'DELETE' || request.method === 'HEAD')
      ) {
        done(null, undefined);
        return;
      }
      void jsonParser(request, typeof body === 'string' ? body : body.toString('utf8'), done);
    },
  );

  // Text bodies a route declares (RouteLimits textBodies: the iCalendar import's text/calendar) arrive as their
  // octets (a Buffer: the route decodes them per the charset parameter, after joining folds, RFC 5545 §3.1), under
  // the route's body limit; any other route answers them 415 like every unsupported type.
  fastify.addContentTypeParser(
    /^text\/calendar\s*(?:;.*)?$/i,
    { parseAs: 'buffer' },
    (request, body, done) => {
      const mediaType = 'text/calendar';
      if (routeLimitsOf(request.routeOptions.config)?.textBodies?.includes(mediaType) !== true) {
        done(
          new PlatformError(
            PlatformErrorCode.UnsupportedMediaType,
            `Content type ${mediaType} is not supported by ${request.method} ${request.url.split('?')[0]}; send application/json.`,
          ),
          undefined,
        );
        return;
      }
      done(null, body);
    },
  );

  fastify.addHook('onRequest', (request: TimedRequest, reply, done) => {
    request.receivedAt = performance.now();
    const context = new RequestContext(String(request.id), logger);
    request.context = context;
    // A matched route sets its own headers (above); the not-found handler has no route hooks.
    if (request.is404) setUnmatchedHeaders(reply, context);
    // Matched routes count requests in their auth hook, once the key is verified; unmatched ones by address.
    if (request.is404 && rateLimiter.enabled) {
      const decision = rateLimiter.hit(RateLimiter.addressBucket(request.ip));
      const apply = (result: RateDecision): void => {
        if (result.allowed) done();
        else sendTooManyRequests(request, reply, result);
      };
      if (decision instanceof Promise) decision.then(apply, done);
      else apply(decision);
      return;
    }
    done();
  });

  // Request time-out: our own deadline rather than Fastify's handlerTimeout, which on Node 20 is cleared as soon as a
  // POST body has been read (so it never fired for POST routes) and costs an AbortController per request. One timer
  // sweeps every in-flight request instead of one timer per request.
  const inFlight = new Map<FastifyRequest, { due: number; reply: FastifyReply; context: RequestContext }>();
  if (config.requestTimeoutMs > 0) {
    const sweeper = setInterval(() => {
      const now = Date.now();
      for (const [request, entry] of inFlight) {
        if (entry.due > now) continue;
        inFlight.delete(request);
        // A request its client gave up on has no onResponse; it leaves the map here, without an answer.
        if (entry.reply.sent || request.raw.socket?.destroyed === true) continue;
        // A body still arriving (a slow or stalled client) would keep the connection, and its socket, open after
        // the answer: close it once the 503 is written.
        if (!request.raw.complete) {
          const socket = request.raw.socket;
          void entry.reply.header('connection', 'close');
          entry.reply.raw.once('finish', () => socket?.destroy());
        }
        void entry.reply.code(503).send({
          Succeeded: false,
          Message: 'The request took longer than the configured time-out (REQUEST_TIMEOUT_MS).',
          Code: PlatformErrorCode.RequestTimeout,
          CorrelationId: entry.context.correlationId,
        });
      }
    }, DEADLINE_SWEEP_MS);
    sweeper.unref();
    fastify.addHook('onClose', (_instance, done) => {
      clearInterval(sweeper);
      done();
    });
  }

  // DESIGN §2: without the header, a body's Context.CorrelationId names the request.
  fastify.addHook('preValidation', (request: TimedRequest, reply, done) => {
    if (request.headers[CORRELATION_HEADER] === undefined && request.context) {
      const fromBody = correlationIdFromBody(request.body);
      if (fromBody !== undefined) {
        request.context.adoptCorrelationId(fromBody);
        reply.header('X-Correlation-Id', fromBody);
      }
    }
    done();
  });

  // One place for every route: a U+0000 in any string of the body, the query or the path is a 400 naming it.
  fastify.addHook('preValidation', refuseNulCharacters);

  // Matched routes are finished by their own onResponse hook (above); this one covers the 404 handler.
  fastify.addHook('onResponse', (request: TimedRequest, reply, done) => {
    if (request.is404) finish(request, reply, 'unmatched');
    done();
  });

  function setUnmatchedHeaders(reply: FastifyReply, context: RequestContext): void {
    unmatchedHeaders['x-correlation-id'] = context.correlationId;
    reply.headers(unmatchedHeaders);
  }

  function finish(request: TimedRequest, reply: FastifyReply, route: string): void {
    inFlight.delete(request);
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
}

/**
 * Who may call the route: its declared rule (auth/scopes.ts), else admin only. Routes added by plugins rather than
 * controllers are the documentation (Swagger UI) and CORS preflights, which are public.
 */
function accessRuleOfRoute(route: { config?: unknown; url: string; method: string | string[] }): AccessRule {
  const declared = accessRuleOf(route.config);
  if (declared !== undefined) return declared;
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  return isDocsRoute(route.url) || methods.every((method) => method === 'OPTIONS') ? PUBLIC : ADMIN_ONLY;
}

type Hook = (...args: never[]) => unknown;

function hooksOf(hooks: Hook | Hook[] | undefined): Hook[] {
  return hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];
}

/**
 * preParsing hook of routes marked `rawBody`: passes the payload through unchanged to Fastify's parser and keeps
 * a copy of its bytes in `request.rawBody`, set before the parser sees the end of the body. Fastify still
 * enforces the body limit and Content-Length on what flows through.
 */
function keepRawBody(
  request: FastifyRequest & { rawBody?: Buffer },
  _reply: FastifyReply,
  payload: Readable,
  done: (error: Error | null, payload: Readable) => void,
): void {
  const chunks: Buffer[] = [];
  const tee = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk);
      callback(null, chunk);
    },
    flush(callback) {
      request.rawBody = Buffer.concat(chunks);
      callback();
    },
  });
  payload.on('error', (error) => tee.destroy(error));
  done(null, payload.pipe(tee));
}

/**
 * preParsing hook of routes that take a text body type (RouteLimits textBodies): any other content type, JSON
 * included, or none is 415 before the body is read.
 */
function onlyMediaTypes(mediaTypes: readonly string[]) {
  const accepted = new Set(mediaTypes.map((type) => type.toLowerCase()));
  const expected = mediaTypes.join(' or ');
  return (
    request: FastifyRequest,
    _reply: FastifyReply,
    payload: Readable,
    done: (error: Error | null, payload?: Readable) => void,
  ): void => {
    const header = request.headers['content-type'];
    const essence = (header ?? '').split(';')[0].trim().toLowerCase();
    if (accepted.has(essence)) {
      done(null, payload);
      return;
    }
    done(
      new PlatformError(
        PlatformErrorCode.UnsupportedMediaType,
        `Content type ${header ?? '(none)'} is not supported; send ${expected}.`,
      ),
    );
  };
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
