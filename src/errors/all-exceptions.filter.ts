// The one global filter: every error leaves the service in the outcome envelope, and a 500 shows no stack
// but carries the correlation id. Built on HttpAdapterHost so it works on Fastify.
import { ArgumentsHost, Catch, HttpException, type ExceptionFilter } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { DatabaseFailure } from '../database/database-failures.js';
import type { DatabaseHealth } from '../database/database-health.js';
import type { WithRequestContext } from '../logging/request-context.js';
import { ApiError, PLATFORM_STATUS, PlatformErrorCode, RETRY_AFTER_SECONDS } from './api-error.js';
import type { ErrorEnvelope } from './envelope.js';

/** Errors that happened in other layers (Fastify's body parser, Nest's router) carry only a status. */
const CODE_BY_STATUS = new Map<number, PlatformErrorCode>(
  (Object.entries(PLATFORM_STATUS) as Array<[PlatformErrorCode, number]>)
    .filter(
      ([code]) =>
        code !== PlatformErrorCode.ServiceUnavailable &&
        code !== PlatformErrorCode.Overloaded &&
        code !== PlatformErrorCode.InternalError &&
        code !== PlatformErrorCode.DatabaseUnavailable &&
        code !== PlatformErrorCode.StorageFull,
    )
    .map(([code, status]) => [status, code]),
);

/**
 * What a client is told when the database failed, not the request: nothing was stored, and the same request may
 * be sent again (503/507 with Retry-After, never 500). The cause goes to the log once per outage (DatabaseHealth), not here.
 */
const DATABASE_FAILURES: Record<DatabaseFailure, { code: PlatformErrorCode; message: string }> = {
  'storage-full': {
    code: PlatformErrorCode.StorageFull,
    message: "The database's storage is full; nothing was stored. Retry after the time given in Retry-After.",
  },
  unavailable: {
    code: PlatformErrorCode.DatabaseUnavailable,
    message:
      'The database is unavailable (unreachable, restarting or overloaded); nothing was stored. Retry after the time given in Retry-After.',
  },
  // The same code (the set of codes is the contract's), a message that says what happened.
  busy: {
    code: PlatformErrorCode.DatabaseUnavailable,
    message:
      'The database is busy with another write and this request waited past its limit for it; nothing was stored. Retry after the time given in Retry-After.',
  },
};

interface StatusCarrier {
  statusCode?: unknown;
  status?: unknown;
  code?: unknown;
  message?: unknown;
}

/** A hook for areas that answer errors in their own schema (SCIM) even before routing (404, bad JSON). */
export type ErrorRenderer = (
  request: FastifyRequest,
  status: number,
  envelope: ErrorEnvelope,
) =>
  | {
      body: unknown;
      contentType: string;
    }
  | undefined;

@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private static readonly renderers: ErrorRenderer[] = [];

  static addRenderer(renderer: ErrorRenderer): void {
    AllExceptionsFilter.renderers.push(renderer);
  }

  /** The body an area renders for this error (SCIM's error on SCIM paths), or undefined for the envelope. */
  static render(request: FastifyRequest, status: number, envelope: ErrorEnvelope): ReturnType<ErrorRenderer> {
    return AllExceptionsFilter.renderers
      .map((render) => render(request, status, envelope))
      .find((result) => result !== undefined);
  }

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly logger: Logger,
    /** Classifies database failures (507/503, logged once per outage there); absent in bare test apps. */
    private readonly database?: DatabaseHealth,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const reply = http.getResponse<FastifyReply>();
    const request = http.getRequest<FastifyRequest>();
    const { status, envelope } = this.toEnvelope(exception, request);
    const rendered = AllExceptionsFilter.render(request, status, envelope);
    if (status === 401 && !reply.hasHeader('www-authenticate')) reply.header('WWW-Authenticate', 'Bearer');
    const retryAfter = RETRY_AFTER_SECONDS.get(envelope.Code ?? '');
    if (retryAfter !== undefined && !reply.hasHeader('retry-after'))
      reply.header('Retry-After', String(retryAfter));
    if (rendered) reply.header('Content-Type', rendered.contentType);
    this.adapterHost.httpAdapter.reply(reply, rendered ? rendered.body : envelope, status);
  }

  private toEnvelope(
    exception: unknown,
    request: FastifyRequest,
  ): { status: number; envelope: ErrorEnvelope } {
    const context = (request as WithRequestContext).context;
    const correlationId = context?.correlationId ?? String(request.id);
    if (exception instanceof ApiError) {
      return {
        status: exception.status,
        envelope: {
          Succeeded: false,
          Message: exception.message,
          Code: exception.code as string,
          ...exception.fields,
          ...(exception.fieldErrors ? { Errors: exception.fieldErrors } : {}),
          ...(exception.status >= 400 ? { CorrelationId: correlationId } : {}),
        },
      };
    }
    const failure = this.database?.observe(exception);
    if (failure !== undefined) {
      const { code, message } = DATABASE_FAILURES[failure];
      return {
        status: PLATFORM_STATUS[code],
        envelope: { Succeeded: false, Message: message, Code: code, CorrelationId: correlationId },
      };
    }
    const status = statusOf(exception);
    const code = CODE_BY_STATUS.get(status);
    if (code === undefined) {
      (context?.log ?? this.logger.child({ correlationId })).error(
        { err: exception, url: request.url, method: request.method },
        'Unhandled error',
      );
      return {
        status: 500,
        envelope: {
          Succeeded: false,
          Message: `An unexpected error occurred. Quote correlation id ${correlationId} when reporting it.`,
          Code: PlatformErrorCode.InternalError,
          CorrelationId: correlationId,
        },
      };
    }
    return {
      status,
      envelope: {
        Succeeded: false,
        Message: messageFor(code, exception, request),
        Code: code,
        ...(code === PlatformErrorCode.ValidationFailed
          ? { Errors: [{ Field: '', Message: messageFor(code, exception, request) }] }
          : {}),
        CorrelationId: correlationId,
      },
    };
  }
}

function statusOf(exception: unknown): number {
  if (exception instanceof HttpException) return exception.getStatus();
  const carrier = exception as StatusCarrier | null;
  const status = carrier?.statusCode ?? carrier?.status;
  return typeof status === 'number' && status >= 400 && status < 600 ? status : 500;
}

function messageFor(code: PlatformErrorCode, exception: unknown, request: FastifyRequest): string {
  switch (code) {
    case PlatformErrorCode.NotFound:
      return `No route or resource at ${request.method} ${request.url.split('?')[0]}.`;
    case PlatformErrorCode.PayloadTooLarge:
      return 'The request body is larger than the configured limit (BODY_LIMIT).';
    case PlatformErrorCode.RequestTimeout:
      return 'The request took longer than the configured time-out (REQUEST_TIMEOUT_MS).';
    case PlatformErrorCode.TooManyRequests:
      return 'Too many requests; retry after the time given in Retry-After.';
    case PlatformErrorCode.UnsupportedMediaType:
      return `Content type ${String(request.headers['content-type'] ?? '(none)')} is not supported; send application/json.`;
    case PlatformErrorCode.ValidationFailed: {
      const fastifyCode = (exception as StatusCarrier).code;
      if (fastifyCode === 'FST_ERR_CTP_EMPTY_JSON_BODY')
        return 'The request body is empty but JSON was declared.';
      if (exception instanceof SyntaxError || fastifyCode === 'FST_ERR_CTP_INVALID_JSON_BODY') {
        return 'The request body is not valid JSON.';
      }
      return exception instanceof Error ? exception.message : 'The request is invalid.';
    }
    case PlatformErrorCode.Unauthorized:
    case PlatformErrorCode.Forbidden:
    case PlatformErrorCode.Conflict:
    case PlatformErrorCode.InternalError:
    case PlatformErrorCode.ServiceUnavailable:
    case PlatformErrorCode.DatabaseUnavailable:
    case PlatformErrorCode.StorageFull:
    case PlatformErrorCode.IdempotencyKeyMismatch:
    case PlatformErrorCode.IdempotencyKeyInUse:
    case PlatformErrorCode.IdempotencyKeyAnswerLost:
    case PlatformErrorCode.Overloaded:
    case PlatformErrorCode.RequestHeaderFieldsTooLarge:
      return exception instanceof Error ? exception.message : code;
  }
}
