// OpenAPI descriptions of the discovery answers (RFC 7643 §5–§7); the bodies are built in scim-discovery.ts.
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  SCIM_ATTRIBUTE_TYPES,
  SCIM_MUTABILITIES,
  SCIM_RETURNED,
  SCIM_UNIQUENESS,
} from '../schema/scim-schema.types.js';

export class ScimSupportedDto {
  @ApiProperty({ example: true }) supported!: boolean;
}

export class ScimFilterSupportDto {
  @ApiProperty({ example: true }) supported!: boolean;
  @ApiProperty({ example: 1000 }) maxResults!: number;
}

export class ScimBulkSupportDto {
  @ApiProperty({ example: false }) supported!: boolean;
  @ApiProperty({ example: 0 }) maxOperations!: number;
  @ApiProperty({ example: 0 }) maxPayloadSize!: number;
}

export class ScimAuthenticationSchemeDto {
  @ApiProperty({ example: 'oauthbearertoken' }) type!: string;
  @ApiProperty({ example: 'OAuth Bearer Token' }) name!: string;
  @ApiProperty({ example: 'An API key of the service with the "users" scope' }) description!: string;
  @ApiProperty({ example: 'https://www.rfc-editor.org/info/rfc6750' }) specUri!: string;
  @ApiProperty({ type: String, nullable: true, example: null }) documentationUri!: string | null;
  @ApiProperty({ example: true }) primary!: boolean;
}

export class ScimDiscoveryMetaDto {
  @ApiProperty({ example: 'ServiceProviderConfig' }) resourceType!: string;
  @ApiProperty({ example: 'https://api.example.com/api/v1/scim/ServiceProviderConfig' }) location!: string;
}

export class ScimServiceProviderConfigDto {
  @ApiProperty({ example: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'] })
  schemas!: string[];
  @ApiProperty({ type: String, nullable: true, example: null }) documentationUri!: string | null;
  @ApiProperty({ type: ScimSupportedDto }) patch!: ScimSupportedDto;
  @ApiProperty({ type: ScimBulkSupportDto }) bulk!: ScimBulkSupportDto;
  @ApiProperty({ type: ScimFilterSupportDto }) filter!: ScimFilterSupportDto;
  @ApiProperty({ type: ScimSupportedDto }) changePassword!: ScimSupportedDto;
  @ApiProperty({ type: ScimSupportedDto }) sort!: ScimSupportedDto;
  @ApiProperty({ type: ScimSupportedDto }) etag!: ScimSupportedDto;
  @ApiProperty({ type: [ScimAuthenticationSchemeDto] }) authenticationSchemes!: ScimAuthenticationSchemeDto[];
  @ApiProperty({ type: ScimDiscoveryMetaDto }) meta!: ScimDiscoveryMetaDto;
}

export class ScimSchemaExtensionDto {
  @ApiProperty({ example: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User' }) schema!: string;
  @ApiProperty({ example: false }) required!: boolean;
}

export class ScimResourceTypeDto {
  @ApiProperty({ example: ['urn:ietf:params:scim:schemas:core:2.0:ResourceType'] }) schemas!: string[];
  @ApiProperty({ example: 'User' }) id!: string;
  @ApiProperty({ example: 'User' }) name!: string;
  @ApiProperty({ example: '/Users' }) endpoint!: string;
  @ApiProperty({ example: 'User Account' }) description!: string;
  @ApiProperty({ example: 'urn:ietf:params:scim:schemas:core:2.0:User' }) schema!: string;
  @ApiProperty({ type: [ScimSchemaExtensionDto] }) schemaExtensions!: ScimSchemaExtensionDto[];
  @ApiProperty({ type: ScimDiscoveryMetaDto }) meta!: ScimDiscoveryMetaDto;
}

/** RFC 7643 §7: one attribute definition of a /Schemas resource (sub-attributes of a complex one nested). */
export class ScimSchemaAttributeDto {
  @ApiProperty({ example: 'userName' }) name!: string;
  @ApiProperty({ enum: SCIM_ATTRIBUTE_TYPES, example: 'string' }) type!: string;
  @ApiProperty({ example: false }) multiValued!: boolean;
  @ApiProperty({ example: 'Unique identifier for the User, used to authenticate.' }) description!: string;
  @ApiProperty({ example: true }) required!: boolean;
  @ApiProperty({ example: false, description: 'Whether comparisons are case-sensitive' }) caseExact!: boolean;
  @ApiProperty({ enum: SCIM_MUTABILITIES, example: 'readWrite' }) mutability!: string;
  @ApiProperty({ enum: SCIM_RETURNED, example: 'default' }) returned!: string;
  @ApiProperty({ enum: SCIM_UNIQUENESS, example: 'server' }) uniqueness!: string;
  @ApiPropertyOptional({
    type: [String],
    example: ['work', 'home', 'other'],
    description: 'Suggested values',
  })
  canonicalValues?: string[];
  @ApiPropertyOptional({
    type: [String],
    example: ['User'],
    description: 'Of a reference: the resource types (or `external`, `uri`) it may name',
  })
  referenceTypes?: string[];
  @ApiPropertyOptional({
    type: () => [ScimSchemaAttributeDto],
    description: 'Of a complex attribute: its sub-attributes (no further nesting in RFC 7643)',
  })
  subAttributes?: ScimSchemaAttributeDto[];
}

export class ScimSchemaDto {
  @ApiProperty({ example: ['urn:ietf:params:scim:schemas:core:2.0:Schema'] }) schemas!: string[];
  @ApiProperty({ example: 'urn:ietf:params:scim:schemas:core:2.0:User' }) id!: string;
  @ApiProperty({ example: 'User' }) name!: string;
  @ApiProperty({ example: 'User Account' }) description!: string;
  @ApiProperty({ type: [ScimSchemaAttributeDto], description: 'RFC 7643 §7 attribute definitions' })
  attributes!: ScimSchemaAttributeDto[];
  @ApiProperty({ type: ScimDiscoveryMetaDto }) meta!: ScimDiscoveryMetaDto;
}

export class ScimResourceTypeListDto {
  @ApiProperty({ example: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'] }) schemas!: string[];
  @ApiProperty({ type: 'integer', example: 1 }) totalResults!: number;
  @ApiProperty({ type: 'integer', example: 1 }) startIndex!: number;
  @ApiProperty({ type: 'integer', example: 1 }) itemsPerPage!: number;
  @ApiProperty({ type: [ScimResourceTypeDto] }) Resources!: ScimResourceTypeDto[];
}

export class ScimSchemaListDto {
  @ApiProperty({ example: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'] }) schemas!: string[];
  @ApiProperty({ type: 'integer', example: 2 }) totalResults!: number;
  @ApiProperty({ type: 'integer', example: 1 }) startIndex!: number;
  @ApiProperty({ type: 'integer', example: 2 }) itemsPerPage!: number;
  @ApiProperty({ type: [ScimSchemaDto] }) Resources!: ScimSchemaDto[];
}
