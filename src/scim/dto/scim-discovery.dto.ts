// OpenAPI descriptions of the discovery answers (RFC 7643 §5–§7); the bodies are built in scim-discovery.ts.
import { ApiProperty } from '@nestjs/swagger';

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

export class ScimSchemaDto {
  @ApiProperty({ example: ['urn:ietf:params:scim:schemas:core:2.0:Schema'] }) schemas!: string[];
  @ApiProperty({ example: 'urn:ietf:params:scim:schemas:core:2.0:User' }) id!: string;
  @ApiProperty({ example: 'User' }) name!: string;
  @ApiProperty({ example: 'User Account' }) description!: string;
  @ApiProperty({
    type: 'array',
    items: { type: 'object' },
    example: [{ name: 'userName', type: 'string', multiValued: false, required: true, caseExact: false }],
    description: 'RFC 7643 §7 attribute definitions',
  })
  attributes!: object[];
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
