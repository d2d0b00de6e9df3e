// Tracing (src/tracing): a server span per request when OTEL_EXPORTER_OTLP_ENDPOINT is set. Off, the plugin adds
// no hook, so requests pay nothing.
import fp from 'fastify-plugin';
import type { FastifyPluginCallback } from 'fastify';
import type { HttpTracer } from '../../tracing/http-tracing.js';
import { appendRouteHooks } from './route-hooks.js';

export interface TracingOptions {
  tracer: HttpTracer | undefined;
}

const tracing: FastifyPluginCallback<TracingOptions> = (fastify, { tracer }, done) => {
  if (tracer === undefined) return done();
  fastify.addHook('onRoute', (route) => {
    appendRouteHooks(route, 'onRequest', tracer.onRequest(route.method, route.url));
    appendRouteHooks(route, 'onResponse', tracer.onResponse);
  });
  done();
};

export const tracingPlugin = fp(tracing, { name: 'platform-tracing', fastify: '5.x' });
