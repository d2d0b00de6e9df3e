// Every answer under /api/v1/scim that is an error leaves in the SCIM error schema (RFC 7644 §3.12), whoever
// raised it: this area's ScimError, the auth guard (401/403), Fastify's body parser (malformed JSON, 413, 415) or
// the router (404). The global filter calls this renderer with the envelope it would have sent.
import type { FastifyRequest } from 'fastify';
import { AllExceptionsFilter, type ErrorRenderer } from '../errors/all-exceptions.filter.js';
import { PlatformErrorCode } from '../errors/api-error.js';
import type { ErrorEnvelope } from '../errors/envelope.js';
import { SCIM_TYPES } from './scim.errors.js';

export const SCIM_BASE_PATH = '/api/v1/scim';
export const SCIM_CONTENT_TYPE = 'application/scim+json; charset=utf-8';
export const SCIM_ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

export interface ScimErrorBody {
  schemas: [typeof SCIM_ERROR_SCHEMA];
  status: string;
  scimType?: string;
  detail: string;
}

export function isScimPath(url: string): boolean {
  const path = url.split('?')[0].toLowerCase();
  return path === SCIM_BASE_PATH || path.startsWith(`${SCIM_BASE_PATH}/`);
}

export function scimErrorBody(
  status: number,
  envelope: Pick<ErrorEnvelope, 'Code' | 'Message'>,
): ScimErrorBody {
  const code = envelope.Code ?? '';
  // The platform's 400 is a body that is not JSON, or is empty: invalidSyntax in SCIM terms.
  const scimType = SCIM_TYPES.has(code)
    ? code
    : status === 400 && code === (PlatformErrorCode.ValidationFailed as string)
      ? 'invalidSyntax'
      : undefined;
  return {
    schemas: [SCIM_ERROR_SCHEMA],
    status: String(status),
    ...(scimType !== undefined ? { scimType } : {}),
    detail: envelope.Message ?? `HTTP ${String(status)}`,
  };
}

const RESOURCE = '(?:users|groups)';
const SEGMENT = '[^/]+';
/** The SCIM routes and their methods, for 405 answers (paths compared in any letter case, as routes match). */
const SCIM_ROUTES: ReadonlyArray<[RegExp, readonly string[]]> = [
  [new RegExp(`^/${RESOURCE}/?$`), ['GET', 'POST']],
  [new RegExp(`^/${RESOURCE}/\\.search$`), ['POST']],
  [/^\/\.search$/, ['POST']],
  [new RegExp(`^/${RESOURCE}/${SEGMENT}$`), ['GET', 'PUT', 'PATCH', 'DELETE']],
  [/^\/(?:serviceproviderconfig|resourcetypes|schemas)\/?$/, ['GET']],
  [new RegExp(`^/(?:resourcetypes|schemas)/${SEGMENT}$`), ['GET']],
];

/** The methods a SCIM path is served for, or undefined when it is no SCIM route at all. */
export function allowedScimMethods(url: string): readonly string[] | undefined {
  if (!isScimPath(url)) return undefined;
  const path = url.split('?')[0].toLowerCase().slice(SCIM_BASE_PATH.length);
  return SCIM_ROUTES.find(([pattern]) => pattern.test(path))?.[1];
}

export const renderScimError: ErrorRenderer = (request: FastifyRequest, status, envelope) => {
  if (!isScimPath(request.url)) return undefined;
  const body = scimErrorBody(status, envelope);
  // The platform's messages name application/json; a SCIM client sent application/scim+json.
  const contentType = request.headers['content-type'];
  if (typeof contentType === 'string' && /^application\/scim\+json/i.test(contentType)) {
    body.detail = body.detail.replaceAll('application/json', 'application/scim+json');
  }
  if (status === 415)
    body.detail = body.detail.replace(/send application\/json\.$/, 'send application/scim+json.');
  return { body, contentType: SCIM_CONTENT_TYPE };
};

let registered = false;

/** Idempotent: several apps in one process (the e2e suite) share the filter's static renderer list. */
export function registerScimErrorRenderer(): void {
  if (registered) return;
  registered = true;
  AllExceptionsFilter.addRenderer(renderScimError);
}

interface PlatformEnvelopeLike {
  Succeeded?: unknown;
  Code?: unknown;
  Message?: unknown;
}

/**
 * For error answers that never reach the exception filter — the rate limiter's 429, sent from an onRequest hook —
 * an onSend hook rewrites a platform envelope under /api/v1/scim into the SCIM error schema. Returns the new
 * payload, or undefined to leave the answer alone.
 */
export function rewritePlatformError(
  url: string,
  status: number,
  contentType: string | undefined,
  payload: unknown,
): string | undefined {
  if (status < 400 || !isScimPath(url) || typeof payload !== 'string') return undefined;
  if (contentType === undefined || !/^application\/json/i.test(contentType)) return undefined;
  let parsed: PlatformEnvelopeLike;
  try {
    parsed = JSON.parse(payload) as PlatformEnvelopeLike;
  } catch {
    return undefined;
  }
  if (parsed.Succeeded !== false) return undefined;
  return JSON.stringify(
    scimErrorBody(status, {
      Code: typeof parsed.Code === 'string' ? parsed.Code : null,
      Message: typeof parsed.Message === 'string' ? parsed.Message : null,
    }),
  );
}
