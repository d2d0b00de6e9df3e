// HTTP details of the SCIM routes that are not the User resource's business: the absolute base address for
// meta.location (from the request's host, so it is right behind a proxy with TRUST_PROXY), and the list query
// parameters of RFC 7644 §3.4.2 (startIndex/count are integers; out-of-range values are clamped as §3.4.2.4 says).
import type { FastifyRequest } from 'fastify';
import {
  AttributeProjectionError,
  parseAttributeNames,
  type AttributeProjection,
  type ProjectedName,
} from './schema/attribute-projection.js';
import type { ScimResourceSchema } from './schema/scim-schema.types.js';
import { SCIM_BASE_PATH } from './scim-error.renderer.js';
import { ScimError, ScimErrorCode } from './scim.errors.js';
import { isPlainObject } from './patch/scim-patch-request.js';
import { DEFAULT_COUNT, MAX_RESULTS, type ListQuery } from './scim-users.service.js';

/** Larger offsets would overflow SQLite's integer; no page can start there anyway. */
const MAX_START_INDEX = 2_147_483_647;
/**
 * The range the document states for startIndex and count (no request integer is unbounded). The service
 * clamps a value outside it as RFC 7644 §3.4.2.4 says rather than refusing it (docs/decisions.md).
 */
export const SCIM_PAGING_RANGE = { minimum: -2_147_483_648, maximum: MAX_START_INDEX } as const;

export function scimBaseUrl(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}${SCIM_BASE_PATH}`;
}

export function singleHeader(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** A parameter by name in any letter case; repeated parameters are ambiguous. */
function parameter(source: Readonly<Record<string, unknown>>, name: string): unknown {
  const keys = Object.keys(source).filter((key) => key.toLowerCase() === name.toLowerCase());
  if (keys.length > 1) {
    throw ScimError.badRequest(ScimErrorCode.InvalidValue, `"${name}" is given more than once`);
  }
  const key = keys.at(0);
  return key === undefined ? undefined : source[key];
}

function integer(source: Readonly<Record<string, unknown>>, name: string): number | undefined {
  const raw = parameter(source, name);
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (typeof raw === 'number' && Number.isInteger(raw)) return raw;
  if (typeof raw === 'string' && /^\s*[+-]?\d+\s*$/.test(raw)) return Number(raw);
  throw ScimError.badRequest(
    ScimErrorCode.InvalidValue,
    `${name} must be an integer, got ${JSON.stringify(raw)}`,
  );
}

/**
 * `filter`, `startIndex` and `count` from a query string or a /.search body. RFC 7644 §3.4.2.4: a startIndex below
 * 1 is 1 and a negative count is 0; a count above MAX_RESULTS is MAX_RESULTS (ServiceProviderConfig says so).
 */
export function parseListQuery(source: Readonly<Record<string, unknown>>): ListQuery {
  const filter = parameter(source, 'filter');
  if (filter !== undefined && filter !== null && typeof filter !== 'string') {
    throw ScimError.badRequest(ScimErrorCode.InvalidFilter, 'filter must be a string');
  }
  const startIndex = Math.min(Math.max(integer(source, 'startIndex') ?? 1, 1), MAX_START_INDEX);
  const count = Math.min(Math.max(integer(source, 'count') ?? DEFAULT_COUNT, 0), MAX_RESULTS);
  return { ...(typeof filter === 'string' ? { filter } : {}), startIndex, count };
}

/**
 * RFC 7644 §3.4.2.5 `attributes` / `excludedAttributes` (query string: comma-separated; /.search body: arrays or
 * strings). Both at once is ambiguous: 400 invalidValue.
 */
export function parseProjection(
  source: Readonly<Record<string, unknown>>,
  resource: ScimResourceSchema,
): AttributeProjection {
  const read = (name: string): ProjectedName[] | undefined => {
    const raw = parameter(source, name);
    if (raw === undefined || raw === null || raw === '') return undefined;
    if (typeof raw !== 'string' && !(Array.isArray(raw) && raw.every((item) => typeof item === 'string'))) {
      throw ScimError.badRequest(
        ScimErrorCode.InvalidValue,
        `${name} must be a comma-separated list of names`,
      );
    }
    try {
      return parseAttributeNames(raw, resource, name);
    } catch (error) {
      if (error instanceof AttributeProjectionError) {
        throw ScimError.badRequest(ScimErrorCode.InvalidValue, error.message);
      }
      throw error;
    }
  };
  const attributes = read('attributes');
  const excluded = read('excludedAttributes');
  if (attributes !== undefined && excluded !== undefined) {
    throw ScimError.badRequest(
      ScimErrorCode.InvalidValue,
      'attributes and excludedAttributes cannot be given together',
    );
  }
  return {
    ...(attributes !== undefined ? { attributes } : {}),
    ...(excluded !== undefined ? { excluded } : {}),
  };
}

/** RFC 7644 §3.4.2.3 `sortBy` (an attribute name, resolved by the resource) and `sortOrder`. */
export function parseSort(
  source: Readonly<Record<string, unknown>>,
): { sortBy: string; descending: boolean } | undefined {
  const sortBy = parameter(source, 'sortBy');
  const sortOrder = parameter(source, 'sortOrder');
  let descending = false;
  if (sortOrder !== undefined && sortOrder !== null && sortOrder !== '') {
    const order = typeof sortOrder === 'string' ? sortOrder.toLowerCase() : undefined;
    if (order !== 'ascending' && order !== 'descending') {
      throw ScimError.badRequest(
        ScimErrorCode.InvalidValue,
        `sortOrder must be "ascending" or "descending", got ${JSON.stringify(sortOrder)}`,
      );
    }
    descending = order === 'descending';
  }
  if (sortBy === undefined || sortBy === null || sortBy === '') return undefined;
  if (typeof sortBy !== 'string')
    throw ScimError.badRequest(ScimErrorCode.InvalidValue, 'sortBy must be a string');
  return { sortBy: sortBy.trim(), descending };
}

/**
 * RFC 7643 §3: `schemas` is a multi-valued attribute, so a body's `schemas` (member name in any letter case) must be
 * an array of strings when it is given; anything else is `400 invalidSyntax`, what a PATCH body has always answered.
 * A missing `schemas` stays accepted (the interface document's PATCH body and several IdPs omit it).
 */
export function requireSchemasArray(body: unknown): void {
  if (!isPlainObject(body)) return;
  for (const key of Object.keys(body)) {
    if (key.toLowerCase() !== 'schemas') continue;
    const schemas = body[key];
    if (!(Array.isArray(schemas) && schemas.every((item) => typeof item === 'string'))) {
      throw ScimError.badRequest(
        ScimErrorCode.InvalidSyntax,
        `schemas must be an array of strings (schema URNs), got ${JSON.stringify(schemas)?.slice(0, 100) ?? 'nothing'}`,
      );
    }
  }
}
