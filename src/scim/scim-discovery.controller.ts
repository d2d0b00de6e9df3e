import { Controller, Get, Header, Param, Query, Req } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { RequireScope } from '../auth/scopes.js';
import {
  ScimResourceTypeDto,
  ScimResourceTypeListDto,
  ScimSchemaDto,
  ScimSchemaListDto,
  ScimServiceProviderConfigDto,
} from './dto/scim-discovery.dto.js';
import type { ScimSchemaRepresentation } from './schema/schema-representation.js';
import {
  findResourceType,
  findSchemaRepresentation,
  resourceTypes,
  schemas,
  serviceProviderConfig,
  type ResourceTypeRepresentation,
  type ServiceProviderConfig,
} from './scim-discovery.js';
import { SCIM_CONTENT_TYPE } from './scim-error.renderer.js';
import { scimBaseUrl } from './scim-http.js';
import { ApiScimErrorResponses } from './scim-openapi.js';
import { quotedId, ScimError } from './scim.errors.js';
import { LIST_RESPONSE_SCHEMA } from './scim-users.service.js';

interface ListOf<T> {
  schemas: [typeof LIST_RESPONSE_SCHEMA];
  totalResults: number;
  startIndex: number;
  itemsPerPage: number;
  Resources: T[];
}

/**
 * RFC 7644 §4: the discovery endpoints do not filter, and "if a filter is provided, the service provider SHOULD
 * respond with HTTP status code 403", so that no client takes the full list for a filtered one.
 */
function refuseFilter(query: Readonly<Record<string, unknown>>): void {
  if (Object.keys(query).some((name) => name.toLowerCase() === 'filter')) {
    throw ScimError.forbidden('The discovery endpoints do not filter (RFC 7644 §4); ask without "filter".');
  }
}

function listOf<T>(resources: T[]): ListOf<T> {
  return {
    schemas: [LIST_RESPONSE_SCHEMA],
    totalResults: resources.length,
    startIndex: 1,
    itemsPerPage: resources.length,
    Resources: resources,
  };
}

/**
 * RFC 7644 §4 discovery. Behind the same bearer key as /Users (scope users): Entra and Okta send it anyway, and the
 * schema is nobody else's business.
 */
@ApiTags('Scim')
@ApiBearerAuth()
@RequireScope('users')
@Controller('api/v1/scim')
export class ScimDiscoveryController {
  @Get('ServiceProviderConfig')
  @Header('Content-Type', SCIM_CONTENT_TYPE)
  @ApiOperation({
    operationId: 'Scim_GetServiceProviderConfig',
    summary: 'SCIM features this service supports',
  })
  @ApiOkResponse({ type: ScimServiceProviderConfigDto })
  @ApiScimErrorResponses()
  getServiceProviderConfig(
    @Query() query: Record<string, unknown>,
    @Req() request: FastifyRequest,
  ): ServiceProviderConfig {
    refuseFilter(query);
    return serviceProviderConfig(scimBaseUrl(request));
  }

  @Get('ResourceTypes')
  @Header('Content-Type', SCIM_CONTENT_TYPE)
  @ApiOperation({ operationId: 'Scim_ListResourceTypes', summary: 'The resource types served (User)' })
  @ApiOkResponse({ type: ScimResourceTypeListDto })
  @ApiScimErrorResponses()
  listResourceTypes(
    @Query() query: Record<string, unknown>,
    @Req() request: FastifyRequest,
  ): ListOf<ResourceTypeRepresentation> {
    refuseFilter(query);
    return listOf(resourceTypes(scimBaseUrl(request)));
  }

  @Get('ResourceTypes/:id')
  @Header('Content-Type', SCIM_CONTENT_TYPE)
  @ApiOperation({ operationId: 'Scim_GetResourceType', summary: 'One resource type' })
  @ApiParam({ name: 'id', example: 'User' })
  @ApiOkResponse({ type: ScimResourceTypeDto })
  @ApiScimErrorResponses(404)
  getResourceType(@Param('id') id: string, @Req() request: FastifyRequest): ResourceTypeRepresentation {
    const found = findResourceType(scimBaseUrl(request), id);
    if (found === undefined) throw ScimError.resourceNotFound(`No resource type "${quotedId(id)}".`);
    return found;
  }

  @Get('Schemas')
  @Header('Content-Type', SCIM_CONTENT_TYPE)
  @ApiOperation({ operationId: 'Scim_ListSchemas', summary: 'The User and enterprise User schemas' })
  @ApiOkResponse({ type: ScimSchemaListDto })
  @ApiScimErrorResponses()
  listSchemas(
    @Query() query: Record<string, unknown>,
    @Req() request: FastifyRequest,
  ): ListOf<ScimSchemaRepresentation> {
    refuseFilter(query);
    return listOf(schemas(scimBaseUrl(request)));
  }

  @Get('Schemas/:id')
  @Header('Content-Type', SCIM_CONTENT_TYPE)
  @ApiOperation({ operationId: 'Scim_GetSchema', summary: 'One schema, by its URN' })
  @ApiParam({ name: 'id', example: 'urn:ietf:params:scim:schemas:core:2.0:User' })
  @ApiOkResponse({ type: ScimSchemaDto })
  @ApiScimErrorResponses(404)
  getSchema(@Param('id') id: string, @Req() request: FastifyRequest): ScimSchemaRepresentation {
    const found = findSchemaRepresentation(scimBaseUrl(request), id);
    if (found === undefined) throw ScimError.resourceNotFound(`No schema "${quotedId(id)}".`);
    return found;
  }
}
