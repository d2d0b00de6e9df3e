// Fastify hooks of a traced request: added per route only when tracing is on (src/http/plugins/tracing.plugin.ts). The incoming
// `traceparent` is continued (a new trace otherwise), the span is named by the route template, and the rest of the
// request (auth, handler, database queries, outbound calls) runs inside its context.
import type * as Api from '@opentelemetry/api';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { WithRequestContext } from '../logging/request-context.js';
import type { Tracing } from './tracing.js';

type TracedRequest = FastifyRequest & WithRequestContext & { span?: Api.Span };
type Hook = (request: TracedRequest, reply: FastifyReply, done: () => void) => void;

export interface HttpTracer {
  onRequest(method: string | string[], route: string): Hook;
  onResponse: Hook;
}

export function httpTracer(t: Tracing): HttpTracer {
  const { api, tracer } = t;
  const getter: Api.TextMapGetter<FastifyRequest['headers']> = {
    keys: (carrier) => Object.keys(carrier),
    get: (carrier, key) => carrier[key],
  };
  return {
    onRequest: (_method, route) => (request, _reply, done) => {
      const parent = api.propagation.extract(api.ROOT_CONTEXT, request.headers, getter);
      const span = tracer.startSpan(
        `${request.method} ${route}`,
        {
          kind: api.SpanKind.SERVER,
          attributes: {
            'http.request.method': request.method,
            'http.route': route,
            'url.path': request.url.split('?')[0],
          },
        },
        parent,
      );
      request.span = span;
      request.context?.setTraceId(span.spanContext().traceId);
      api.context.with(api.trace.setSpan(parent, span), done);
    },
    onResponse: (request, reply, done) => {
      const span = request.span;
      if (span !== undefined) {
        span.setAttribute('http.response.status_code', reply.statusCode);
        if (reply.statusCode >= 500) span.setStatus({ code: api.SpanStatusCode.ERROR });
        span.end();
      }
      done();
    },
  };
}
