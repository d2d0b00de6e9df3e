// OpenTelemetry tracing, started only when OTEL_EXPORTER_OTLP_ENDPOINT (or ..._TRACES_ENDPOINT) is set.
// Off, nothing is loaded: no SDK, no context manager (AsyncLocalStorage would cost every promise of every request,
// see src/logging/request-context.ts), no hooks; `traced` and `tracedFetch` call straight through.
// On, a NodeTracerProvider with the AsyncLocalStorage context manager and the W3C trace-context propagator exports
// over OTLP/HTTP (JSON) in batches; the exporter reads the standard OTEL_EXPORTER_OTLP_* variables itself.
import type * as Api from '@opentelemetry/api';
import { APP_VERSION } from '../common/app-version.js';

export interface Tracing {
  readonly api: typeof Api;
  readonly tracer: Api.Tracer;
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

let active: Tracing | undefined;

/** The running tracing, or undefined when tracing is off. */
export function tracing(): Tracing | undefined {
  return active;
}

export function tracingWanted(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.toLowerCase() === 'true') return false;
  if (env.OTEL_TRACES_EXPORTER !== undefined && env.OTEL_TRACES_EXPORTER.toLowerCase() === 'none')
    return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/** Starts tracing once per process when the environment asks for it; later calls return the same instance. */
export async function startTracing(env: NodeJS.ProcessEnv = process.env): Promise<Tracing | undefined> {
  if (active !== undefined || !tracingWanted(env)) return active;
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/json';
  if (protocol !== 'http/json')
    throw new Error(
      `OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not supported; use http/json (OTLP over HTTP, JSON)`,
    );
  const api = await import('@opentelemetry/api');
  const { NodeTracerProvider, BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-node');
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
  const { resourceFromAttributes } = await import('@opentelemetry/resources');
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({
      'service.name': env.OTEL_SERVICE_NAME ?? 'platform-api',
      'service.version': APP_VERSION,
    }),
    // Batch size, delay and queue come from OTEL_BSP_* (the processor reads them).
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  // AsyncLocalStorage context manager and the W3C traceparent/tracestate propagator.
  provider.register();
  active = {
    api,
    tracer: api.trace.getTracer('platform-api', APP_VERSION),
    forceFlush: () => provider.forceFlush(),
    shutdown: async () => {
      await provider.shutdown();
      active = undefined;
    },
  };
  return active;
}

/** Runs `work` in a span (child of the active one) when tracing is on; otherwise just runs it. */
export async function traced<T>(
  name: string,
  attributes: Api.Attributes,
  work: () => Promise<T>,
  kind: 'internal' | 'client' = 'internal',
): Promise<T> {
  const t = active;
  if (t === undefined) return work();
  return t.tracer.startActiveSpan(
    name,
    { attributes, kind: kind === 'client' ? t.api.SpanKind.CLIENT : t.api.SpanKind.INTERNAL },
    async (span) => {
      try {
        return await work();
      } catch (error) {
        span.recordException(error instanceof Error ? error : String(error));
        span.setStatus({ code: t.api.SpanStatusCode.ERROR });
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

/** fetch with a CLIENT span and the outbound `traceparent` when tracing is on; plain fetch otherwise. */
export function tracedFetch(name: string, url: string, init: RequestInit): Promise<Response> {
  const t = active;
  if (t === undefined) return fetch(url, init);
  const target = new URL(url);
  return traced(
    name,
    {
      'http.request.method': init.method ?? 'GET',
      'server.address': target.hostname,
      'url.path': target.pathname,
    },
    async () => {
      const headers = new Headers(init.headers);
      const carrier: Record<string, string> = {};
      t.api.propagation.inject(t.api.context.active(), carrier);
      for (const [key, value] of Object.entries(carrier)) headers.set(key, value);
      const response = await fetch(url, { ...init, headers });
      const span = t.api.trace.getActiveSpan();
      span?.setAttribute('http.response.status_code', response.status);
      if (response.status >= 500) span?.setStatus({ code: t.api.SpanStatusCode.ERROR });
      return response;
    },
    'client',
  );
}
