// Per-request context: the correlation id (X-Correlation-Id) and a logger whose every line carries it.
//
// Passed explicitly (Fastify's `request.context`, the `@Ctx()` parameter of a handler, then as an argument) rather
// than through AsyncLocalStorage: on Node 20 ALS installs promise hooks that run for every promise of every
// request, measured at ~20 µs of ~120 µs a request on the load benchmark (bench/load.mjs), for the few requests
// that log anything. Work that outlives its request (webhook retries) keeps the logger it was given.
import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Logger } from 'pino';

export class RequestContext {
  private logger: Logger | undefined;
  /** The W3C trace id of the request's span, when tracing is on (src/tracing): on every log line as `trace_id`. */
  private trace: string | undefined;

  constructor(
    private id: string,
    private readonly root: Logger,
  ) {}

  get correlationId(): string {
    return this.id;
  }

  /** Without the header, the body's Context.CorrelationId names the request (set before the handler). */
  adoptCorrelationId(id: string): void {
    this.id = id;
    this.logger = undefined;
  }

  get traceId(): string | undefined {
    return this.trace;
  }

  /** Set by the tracing hook before any handler logs (src/http/plugins/tracing.plugin.ts). */
  setTraceId(traceId: string): void {
    this.trace = traceId;
    this.logger = undefined;
  }

  /** The request's logger: a child of the root logger with `correlationId` on every line, made on first use. */
  get log(): Logger {
    return (this.logger ??= this.root.child(
      this.trace === undefined
        ? { correlationId: this.id }
        : { correlationId: this.id, trace_id: this.trace },
    ));
  }

  /** The request's logger with an area's binding, for a service that logs on the request's behalf. */
  logFor(area: string): Logger {
    return this.log.child({ area });
  }
}

/** What Fastify's request carries from the first hook on (src/http/plugins/tracing.plugin.ts). */
export interface WithRequestContext {
  context?: RequestContext;
}

/** A handler parameter: the request's context, for its correlation id and logger. */
export const Ctx = createParamDecorator(
  (_data: unknown, host: ExecutionContext): RequestContext =>
    // Set by the first onRequest hook of every request (src/http/plugins/correlation.plugin.ts).
    host.switchToHttp().getRequest<WithRequestContext>().context!,
);
