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
  ApiCreatedResponse,
  ApiHeader,
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
  ScimListResponseDto,
  ScimPatchRequestDto,
  ScimSearchRequestDto,
  ScimUserDto,
  ScimUserInputDto,
} from './dto/scim-user.dto.js';
import { isPlainObject } from './patch/scim-patch-request.js';
import { SCIM_CONTENT_TYPE } from './scim-error.renderer.js';
import { USER_VIEW_SCHEMA } from './schema/group-schema.js';
import { projectResource, type AttributeProjection } from './schema/attribute-projection.js';
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
  ApiScimSortQueries,
} from './scim-openapi.js';
import { ScimError, ScimErrorCode } from './scim.errors.js';
import type { ScimUserView } from './scim-user.representation.js';
import { etagOf, matchesEntityTag } from './scim-etag.js';
import { ScimUsersService, type ListQuery, type ScimListResponse } from './scim-users.service.js';
import { userSortKey } from './scim-user-sort.js';
import { auditSourceOf } from '../audit/audit-source.js';

// No example id: none can exist on a fresh instance (ids are assigned), so Swagger UI asks for a real one.
const ID_PARAM = { name: 'id', description: "The user's id (as its create answer or a list names it)." };
const IF_MATCH = { name: 'If-Match', required: false, description: 'W/"<version>" or *: 412 when stale' };

function userProjection(source: Readonly<Record<string, unknown>>): AttributeProjection {
  return parseProjection(source, USER_VIEW_SCHEMA);
}

function userListQuery(source: Readonly<Record<string, unknown>>): ListQuery {
  const query = parseListQuery(source);
  const sort = parseSort(source);
  if (sort === undefined) return query;
  const key = userSortKey(sort.sortBy);
  if (key === undefined) {
    throw ScimError.badRequest(
      ScimErrorCode.InvalidValue,
      `Users can be sorted by an attribute with one value (or the primary of several) that they store, not "${sort.sortBy}"`,
    );
  }
  return { ...query, sort: { key, descending: sort.descending } };
}

function projectList(list: ScimListResponse, projection: AttributeProjection): ScimListResponse {
  if (projection.attributes === undefined && projection.excluded === undefined) return list;
  return {
    ...list,
    Resources: list.Resources.map(
      (user) => projectResource(user, USER_VIEW_SCHEMA, projection) as ScimUserView,
    ),
  };
}

/** SCIM 2.0 Users (RFC 7644 §3.3–§3.7); PATCH is operation 3 of the interface document. */
@ApiTags('Scim')
@ApiBearerAuth()
@RequireScope('users')
@Controller('api/v1/scim/Users')
export class ScimUsersController {
  constructor(private readonly users: ScimUsersService) {}

  @Post()
  @HttpCode(201)
  @Header('Content-Type', SCIM_CONTENT_TYPE)
  @ApiOperation({ operationId: 'Scim_CreateUser', summary: 'Create a user (201 + Location)' })
  @ApiScimConsumes()
  @ApiBody({ type: ScimUserInputDto })
  @ApiScimProjectionQueries('userName,emails', 'roles')
  @ApiCreatedResponse({ type: ScimUserDto })
  @Idempotent()
  @ApiScimCreateErrorResponses()
  async create(
    @Body() body: unknown,
    @Query() query: Record<string, unknown>,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Partial<ScimUserView>> {
    requireSchemasArray(body);
    const projection = userProjection(query);
    const created = (user: ScimUserView): RenderedAnswer<Partial<ScimUserView>> => ({
      statusCode: 201,
      headers: { 'content-type': SCIM_CONTENT_TYPE, location: user.meta.location, etag: user.meta.version },
      body: projectResource(user, USER_VIEW_SCHEMA, projection),
    });
    const user = await this.users.create(
      body,
      scimBaseUrl(request),
      auditSourceOf(request),
      idempotentWriteOf(request)?.answeredBy(created),
    );
    return renderedBody(reply, created(user));
  }

  @Get()
  @Header('Content-Type', SCIM_CONTENT_TYPE)
  @ApiOperation({
    operationId: 'Scim_ListUsers',
    summary: 'List users, with an RFC 7644 filter and paging',
    description: 'No match is 200 with totalResults 0. Disabled users are listed too.',
  })
  @ApiQuery({ name: 'filter', type: String, required: false, example: 'userName eq "bjensen@example.com"' })
  @ApiQuery({
    name: 'startIndex',
    type: 'integer',
    ...SCIM_PAGING_RANGE,
    required: false,
    example: 1,
    description: '1-based; < 1 counts as 1',
  })
  @ApiQuery({
    name: 'count',
    type: 'integer',
    ...SCIM_PAGING_RANGE,
    required: false,
    example: 100,
    description: 'default 100, at most 1000; < 0 is 0',
  })
  @ApiScimSortQueries('userName')
  @ApiScimProjectionQueries('userName,emails', 'roles')
  @ApiOkResponse({ type: ScimListResponseDto })
  @ApiScimErrorResponses()
  async list(
    @Query() query: Record<string, unknown>,
    @Req() request: FastifyRequest,
  ): Promise<ScimListResponse> {
    return projectList(
      await this.users.list(userListQuery(query), scimBaseUrl(request)),
      userProjection(query),
    );
  }

  @Post('.search')
  @HttpCode(200)
  @Header('Content-Type', SCIM_CONTENT_TYPE)
  @ApiOperation({
    operationId: 'Scim_SearchUsers',
    summary: 'List users with the query in the body (RFC 7644 §3.4.3)',
  })
  @ApiScimConsumes()
  // One example body: a sample of every property would send both attributes and excludedAttributes (400).
  @ApiBody({
    type: ScimSearchRequestDto,
    examples: {
      search: {
        summary: 'A search',
        value: {
          schemas: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'],
          filter: 'userName sw "b"',
          startIndex: 1,
          count: 100,
          sortBy: 'userName',
          sortOrder: 'ascending',
          attributes: ['userName', 'emails'],
        },
      },
    },
  })
  @ApiOkResponse({ type: ScimListResponseDto })
  @ApiScimErrorResponses()
  async search(@Body() body: unknown, @Req() request: FastifyRequest): Promise<ScimListResponse> {
    if (!isPlainObject(body)) {
      throw ScimError.badRequest(ScimErrorCode.InvalidSyntax, 'A SearchRequest body must be a JSON object');
    }
    requireSchemasArray(body);
    return projectList(
      await this.users.list(userListQuery(body), scimBaseUrl(request)),
      userProjection(body),
    );
  }

  @Get(':id')
  @ApiOperation({
    operationId: 'Scim_GetUser',
    summary: 'Get a user (304 when If-None-Match has its version)',
  })
  @ApiParam(ID_PARAM)
  @ApiHeader({ name: 'If-None-Match', required: false })
  @ApiScimProjectionQueries('userName,emails', 'roles')
  @ApiOkResponse({ type: ScimUserDto })
  @ApiScimErrorResponses(404)
  async get(
    @Param('id') id: string,
    @Query() query: Record<string, unknown>,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const projection = userProjection(query);
    const ifNoneMatch = singleHeader(request, 'if-none-match');
    if (ifNoneMatch !== undefined) {
      const version = await this.users.version(id);
      if (matchesEntityTag(ifNoneMatch, version)) {
        await reply.code(304).header('ETag', etagOf(version)).send();
        return;
      }
    }
    const user = await this.users.get(id, scimBaseUrl(request));
    await reply
      .code(200)
      .header('Content-Type', SCIM_CONTENT_TYPE)
      .header('ETag', user.meta.version)
      .send(projectResource(user, USER_VIEW_SCHEMA, projection));
  }

  @Put(':id')
  @Header('Content-Type', SCIM_CONTENT_TYPE)
  @ApiOperation({ operationId: 'Scim_ReplaceUser', summary: 'Replace a user (read-only members ignored)' })
  @ApiParam(ID_PARAM)
  @ApiHeader(IF_MATCH)
  @ApiScimConsumes()
  @ApiBody({ type: ScimUserInputDto })
  @ApiScimProjectionQueries('userName,emails', 'roles')
  @ApiOkResponse({ type: ScimUserDto })
  @ApiScimErrorResponses(404, 409, 412)
  async replace(
    @Param('id') id: string,
    @Body() body: unknown,
    @Query() query: Record<string, unknown>,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Partial<ScimUserView>> {
    requireSchemasArray(body);
    const projection = userProjection(query);
    const user = await this.users.replace(
      id,
      body,
      singleHeader(request, 'if-match'),
      scimBaseUrl(request),
      auditSourceOf(request),
    );
    reply.header('ETag', user.meta.version);
    return projectResource(user, USER_VIEW_SCHEMA, projection);
  }

  @Patch(':id')
  @Header('Content-Type', SCIM_CONTENT_TYPE)
  @ApiOperation({
    operationId: 'Scim_PatchUser',
    summary: 'Patch a user (operation 3): {Schemas, Operations:[{Path, Value}]} or an RFC 7644 PatchOp',
    description:
      'A missing op means replace; op and attribute names in any case; value-filter paths; atomic. Answers the whole user. ' +
      'The path matches in any case: the interface document writes it `/api/v1/scim/users/{id}`.',
  })
  @ApiParam(ID_PARAM)
  @ApiHeader(IF_MATCH)
  @ApiScimConsumes()
  @ApiBody({ type: ScimPatchRequestDto })
  @ApiScimProjectionQueries('userName,emails', 'roles')
  @ApiOkResponse({ type: ScimUserDto })
  @ApiScimErrorResponses(404, 409, 412)
  async patch(
    @Param('id') id: string,
    @Body() body: unknown,
    @Query() query: Record<string, unknown>,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Partial<ScimUserView>> {
    requireSchemasArray(body);
    const projection = userProjection(query);
    const user = await this.users.patch(
      id,
      body,
      singleHeader(request, 'if-match'),
      scimBaseUrl(request),
      auditSourceOf(request),
    );
    reply.header('ETag', user.meta.version);
    return projectResource(user, USER_VIEW_SCHEMA, projection);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    operationId: 'Scim_DeleteUser',
    summary: 'Delete a user; afterwards every operation on it is 404',
  })
  @ApiParam(ID_PARAM)
  @ApiHeader(IF_MATCH)
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiScimErrorResponses(404, 412)
  async delete(@Param('id') id: string, @Req() request: FastifyRequest): Promise<void> {
    await this.users.delete(id, singleHeader(request, 'if-match'), auditSourceOf(request));
  }
}
