// RFC 7644 §3.4.3: `POST /.search` at the SCIM root searches every resource type (Users, then Groups) with the
// same SearchRequest as `/Users/.search`. One list in a fixed order: every matching user (in the Users order, oldest
// first) and then every matching group (Groups order), paged over the whole; `totalResults` is the sum. The filter
// and the attribute names are applied to each type for which they are defined (RFC 7644 §3.4.2: a type that does
// not know an attribute has no resource matching it); names defined for neither are 400 as on each type's own route.
import { Body, Controller, Header, HttpCode, Post, Req } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { RequireScope } from '../auth/scopes.js';
import { ScimRootSearchRequestDto } from './dto/scim-user.dto.js';
import { ScimRootListResponseDto } from './dto/scim-group.dto.js';
import { isPlainObject } from './patch/scim-patch-request.js';
import { GROUP_RESOURCE_SCHEMA, USER_VIEW_SCHEMA } from './schema/group-schema.js';
import { projectResource, type AttributeProjection } from './schema/attribute-projection.js';
import type { ScimResourceSchema } from './schema/scim-schema.types.js';
import { SCIM_CONTENT_TYPE } from './scim-error.renderer.js';
import { ScimGroupsService, type GroupListQuery } from './scim-groups.service.js';
import { parseListQuery, parseProjection, parseSort, requireSchemasArray, scimBaseUrl } from './scim-http.js';
import { ApiScimConsumes, ApiScimErrorResponses } from './scim-openapi.js';
import { ScimError, ScimErrorCode } from './scim.errors.js';
import { LIST_RESPONSE_SCHEMA, ScimUsersService } from './scim-users.service.js';

export interface ScimRootListResponse {
  schemas: [typeof LIST_RESPONSE_SCHEMA];
  totalResults: number;
  startIndex: number;
  itemsPerPage: number;
  Resources: Array<Record<string, unknown>>;
}

/** Per resource type: the projection of the names defined for it (names of no type: 400 invalidValue). */
function projectionsOf(
  body: Readonly<Record<string, unknown>>,
  types: readonly ScimResourceSchema[],
): AttributeProjection[] {
  const names: Record<string, string[] | undefined> = {};
  for (const parameter of ['attributes', 'excludedAttributes']) {
    const key = Object.keys(body).find((candidate) => candidate.toLowerCase() === parameter.toLowerCase());
    const raw = key === undefined ? undefined : body[key];
    if (typeof raw === 'string') names[parameter] = raw.split(',').map((name) => name.trim());
    else if (Array.isArray(raw) && raw.every((name) => typeof name === 'string')) names[parameter] = raw;
  }
  // The whole body through each type's own parser first: the checks (both parameters, caps, types) stay one.
  const perType = types.map((type) => {
    const source: Record<string, unknown> = { ...body };
    for (const [parameter, list] of Object.entries(names)) {
      if (list === undefined) continue;
      const key = Object.keys(source).find(
        (candidate) => candidate.toLowerCase() === parameter.toLowerCase(),
      );
      if (key !== undefined) delete source[key];
      source[parameter] = list.filter((name) => name === '' || definedFor(name, type, parameter));
    }
    return parseProjection(source, type);
  });
  for (const [parameter, list] of Object.entries(names)) {
    const unknown = (list ?? []).find(
      (name) => name !== '' && !types.some((type) => definedFor(name, type, parameter)),
    );
    if (unknown !== undefined) {
      throw ScimError.badRequest(
        ScimErrorCode.InvalidValue,
        `${parameter}: "${unknown}" is an attribute of neither Users nor Groups`,
      );
    }
  }
  return perType;
}

function definedFor(name: string, type: ScimResourceSchema, parameter: string): boolean {
  try {
    parseProjection({ [parameter]: name }, type);
    return true;
  } catch {
    return false;
  }
}

/** The list, or undefined when the filter names what this type does not have (no resource of it matches). */
async function orNoMatch<T>(list: () => Promise<T>): Promise<T | undefined> {
  try {
    return await list();
  } catch (error) {
    if (error instanceof ScimError && error.code === ScimErrorCode.InvalidFilter) return undefined;
    throw error;
  }
}

@ApiTags('Scim')
@ApiBearerAuth()
@RequireScope('users')
@Controller('api/v1/scim')
export class ScimRootSearchController {
  constructor(
    private readonly users: ScimUsersService,
    private readonly groups: ScimGroupsService,
  ) {}

  @Post('.search')
  @HttpCode(200)
  @Header('Content-Type', SCIM_CONTENT_TYPE)
  @ApiOperation({
    operationId: 'Scim_Search',
    summary: 'Search Users and Groups together with the query in the body (RFC 7644 §3.4.3)',
    description:
      'Users first (oldest first), then Groups, paged over the whole; no sortBy (400 invalidValue). A filter or ' +
      'attribute name applies to the types that define it.',
  })
  @ApiScimConsumes()
  // One example body: a sample of every property would send both attributes and excludedAttributes (400).
  @ApiBody({
    type: ScimRootSearchRequestDto,
    examples: {
      search: {
        summary: 'A search',
        value: {
          schemas: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'],
          filter: 'displayName pr',
          startIndex: 1,
          count: 100,
        },
      },
    },
  })
  @ApiOkResponse({ description: 'ListResponse of users and groups', type: ScimRootListResponseDto })
  @ApiScimErrorResponses()
  async search(@Body() body: unknown, @Req() request: FastifyRequest): Promise<ScimRootListResponse> {
    if (!isPlainObject(body)) {
      throw ScimError.badRequest(ScimErrorCode.InvalidSyntax, 'A SearchRequest body must be a JSON object');
    }
    requireSchemasArray(body);
    const query = parseListQuery(body);
    if (parseSort(body) !== undefined) {
      throw ScimError.badRequest(
        ScimErrorCode.InvalidValue,
        'sortBy is not supported across resource types; sort with /Users/.search or /Groups/.search',
      );
    }
    const [userProjection, groupProjection] = projectionsOf(body, [USER_VIEW_SCHEMA, GROUP_RESOURCE_SCHEMA]);
    const baseUrl = scimBaseUrl(request);
    const offset = query.startIndex - 1;

    // Users: the page's share (possibly none) and their total.
    const users = await orNoMatch(() => this.users.list(query, baseUrl));
    // Groups: the rest of the page, counted from the first group.
    const groupStart = Math.max(offset - (users?.totalResults ?? 0), 0) + 1;
    const groupCount = Math.max(query.count - (users?.Resources.length ?? 0), 0);
    const groupQuery: GroupListQuery = {
      ...(query.filter !== undefined ? { filter: query.filter } : {}),
      startIndex: groupStart,
      count: groupCount,
    };
    const groups = await orNoMatch(() => this.groups.list(groupQuery, baseUrl, groupProjection ?? {}));
    if (users === undefined && groups === undefined) {
      // Neither type could take the filter: the Users error says why.
      await this.users.list(query, baseUrl);
    }
    const resources: Array<Record<string, unknown>> = [
      ...(users?.Resources ?? []).map(
        (user) => projectResource(user, USER_VIEW_SCHEMA, userProjection ?? {}) as Record<string, unknown>,
      ),
      ...((groups?.Resources ?? []) as Array<Record<string, unknown>>),
    ];
    return {
      schemas: [LIST_RESPONSE_SCHEMA],
      totalResults: (users?.totalResults ?? 0) + (groups?.totalResults ?? 0),
      startIndex: query.startIndex,
      itemsPerPage: resources.length,
      Resources: resources,
    };
  }
}
