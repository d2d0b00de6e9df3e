// Idempotency-Key (draft-ietf-httpapi-idempotency-key-header) on the POSTs that create things, marked
// `@Idempotent()`. A preHandler (after authentication, the body parsed) looks the caller's key up (decideKey):
// answered before → the same answer again; another request under the key → 422; unknown → the request carries an
// IdempotentWrite, which the creating service claims and completes with the rendered answer in the transaction that
// creates the resource (src/database/transaction.ts): the answer commits with the write, or neither does, so a
// retry after any crash replays it. The onSend hook sends exactly what was stored. Other answers leave the key free
// (429, 503 and 507 stored nothing; a 4xx rolled the claim back with the rest). Keys are scoped to the API key and
// the route. See docs/decisions.md ("Idempotency-Key") and docs/failure-modes.md (what a client does with a 409).
import { createHash } from 'node:crypto';
import { applyDecorators } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { EntityManager } from 'typeorm';
import { isUniqueViolation } from '../database/constraint-errors.js';
import type { AuthenticatedRequest } from '../auth/principal.js';
import type { TransactionalRecord } from '../database/transaction.js';
import { PlatformError, PlatformErrorCode } from '../errors/api-error.js';
import type { WithRequestContext } from '../logging/request-context.js';
import { IdempotencyKeyRecord } from './entities/idempotency-key.entity.js';
import {
  databaseNow,
  serialiseAnswer,
  storedAnswerOf,
  storedColumnsOf,
  type IdempotencyStore,
  type RecordId,
  type StoredAnswer,
} from './idempotency-store.js';
import { appendRouteHooks } from './plugins/route-hooks.js';
import { mergeRouteConfig } from '../route-config/route-config.js';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
const HEADER = 'idempotency-key';
const IDEMPOTENT = 'platformIdempotent';
export const MAX_KEY_LENGTH = 255;

/**
 * Marks a creating POST as taking an Idempotency-Key (route config, read by the onRoute hook below) and documents
 * the header. The service behind it must write `idempotentWriteOf(request)?.answeredBy(render)` in its transaction.
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
        'with another request it is 422. Kept 24 h, per API key and operation. Use a new value for every new ' +
        'request, e.g. a fresh UUID (`"8e03978e-40d5-43e8-bc93-6894a57f9324"`); the document gives no example ' +
        'value, so that a tool filling in examples never reuses one key for different requests.',
      schema: { type: 'string', maxLength: MAX_KEY_LENGTH + 2 },
    }),
  );

/** What a creating route answers, rendered from its service's result inside the write's transaction. */
export interface RenderedAnswer<B = unknown> {
  statusCode: number;
  /** Lower-case names; those a replay repeats are kept (serialiseAnswer). */
  headers?: Record<string, string>;
  /** A JSON value. */
  body: B;
}

/**
 * The request's claim on its Idempotency-Key; absent when it sent none. The controller hands the service
 * `answeredBy(render)`, a record the service gives to `inTransaction` (src/database/transaction.ts): the key is
 * claimed (`pending`) before the work and made `done` with the rendered answer after it, in the same transaction —
 * so a committed write always has its answer, and a retry after any crash replays it.
 */
export class IdempotentWrite {
  /** The answer stored with the write; the one sent (onSend), so the first answer and every replay are one. */
  answer?: StoredAnswer;

  constructor(
    readonly id: RecordId,
    readonly fingerprint: string,
  ) {}

  answeredBy<R>(render: (result: R) => RenderedAnswer): TransactionalRecord<R> {
    return {
      claimIn: (manager) => this.claimIn(manager),
      completeIn: (manager, result) => this.completeIn(manager, serialiseAnswer(render(result))),
    };
  }

  private async claimIn(manager: EntityManager): Promise<void> {
    try {
      await manager.insert(IdempotencyKeyRecord, {
        ...this.id,
        fingerprint: this.fingerprint,
        state: 'pending',
        statusCode: null,
        responseHeaders: null,
        responseBody: null,
        createdAt: () => databaseNow(manager.connection.options.type),
        completedAt: null,
      });
    } catch (error) {
      // Another request with the key committed first (PostgreSQL waited for its transaction to end).
      if (isUniqueViolation(error)) throw takenMeanwhile();
      throw error;
    }
  }

  private async completeIn(manager: EntityManager, answer: StoredAnswer): Promise<void> {
    const result = await manager.update(
      IdempotencyKeyRecord,
      { ...this.id, state: 'pending' },
      { state: 'done', ...storedColumnsOf(answer), completedAt: new Date() },
    );
    // The claim is this transaction's own row; not finding it would commit a write without its answer.
    if (result.affected === 0) throw new Error('Idempotency-Key: the claimed record is gone');
    this.answer = answer;
  }
}

interface IdempotentRequest extends AuthenticatedRequest, WithRequestContext {
  idempotentWrite?: IdempotentWrite;
}

export function idempotentWriteOf(request: FastifyRequest): IdempotentWrite | undefined {
  return (request as IdempotentRequest).idempotentWrite;
}

/** Sets a rendered answer's headers on the reply and gives its body to return (Nest serialises it). */
export function renderedBody<B>(reply: FastifyReply, answer: RenderedAnswer<B>): B {
  void reply.code(answer.statusCode);
  if (answer.headers !== undefined) void reply.headers(answer.headers);
  return answer.body;
}

/** What a request under a key the store knows (or not) gets: the key's states, as one decision. */
export type KeyDecision =
  | { action: 'execute' }
  | { action: 'replay'; answer: StoredAnswer }
  | { action: 'mismatch' }
  | { action: 'answer-lost'; at: Date };

/**
 * `null` (unknown, or claimed by a transaction not yet committed, which no other transaction sees) → carry it out;
 * the claim then waits for that transaction at the primary key. `done` → its answer again, if the request is the
 * same. `pending` committed → never written by this version, where a claim commits only with its answer: an
 * earlier version committed the write first and the answer after it, and lost the answer at a crash. Its write is
 * stored, so it is not carried out again; that is said at once, as no request is left that could still finish it.
 */
export function decideKey(found: IdempotencyKeyRecord | null, fingerprint: string): KeyDecision {
  if (found === null) return { action: 'execute' };
  if (found.fingerprint !== fingerprint) return { action: 'mismatch' };
  const answer = storedAnswerOf(found);
  if (answer !== undefined) return { action: 'replay', answer };
  return { action: 'answer-lost', at: found.createdAt };
}

/** The onRoute hook (configure-http.ts): adds the preHandler and onSend hooks to the routes marked @Idempotent(). */
export function idempotencyOnRoute(store: IdempotencyStore) {
  return (route: RouteOptions): void => {
    if ((route.config as Record<string, unknown> | undefined)?.[IDEMPOTENT] !== true) return;
    const routeName = `${String(route.method)} ${route.url}`;
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
          const decision = decideKey(found, fingerprint);
          switch (decision.action) {
            case 'execute':
              request.idempotentWrite = new IdempotentWrite(id, fingerprint);
              return done();
            case 'mismatch':
              return done(mismatch());
            case 'answer-lost':
              return done(answerLost(decision.at));
            case 'replay':
              void reply
                .code(decision.answer.statusCode)
                .headers({ ...decision.answer.headers, 'idempotent-replayed': 'true' })
                .send(decision.answer.body);
          }
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
        if (write === undefined || reply.statusCode < 200 || reply.statusCode >= 300)
          return done(null, payload);
        const answer = write.answer;
        if (answer === undefined) {
          // A route marked @Idempotent() whose service did not complete the record: a defect, said loudly.
          request.context?.log.error(
            { route: routeName },
            'Idempotency-Key: a 2xx answer was not stored with its write; a retry would carry it out again',
          );
          return done(null, payload);
        }
        // What is sent is what was stored: the first answer and every replay are the same bytes.
        void reply.headers(answer.headers);
        done(null, answer.body);
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

function takenMeanwhile(): PlatformError {
  return new PlatformError(
    PlatformErrorCode.IdempotencyKeyInUse,
    `Another request with this ${IDEMPOTENCY_HEADER} was being carried out; nothing was done for this one. ` +
      'Retry after Retry-After to get its answer.',
  );
}

function answerLost(at: Date): PlatformError {
  return new PlatformError(
    PlatformErrorCode.IdempotencyKeyAnswerLost,
    `A request with this ${IDEMPOTENCY_HEADER} was carried out at ${at.toISOString()} by an earlier version of ` +
      'the service, which lost its answer; what it created exists and it is not carried out again. Look the ' +
      'resource up, or send a new key to create another.',
  );
}
