// A small SCIM client over the test app (fastify.inject): bearer key, SCIM media type, JSON bodies.
import type { LightMyRequestResponse } from 'fastify';
import { ADMIN_KEY, type TestApp } from '../support/test-app.js';

export const SCIM = '/api/v1/scim';
export const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const CORE_USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const ENTERPRISE_USER = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface ScimClient {
  request(
    method: Method,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<LightMyRequestResponse>;
  get(path: string, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  put(path: string, body: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  patch(path: string, body: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  delete(path: string, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
}

/** `path` is relative to /api/v1/scim; a body that is a string is sent as-is (for malformed JSON). */
export function scimClient(t: TestApp, key: string = ADMIN_KEY): ScimClient {
  const request: ScimClient['request'] = (method, path, body, headers = {}) =>
    t.request({
      method,
      url: `${SCIM}${path}`,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body !== undefined ? { 'content-type': 'application/scim+json' } : {}),
        ...headers,
      },
      ...(body !== undefined ? { payload: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
  return {
    request,
    get: (path, headers) => request('GET', path, undefined, headers),
    post: (path, body, headers) => request('POST', path, body, headers),
    put: (path, body, headers) => request('PUT', path, body, headers),
    patch: (path, body, headers) => request('PATCH', path, body, headers),
    delete: (path, headers) => request('DELETE', path, undefined, headers),
  };
}

/** `{schemas:[PatchOp], Operations}` */
export function patchBody(...operations: Array<Record<string, unknown>>): Record<string, unknown> {
  return { schemas: [PATCH_OP], Operations: operations };
}

/** The query string for a filter, encoded the way a client library would (spaces as %20). */
export function filterQuery(filter: string, extra = ''): string {
  return `/Users?filter=${encodeURIComponent(filter)}${extra}`;
}
