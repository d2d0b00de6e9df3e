// Correlation and deadlines: every request gets its RequestContext (correlation id from X-Correlation-Id, else
// Context.CorrelationId of the body, else generated) and the headers every answer carries, set with one
// call; and, with REQUEST_TIMEOUT_MS, a deadline: unanswered in time is 503 RequestTimeout.
import fp from 'fastify-plugin';
import type { FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { AppConfig } from '../../config/config.js';
import { PlatformErrorCode, RETRY_AFTER_SECONDS } from '../../errors/api-error.js';
import { RequestContext, type WithRequestContext } from '../../logging/request-context.js';
import { routeLimitsOf } from '../../route-config/route-limits.js';
import { apiSecurityHeaders, docsSecurityHeaders, isDocsRoute } from '../security-headers.js';
import { appendRouteHooks } from './route-hooks.js';

export const CORRELATION_HEADER = 'x-correlation-id';
export const CORRELATION_ID = /^[\w.:@/+=-]{1,128}$/;

export interface TimedRequest extends FastifyRequest, WithRequestContext {
  receivedAt?: number;
}

/** How often the request deadlines are checked: a time-out answers within this much of REQUEST_TIMEOUT_MS. */
const DEADLINE_SWEEP_MS = 100;

export interface CorrelationOptions {
  config: AppConfig;
  logger: Logger;
}

const correlation: FastifyPluginCallback<CorrelationOptions> = (fastify, { config, logger }, done) => {
  // The headers every answer carries: a per-route object whose correlation id slot is overwritten before each use
  // (reply.headers() copies the values).
  const apiHeaders = config.securityHeaders ? apiSecurityHeaders() : {};
  const docsHeaders = config.securityHeaders ? docsSecurityHeaders() : {};
  const headerSet = (url: string): Record<string, string> => ({
    [CORRELATION_HEADER]: '',
    ...(isDocsRoute(url) ? docsHeaders : apiHeaders),
  });
  const unmatchedHeaders = headerSet('');

  // Request time-out: our own deadline rather than Fastify's handlerTimeout, which on Node 20 is cleared as soon as
  // a POST body has been read (so it never fired for POST routes) and costs an AbortController per request. One
  // timer sweeps every in-flight request instead of one timer per request.
  const inFlight = new Map<FastifyRequest, { due: number; reply: FastifyReply; context: RequestContext }>();

  fastify.addHook('onRoute', (route) => {
    const limits = routeLimitsOf(route.config);
    const timeoutMs =
      config.requestTimeoutMs > 0 ? config.requestTimeoutMs + (limits?.extraTimeoutMs ?? 0) : 0;
    const headers = headerSet(route.url);
    appendRouteHooks(route, 'onRequest', (request: TimedRequest, reply: FastifyReply, done: () => void) => {
      headers[CORRELATION_HEADER] = request.context!.correlationId;
      reply.headers(headers);
      if (timeoutMs > 0 && !reply.sent) {
        inFlight.set(request, { due: performance.now() + timeoutMs, reply, context: request.context! });
      }
      done();
    });
  });

  fastify.addHook('onRequest', (request: TimedRequest, reply, done) => {
    request.receivedAt = performance.now();
    const context = new RequestContext(String(request.id), logger);
    request.context = context;
    // A matched route sets its own headers (above); the not-found handler has no route hooks.
    if (request.is404) {
      unmatchedHeaders[CORRELATION_HEADER] = context.correlationId;
      reply.headers(unmatchedHeaders);
    }
    done();
  });

  // Without the header, a body's Context.CorrelationId names the request (clients put it there).
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

  if (config.requestTimeoutMs <= 0) return done();
  fastify.addHook('onResponse', (request, _reply, done) => {
    inFlight.delete(request);
    done();
  });
  const sweeper = setInterval(() => {
    // Monotonic: a step of the wall clock neither times every request out nor lets them run for hours.
    const now = performance.now();
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
      void entry.reply
        .code(503)
        .header('Retry-After', String(RETRY_AFTER_SECONDS.get(PlatformErrorCode.RequestTimeout)))
        .send({
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
  done();
};

export const correlationPlugin = fp(correlation, { name: 'platform-correlation', fastify: '5.x' });

function correlationIdFromBody(body: unknown): string | undefined {
  // A raw body (the iCalendar import's Buffer) is no JSON object: Object.keys would list every octet.
  if (body === null || typeof body !== 'object' || Array.isArray(body) || ArrayBuffer.isView(body))
    return undefined;
  const contextKey = Object.keys(body).find((key) => key.toLowerCase() === 'context');
  const context = contextKey === undefined ? undefined : (body as Record<string, unknown>)[contextKey];
  if (context === null || typeof context !== 'object') return undefined;
  const idKey = Object.keys(context).find((key) => key.toLowerCase() === 'correlationid');
  const id = idKey === undefined ? undefined : (context as Record<string, unknown>)[idKey];
  return typeof id === 'string' && CORRELATION_ID.test(id) ? id : undefined;
}
