// Answers Fastify and Node's HTTP parser make before any route runs, in the envelope — SCIM's
// error schema on SCIM paths — with X-Correlation-Id, like every other answer:
// - frameworkErrors: a path that is not valid percent-encoding (FST_ERR_BAD_URL, 400), a path parameter over
//   maxParamLength (FST_ERR_MAX_PARAM_LENGTH) and a failed route constraint (FST_ERR_ASYNC_CONSTRAINT);
// - clientErrorHandler: what Node's parser refuses before Fastify sees a request: a request head over
//   MAX_REQUEST_HEAD_BYTES (431), a receive time-out (408 from Node: answered 503 RequestTimeout as the service's
//   own time-out is), and malformed HTTP (400), always in the envelope. The socket is closed after it, as Node
//   does.
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AllExceptionsFilter } from '../errors/all-exceptions.filter.js';
import { PLATFORM_STATUS, PlatformErrorCode, RETRY_AFTER_SECONDS } from '../errors/api-error.js';
import type { ErrorEnvelope } from '../errors/envelope.js';

interface RouterFailure {
  readonly code: PlatformErrorCode;
  readonly message: string;
  readonly field?: string;
}

function routerFailure(error: { code?: string; message: string }): RouterFailure {
  if (error.code === 'FST_ERR_BAD_URL')
    return {
      code: PlatformErrorCode.ValidationFailed,
      message: 'The request path is not valid percent-encoding (RFC 3986 §2.1).',
      field: 'path',
    };
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH')
    return {
      code: PlatformErrorCode.ValidationFailed,
      message: 'A path parameter is longer than the service reads.',
      field: 'path',
    };
  return { code: PlatformErrorCode.ValidationFailed, message: 'The request could not be routed.' };
}

function envelopeOf(failure: RouterFailure, correlationId: string): ErrorEnvelope {
  return {
    Succeeded: false,
    Message: failure.message,
    Code: failure.code,
    ...(failure.field !== undefined ? { Errors: [{ Field: failure.field, Message: failure.message }] } : {}),
    CorrelationId: correlationId,
  };
}

/** The body and content type of a router-made answer: the envelope, or what the path's area renders (SCIM). */
function rendered(
  url: string,
  status: number,
  envelope: ErrorEnvelope,
): { body: string; contentType: string } {
  const request = { url, headers: {} } as FastifyRequest;
  const area = AllExceptionsFilter.render(request, status, envelope);
  return area !== undefined
    ? { body: JSON.stringify(area.body), contentType: area.contentType }
    : { body: JSON.stringify(envelope), contentType: 'application/json; charset=utf-8' };
}

/** Fastify's `frameworkErrors` option. */
export function frameworkErrors(
  error: { code?: string; message: string },
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const failure = routerFailure(error);
  const status = PLATFORM_STATUS[failure.code];
  const correlationId = String(request.id);
  const { body, contentType } = rendered(
    request.raw.url ?? request.url,
    status,
    envelopeOf(failure, correlationId),
  );
  void reply
    .code(status)
    .header('X-Correlation-Id', correlationId)
    .header('Content-Type', contentType)
    .send(body);
}

/** Fastify's `clientErrorHandler` option. */
export function clientErrorHandler(
  error: Error & { code?: string; rawPacket?: unknown },
  socket: Socket,
): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const failure: RouterFailure =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? {
          code: PlatformErrorCode.RequestHeaderFieldsTooLarge,
          message: 'The request line and headers are larger than 64 KiB.',
        }
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? { code: PlatformErrorCode.RequestTimeout, message: 'The request was not received in time.' }
        : { code: PlatformErrorCode.ValidationFailed, message: 'The request is not valid HTTP/1.1.' };
  const status = PLATFORM_STATUS[failure.code];
  const correlationId = randomUUID();
  // The envelope on every path: what the parser read of the request line is not reliably there to pick SCIM's.
  const body = JSON.stringify(envelopeOf(failure, correlationId));
  const contentType = 'application/json; charset=utf-8';
  const retryAfter = RETRY_AFTER_SECONDS.get(failure.code);
  if (socket.writable)
    socket.write(
      `HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : status === 503 ? 'Service Unavailable' : 'Bad Request'}\r\n` +
        `Content-Type: ${contentType}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Correlation-Id: ${correlationId}\r\n` +
        (retryAfter !== undefined ? `Retry-After: ${retryAfter}\r\n` : '') +
        `Connection: close\r\n\r\n${body}`,
    );
  socket.destroy(error);
}
