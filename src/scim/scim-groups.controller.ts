import {
  Body,
  Controller,
  Delete,
  Get,
  Header,
  HttpCode,
  Param,
  Patch,
  Post,
  Put,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiBody,
  ApiHeader,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RequireScope } from '../auth/scopes.js';
import { Idempotent, idempotentWriteOf, renderedBody, type RenderedAnswer } from '../http/idempotency.js';
import {
  ScimGroupDto,
  ScimGroupInputDto,
  ScimGroupListResponseDto,
  ScimGroupPatchRequestDto,
  ScimGroupSearchRequestDto,
} from './dto/scim-group.dto.js';
import { isPlainObject } from './patch/scim-patch-request.js';
import { GROUP_RESOURCE_SCHEMA } from './schema/group-schema.js';
import { SCIM_CONTENT_TYPE } from './scim-error.renderer.js';
import { etagOf, matchesEntityTag } from './scim-etag.js';
import type { GroupSortKey } from './scim-groups.repository.js';
import {
  ScimGroupsService,
  type CreatedGroup,
  type GroupListQuery,
  type ScimGroupListResponse,
} from './scim-groups.service.js';
import {
  parseListQuery,
  parseProjection,
  parseSort,
  requireSchemasArray,
  scimBaseUrl,
  singleHeader,
  SCIM_PAGING_RANGE,
} from './scim-http.js';
import {
  ApiScimConsumes,
  ApiScimCreateErrorResponses,
  ApiScimErrorResponses,
  ApiScimProjectionQueries,
} from './scim-openapi.js';
import { GROUP_SORT_BY } from './scim-sort-by.js';
import { ScimError, ScimErrorCode } from './scim.errors.js';
import { auditSourceOf } from '../audit/audit-source.js';

// No example id: none can exist on a fresh instance (ids are assigned), so Swagger UI asks for a real one.
const ID_PARAM = { name: 'id', description: "The group's id (as its create answer or a list names it)." };
const IF_MATCH = { name: 'If-Match', required: false, description: 'W/"<version>" or *: 412 when stale' };
const ApiProjectionQueries = (): MethodDecorator => ApiScimProjectionQueries('displayName', 'members');

const SORT_KEYS: Readonly<Record<string, GroupSortKey>> = {
  id: 'id',
  displayname: 'displayName',
  externalid: 'externalId',
  'meta.created': 'created',
  'meta.lastmodified': 'lastModified',
};

function groupListQuery(source: Readonly<Record<string, unknown>>): GroupListQuery {
  const sort = parseSort(source);
  const { filter, startIndex, count } = parseListQuery(source);
  const query: GroupListQuery = { ...(filter !== undefined ? { filter } : {}), startIndex, count };
  if (sort === undefined) return query;
  const name = sort.sortBy.toLowerCase().replace(`${GROUP_RESOURCE_SCHEMA.core.id.toLowerCase()}:`, '');
  const key = SORT_KEYS[name];
  if (key === undefined) {
    throw ScimError.badRequest(
      ScimErrorCode.InvalidValue,
      `Groups can be sorted by id, displayName, externalId, meta.created or meta.lastModified, not "${sort.sortBy}"`,
    );
  }
  return { ...query, sort: { key, descending: sort.descending } };
}

/**
 * SCIM 2.0 Groups (RFC 7643 §4.2, RFC 7644 §3.3–§3.7) as Entra ID and Okta provision them. PATCH answers 204 (RFC
 * 7644 §3.5.2 allows it; both IdPs expect it) unless the request asks for attributes/excludedAttributes, then 200
 * with the group: a 10,000-member group is not sent back for every membership change.
 */
@ApiTags('Scim')
@ApiBearerAuth()
@RequireScope('users')
@Controller('api/v1/scim/Groups')
export class ScimGroupsController {
  constructor(private readonly groups: ScimGroupsService) {}

  @Post()
  @HttpCode(201)
  @Header('Content-Type', SCIM_CONTENT_TYPE)
  @ApiOperation({ operationId: 'Scim_CreateGroup', summary: 'Create a group (201 + Location)' })
  @ApiScimConsumes()
  @ApiBody({ type: ScimGroupInputDto })
  @ApiCreatedResponse({ description: 'The group, with Location and ETag', type: ScimGroupDto })
  @Idempotent()
  @ApiScimCreateErrorResponses()
  async create(
    @Body() body: unknown,
    @Query() query: Record<string, unknown>,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    requireSchemasArray(body);
    const projection = parseProjection(query, GROUP_RESOURCE_SCHEMA);
    const created = ({ entity, view }: CreatedGroup): RenderedAnswer => ({
      statusCode: 201,
      headers: {
        'content-type': SCIM_CONTENT_TYPE,
        location: `${scimBaseUrl(request)}/Groups/${entity.id}`,
        etag: etagOf(entity.version),
      },
      body: view,
    });
    const group = await this.groups.create(
      body,
      scimBaseUrl(request),
      projection,
      auditSourceOf(request),
      idempotentWriteOf(request)?.answeredBy(created),
    );
    return renderedBody(reply, created(group));
  }

  @Get()
  @Header('Content-Type', SCIM_CONTENT_TYPE)
  @ApiOperation({ operationId: 'Scim_ListGroups', summary: 'List groups, with filter, paging and sorting' })
  @ApiQuery({ name: 'filter', type: String, required: false, example: 'displayName eq "Sales"' })
  @ApiQuery({ name: 'startIndex', type: 'integer', ...SCIM_PAGING_RANGE, required: false, example: 1 })
  @ApiQuery({ name: 'count', type: 'integer', ...SCIM_PAGING_RANGE, required: false, example: 100 })
  @ApiQuery({
    name: 'sortBy',
    type: String,
    required: false,
    example: 'displayName',
    enum: [...GROUP_SORT_BY],
  })
  @ApiQuery({
    name: 'sortOrder',
    enum: ['ascending', 'descending'],
    required: false,
    example: 'ascending',
  })
  @ApiProjectionQueries()
  @ApiOkResponse({ description: 'ListResponse of groups', type: ScimGroupListResponseDto })
  @ApiScimErrorResponses()
  async list(
    @Query() query: Record<string, unknown>,
    @Req() request: FastifyRequest,
  ): Promise<ScimGroupListResponse> {
    return this.groups.list(
      groupListQuery(query),
      scimBaseUrl(request),
      parseProjection(query, GROUP_RESOURCE_SCHEMA),
    );
  }

  @Post('.search')
  @HttpCode(200)
  @Header('Content-Type', SCIM_CONTENT_TYPE)
  @ApiOperation({ operationId: 'Scim_SearchGroups', summary: 'List groups with the query in the body' })
  @ApiScimConsumes()
  // One example body: a sample of every property would send both attributes and excludedAttributes (400).
  @ApiBody({
    type: ScimGroupSearchRequestDto,
    examples: {
      search: {
        summary: 'A search',
        value: {
          schemas: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'],
          filter: 'displayName sw "S"',
          startIndex: 1,
          count: 100,
          sortBy: 'displayName',
          sortOrder: 'ascending',
          attributes: ['displayName'],
        },
      },
    },
  })
  @ApiOkResponse({ description: 'ListResponse of groups', type: ScimGroupListResponseDto })
  @ApiScimErrorResponses()
  async search(@Body() body: unknown, @Req() request: FastifyRequest): Promise<ScimGroupListResponse> {
    if (!isPlainObject(body)) {
      throw ScimError.badRequest(ScimErrorCode.InvalidSyntax, 'A SearchRequest body must be a JSON object');
    }
    requireSchemasArray(body);
    return this.groups.list(
      groupListQuery(body),
      scimBaseUrl(request),
      parseProjection(body, GROUP_RESOURCE_SCHEMA),
    );
  }

  @Get(':id')
  @ApiOperation({
    operationId: 'Scim_GetGroup',
    summary: 'Get a group (304 when If-None-Match has its version)',
  })
  @ApiParam(ID_PARAM)
  @ApiProjectionQueries()
  @ApiHeader({ name: 'If-None-Match', required: false, description: 'W/"<version>": 304 when current' })
  @ApiOkResponse({ description: 'The group, with ETag', type: ScimGroupDto })
  @ApiScimErrorResponses(404)
  async get(
    @Param('id') id: string,
    @Query() query: Record<string, unknown>,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const projection = parseProjection(query, GROUP_RESOURCE_SCHEMA);
    const ifNoneMatch = singleHeader(request, 'if-none-match');
    if (ifNoneMatch !== undefined) {
      const version = await this.groups.version(id);
      if (matchesEntityTag(ifNoneMatch, version)) {
        await reply.code(304).header('ETag', etagOf(version)).send();
        return;
      }
    }
    const { entity, view } = await this.groups.get(id, scimBaseUrl(request), projection);
    await reply
      .code(200)
      .header('Content-Type', SCIM_CONTENT_TYPE)
      .header('ETag', etagOf(entity.version))
      .send(view);
  }

  @Put(':id')
  @Header('Content-Type', SCIM_CONTENT_TYPE)
  @ApiOperation({
    operationId: 'Scim_ReplaceGroup',
    summary: 'Replace a group (members replaced as a whole)',
  })
  @ApiParam(ID_PARAM)
  @ApiHeader(IF_MATCH)
  @ApiScimConsumes()
  @ApiBody({ type: ScimGroupInputDto })
  @ApiOkResponse({ description: 'The replaced group, with ETag', type: ScimGroupDto })
  @ApiScimErrorResponses(404, 409, 412)
  async replace(
    @Param('id') id: string,
    @Body() body: unknown,
    @Query() query: Record<string, unknown>,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    requireSchemasArray(body);
    const projection = parseProjection(query, GROUP_RESOURCE_SCHEMA);
    const { entity, view } = await this.groups.replace(
      id,
      body,
      singleHeader(request, 'if-match'),
      scimBaseUrl(request),
      projection,
      auditSourceOf(request),
    );
    reply.header('ETag', etagOf(entity.version));
    return view;
  }

  @Patch(':id')
  @ApiOperation({
    operationId: 'Scim_PatchGroup',
    summary: 'Patch a group: members add/remove/replace, displayName, externalId (Entra and Okta shapes)',
    description: '204, or 200 with the group when attributes or excludedAttributes is given.',
  })
  @ApiParam(ID_PARAM)
  @ApiHeader(IF_MATCH)
  @ApiScimConsumes()
  @ApiBody({ type: ScimGroupPatchRequestDto })
  @ApiNoContentResponse({ description: 'Patched' })
  @ApiOkResponse({
    description: 'The group, when attributes or excludedAttributes is given',
    type: ScimGroupDto,
  })
  @ApiScimErrorResponses(404, 409, 412)
  async patch(
    @Param('id') id: string,
    @Body() body: unknown,
    @Query() query: Record<string, unknown>,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    requireSchemasArray(body);
    const projection = parseProjection(query, GROUP_RESOURCE_SCHEMA);
    const wantsBody = projection.attributes !== undefined || projection.excluded !== undefined;
    const { entity, view } = await this.groups.patch(
      id,
      body,
      singleHeader(request, 'if-match'),
      scimBaseUrl(request),
      wantsBody ? projection : { attributes: [] },
      auditSourceOf(request),
    );
    reply.header('ETag', etagOf(entity.version));
    if (!wantsBody) {
      await reply.code(204).send();
      return;
    }
    await reply.code(200).header('Content-Type', SCIM_CONTENT_TYPE).send(view);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ operationId: 'Scim_DeleteGroup', summary: 'Delete a group and its memberships' })
  @ApiParam(ID_PARAM)
  @ApiHeader(IF_MATCH)
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiScimErrorResponses(404, 412)
  async delete(@Param('id') id: string, @Req() request: FastifyRequest): Promise<void> {
    await this.groups.delete(id, singleHeader(request, 'if-match'), auditSourceOf(request));
  }
}
