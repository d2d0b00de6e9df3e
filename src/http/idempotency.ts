// Idempotency-Key (draft-ietf-httpapi-idempotency-key-header) on the POSTs that create things, marked
// `@Idempotent()`. A preHandler (after authentication, the body parsed) looks the caller's key up: answered before
// → the same answer again; another request under the key → 422; still running → 409; unknown → the request
// carries an IdempotentWrite that the creating service writes in the transaction that creates the resource
// (src/database/transaction.ts), so a committed resource always has its key, even if the process dies before
// answering. An onSend hook stores the 2xx answer on the record; other answers leave the key free (429, 503 and 507
// stored nothing; a 4xx rolled the record back with the rest). Keys are scoped to the API key and the route.
import { createHash } from 'node:crypto';
import { applyDecorators } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { QueryFailedError, type EntityManager } from 'typeorm';
import type { AuthenticatedRequest } from '../auth/api-key.auth.js';
import type { AppConfig } from '../config/config.js';
import type { TransactionalRecord } from '../database/transaction.js';
import { PlatformError, PlatformErrorCode } from '../errors/api-error.js';
import type { WithRequestContext } from '../logging/request-context.js';
import { IdempotencyKeyRecord } from './entities/idempotency-key.entity.js';
import { storedAnswerOf, type IdempotencyStore, type RecordId } from './idempotency-store.js';
import { appendRouteHooks } from './plugins/route-hooks.js';
import { mergeRouteConfig } from './route-config.js';
import { routeLimitsOf } from './route-limits.js';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
const HEADER = 'idempotency-key';
const IDEMPOTENT = 'platformIdempotent';
export const MAX_KEY_LENGTH = 255;
/** Headers of the first answer that a replay repeats. */
const KEPT_HEADERS = ['content-type', 'location', 'etag', 'content-location'] as const;
/** A pending key older than the request time-out by this much belongs to a request that will never answer. */
const STALE_MARGIN_MS = 10_000;
/** With REQUEST_TIMEOUT_MS=0 (no time-out) a request counts as gone after this long. */
const NO_TIMEOUT_STALE_MS = 600_000;

/**
 * Marks a creating POST as taking an Idempotency-Key (route config, read by the onRoute hook below) and documents
 * the header. The service behind it must write `idempotentWriteOf(request)` in its transaction.
 */
export const Idempotent = (): MethodDecorator =>
  applyDecorators(
    (_target: object, _key: string | symbol, descriptor: PropertyDescriptor) =>
      mergeRouteConfig(descriptor.value as (...args: never[]) => unknown, { [IDEMPOTENT]: true }),
    ApiHeader({
      name: IDEMPOTENCY_HEADER,
      required: false,
      description:
        'A unique value (a quoted string, or a bare token such as a UUID; at most 255 characters) that makes a ' +
        'retry safe: the same key with the same request answers the first answer again and creates nothing; ' +
        'with another request it is 422. Kept 24 h, per API key and operation.',
      schema: {
        type: 'string',
        maxLength: MAX_KEY_LENGTH + 2,
        example: '"8e03978e-40d5-43e8-bc93-6894a57f9324"',
      },
    }),
  );

/** The record a creating request writes in its transaction; absent when it sent no Idempotency-Key. */
export class IdempotentWrite implements TransactionalRecord {
  constructor(
    readonly id: RecordId,
    readonly fingerprint: string,
  ) {}

  async writeIn(manager: EntityManager): Promise<void> {
    try {
      await manager.insert(IdempotencyKeyRecord, {
        ...this.id,
        fingerprint: this.fingerprint,
        state: 'pending',
        statusCode: null,
        responseHeaders: null,
        responseBody: null,
        createdAt: new Date(),
        completedAt: null,
      });
    } catch (error) {
      // Another request with the key committed first (or is committing: PostgreSQL waited for it).
      if (isKeyTaken(error)) throw inProgress();
      throw error;
    }
  }
}

interface IdempotentRequest extends AuthenticatedRequest, WithRequestContext {
  idempotentWrite?: IdempotentWrite;
}

export function idempotentWriteOf(request: FastifyRequest): IdempotentWrite | undefined {
  return (request as IdempotentRequest).idempotentWrite;
}

/** The onRoute hook (configure-http.ts): adds the preHandler and onSend hooks to the routes marked @Idempotent(). */
export function idempotencyOnRoute(store: IdempotencyStore, config: AppConfig) {
  return (route: RouteOptions): void => {
    if ((route.config as Record<string, unknown> | undefined)?.[IDEMPOTENT] !== true) return;
    const routeName = `${String(route.method)} ${route.url}`;
    const timeoutMs =
      config.requestTimeoutMs > 0
        ? config.requestTimeoutMs + (routeLimitsOf(route.config)?.extraTimeoutMs ?? 0)
        : NO_TIMEOUT_STALE_MS;
    appendRouteHooks(
      route,
      'preHandler',
      (request: IdempotentRequest, reply: FastifyReply, done: (error?: Error) => void) => {
        const header = request.headers[HEADER];
        if (header === undefined) return done();
        let key: string;
        try {
          key = parseIdempotencyKey(header);
        } catch (error) {
          return done(error as Error);
        }
        const id = { caller: request.principal?.keyId ?? 'anonymous', route: routeName, key };
        const fingerprint = fingerprintOf(request.method, route.url, request.query, request.body);
        store.find(id).then((found) => {
          if (found === null) {
            request.idempotentWrite = new IdempotentWrite(id, fingerprint);
            return done();
          }
          if (found.fingerprint !== fingerprint) return done(mismatch());
          const answer = storedAnswerOf(found);
          if (answer === undefined) {
            const stale = Date.now() - found.createdAt.getTime() > timeoutMs + STALE_MARGIN_MS;
            return done(stale ? carriedOut(found.createdAt) : inProgress());
          }
          void reply
            .code(answer.statusCode)
            .headers({ ...answer.headers, 'idempotent-replayed': 'true' })
            .send(answer.body);
        }, done);
      },
    );
    appendRouteHooks(
      route,
      'onSend',
      (
        request: IdempotentRequest,
        reply: FastifyReply,
        payload: unknown,
        done: (error: Error | null, payload: unknown) => void,
      ) => {
        const write = request.idempotentWrite;
        // Only final answers are kept: 2xx (a 4xx/5xx rolled the record back, or stored nothing).
        if (write === undefined || reply.statusCode < 200 || reply.statusCode >= 300)
          return done(null, payload);
        const body =
          typeof payload === 'string'
            ? payload
            : Buffer.isBuffer(payload)
              ? payload.toString('utf8')
              : undefined;
        if (body === undefined) return done(null, payload);
        const headers: Record<string, string> = {};
        for (const name of KEPT_HEADERS) {
          const value = reply.getHeader(name);
          if (value !== undefined) headers[name] = String(value);
        }
        store.complete(write.id, { statusCode: reply.statusCode, headers, body }).then(
          () => done(null, payload),
          (error: unknown) => {
            // The resource is stored; a retry gets 409 (in progress, later "carried out") instead of the answer.
            request.context?.log.warn({ err: error }, 'Idempotency-Key: the answer could not be stored');
            done(null, payload);
          },
        );
      },
    );
  };
}

/**
 * The header's value: an RFC 8941 sf-string (`"…"`, printable ASCII with `\"` and `\\` escapes), as the draft
 * says, or a bare token (tchar, `:` and `/`, e.g. an unquoted UUID) as many clients send; 1 to 255 characters.
 */
export function parseIdempotencyKey(header: string | string[]): string {
  const value = Array.isArray(header) ? undefined : header.trim();
  let key: string | undefined;
  if (value !== undefined && /^"(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*"$/.test(value)) {
    key = value.slice(1, -1).replace(/\\(["\\])/g, '$1');
  } else if (value !== undefined && /^[!#$%&'*+\-.^_`|~0-9A-Za-z:/]+$/.test(value)) {
    key = value;
  }
  if (key === undefined || key.length === 0 || key.length > MAX_KEY_LENGTH) {
    throw PlatformError.validation([
      {
        Field: IDEMPOTENCY_HEADER,
        Message: `${IDEMPOTENCY_HEADER} must be one quoted string (RFC 8941) or token of 1 to ${MAX_KEY_LENGTH} characters`,
      },
    ]);
  }
  return key;
}

/**
 * SHA-256 of what makes two requests the same: method, route, query and body — JSON with its object keys sorted
 * (a client may serialise them in another order), or the octets of a text body (text/calendar).
 */
export function fingerprintOf(method: string, route: string, query: unknown, body: unknown): string {
  const hash = createHash('sha256');
  hash.update(`${method}\n${route}\n${canonicalJson(query ?? {})}\n`);
  if (Buffer.isBuffer(body)) hash.update(body);
  else if (typeof body === 'string') hash.update(body);
  else hash.update(canonicalJson(body ?? null));
  return hash.digest('hex');
}

export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([name, item]) => `${JSON.stringify(name)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function mismatch(): PlatformError {
  return new PlatformError(
    PlatformErrorCode.IdempotencyKeyMismatch,
    `This ${IDEMPOTENCY_HEADER} was used with another request (method, path, query or body); use a new key for a new request.`,
  );
}

function inProgress(): PlatformError {
  return new PlatformError(
    PlatformErrorCode.IdempotencyKeyInUse,
    `A request with this ${IDEMPOTENCY_HEADER} is still in progress; retry after Retry-After to get its answer.`,
  );
}

function carriedOut(at: Date): PlatformError {
  return new PlatformError(
    PlatformErrorCode.IdempotencyKeyInUse,
    `A request with this ${IDEMPOTENCY_HEADER} was carried out at ${at.toISOString()} and what it created exists, ` +
      'but its answer was lost; it is not carried out again. Look the resource up, or send a new key to create another.',
  );
}

/** The key's primary key is taken: PostgreSQL 23505, SQLite's constraint codes. */
function isKeyTaken(error: unknown): boolean {
  if (!(error instanceof QueryFailedError)) return false;
  const code = (error.driverError as { code?: unknown } | undefined)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}
