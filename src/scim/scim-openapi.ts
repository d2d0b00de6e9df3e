// Swagger declarations of the SCIM error answers: the same statuses as ApiErrorResponses() declares for the
// platform, but in the RFC 7644 §3.12 error schema that every /api/v1/scim answer uses.
import { applyDecorators } from '@nestjs/common';
import { ApiConsumes, ApiProduces, ApiQuery, ApiResponse } from '@nestjs/swagger';
import { ScimErrorDto } from './dto/scim-user.dto.js';
import { USER_SORT_BY } from './scim-sort-by.js';
import { ATTRIBUTE_LIST_PATTERN } from './schema/attribute-projection.js';

const COMMON: ReadonlyArray<[number, string]> = [
  [
    400,
    'invalidSyntax (also a path that is not valid percent-encoding), invalidValue, invalidPath, noTarget, ' +
      'mutability or invalidFilter (scimType)',
  ],
  [401, 'Missing or unknown bearer token'],
  [403, 'The key lacks the "users" scope'],
  [413, 'Body larger than BODY_LIMIT'],
  [415, 'Body is not application/scim+json or application/json'],
  [429, 'Rate limited (see Retry-After)'],
  [500, 'Unexpected error; detail quotes the correlation id'],
  [503, 'The database is unavailable or the request timed out: nothing was stored; retry after Retry-After'],
  [507, "The database's storage is full: nothing was stored; retry after Retry-After"],
];

const SPECIFIC: Readonly<Record<404 | 409 | 412, string>> = {
  404: 'No resource of this type has this id (also after DELETE)',
  409: 'uniqueness: another user has this userName, or another group this displayName (case-insensitively)',
  412: 'If-Match does not match the current version',
};

export function ApiScimErrorResponses(...specific: Array<404 | 409 | 412>): MethodDecorator & ClassDecorator {
  return scimErrorResponses([
    ...COMMON,
    ...specific.map((status): [number, string] => [status, SPECIFIC[status]]),
  ]);
}

/** A creating POST, which takes an Idempotency-Key (src/http/idempotency.ts): 409 has a second cause, and 422. */
export function ApiScimCreateErrorResponses(): MethodDecorator & ClassDecorator {
  return scimErrorResponses([
    ...COMMON,
    [
      409,
      `${SPECIFIC[409]}; or, without scimType, another request with this Idempotency-Key was being carried ` +
        'out (with Retry-After: retry to get its answer), or an earlier version of the service carried it out and ' +
        'lost its answer (no Retry-After: the resource exists and is not created again; look it up)',
    ],
    [422, 'The Idempotency-Key was used with another request'],
  ]);
}

function scimErrorResponses(responses: ReadonlyArray<[number, string]>): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ApiProduces('application/scim+json'),
    ...responses.map(([status, description]) => ApiResponse({ status, description, type: ScimErrorDto })),
  );
}

/** Request bodies: SCIM's media type or plain JSON. */
export const ApiScimConsumes = (): MethodDecorator & ClassDecorator =>
  ApiConsumes('application/scim+json', 'application/json');

/** RFC 7644 §3.9: `attributes` / `excludedAttributes` (comma-separated) on every answer carrying a resource. */
export const ApiScimProjectionQueries = (attributes: string, excluded: string): MethodDecorator =>
  applyDecorators(
    ApiQuery({
      name: 'attributes',
      required: false,
      description: `${NAMES} to return (and \`id\`, \`schemas\`); not together with \`excludedAttributes\`.`,
      schema: { type: 'string', pattern: ATTRIBUTE_LIST_PATTERN, example: attributes },
    }),
    ApiQuery({
      name: 'excludedAttributes',
      required: false,
      description: excludedDescription(excluded),
      schema: { type: 'string', pattern: ATTRIBUTE_LIST_PATTERN },
    }),
  );

/**
 * `excludedAttributes` has no example value: it cannot be given together with `attributes` (400), and a tool that
 * fills in every example (Swagger UI's "Try it out") would send both.
 */
export const excludedDescription = (excluded: string): string =>
  `${NAMES} to leave out of the answer (e.g. \`${excluded}\`); not together with \`attributes\` (400 invalidValue).`;

/** RFC 7644 §3.9 in words: what the pattern states, and the URN-qualified form it leaves out. */
const NAMES =
  'Comma-separated attribute names (`name`, `name.sub`; also URN-qualified, `urn:…:User:userName`, or an ' +
  'extension URN alone; any case; at most 200)';

/** RFC 7644 §3.4.2.3 sorting. */
export const ApiScimSortQueries = (sortBy: string): MethodDecorator =>
  applyDecorators(
    ApiQuery({ name: 'sortBy', type: String, required: false, example: sortBy, enum: [...USER_SORT_BY] }),
    ApiQuery({ name: 'sortOrder', enum: ['ascending', 'descending'], required: false, example: 'ascending' }),
  );
