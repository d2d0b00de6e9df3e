// OpenAPI descriptions of the SCIM Group bodies (RFC 7643 §4.2, RFC 7644 §3.3–§3.7). Like the User DTOs they
// document, they do not validate: the controller takes the bodies as `unknown` and the group engine checks them.
// A projection (attributes / excludedAttributes) may leave any attribute but id and schemas out of an answer, and any
// sub-attribute (attributes=members.value), so those are optional in the answers.
import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { MAX_GROUP_NAME } from '../patch/group-patch.js';
import { GROUP_SORT_BY } from '../scim-sort-by.js';
import { MAX_FILTER_LENGTH } from '../scim-list-filter.js';
import { ApiObjectExample, ApiObjectRule } from '../../openapi/object-rules.js';
import {
  ADD_OR_REPLACE_PATTERN,
  ATTRIBUTE_NAMES,
  NOT_BOTH,
  NO_PATH_VALUE_IS_OBJECT,
  PATCH_OP,
  ScimUserDto,
} from './scim-user.dto.js';
import { SCIM_PAGING_RANGE } from '../scim-http.js';

const GROUP_ID = 'e9e30dba-f08f-4109-8486-d5c6a331660a';
const USER_ID = '2819c223-7f76-453a-919d-413861904646';

export class ScimGroupMetaDto {
  @ApiPropertyOptional({ example: 'Group' }) resourceType?: string;
  @ApiPropertyOptional({ example: '2026-11-22T08:15:31.412Z' }) created?: string;
  @ApiPropertyOptional({ example: '2026-11-22T09:02:10.007Z' }) lastModified?: string;
  @ApiPropertyOptional({ example: `https://api.example.com/api/v1/scim/Groups/${GROUP_ID}` })
  location?: string;
  @ApiPropertyOptional({ example: 'W/"3"', description: 'Equals the ETag header.' }) version?: string;
}

export class ScimGroupMemberDto {
  @ApiPropertyOptional({ example: USER_ID, description: "The member user's id" }) value?: string;
  @ApiPropertyOptional({ example: `https://api.example.com/api/v1/scim/Users/${USER_ID}` }) $ref?: string;
  @ApiPropertyOptional({ type: String, nullable: true, example: 'Babs Jensen' }) display?: string | null;
  @ApiPropertyOptional({ example: 'User', enum: ['User'] }) type?: string;
}

/** The Group as every Groups answer carries it. */
export class ScimGroupDto {
  @ApiProperty({ example: ['urn:ietf:params:scim:schemas:core:2.0:Group'] }) schemas!: string[];
  @ApiProperty({ example: GROUP_ID }) id!: string;
  @ApiPropertyOptional({ example: 'sales-0042' }) externalId?: string;
  @ApiPropertyOptional({ example: 'Sales' }) displayName?: string;
  @ApiPropertyOptional({
    type: [ScimGroupMemberDto],
    description: 'Absent when excludedAttributes=members (or attributes leaves it out)',
  })
  members?: ScimGroupMemberDto[];
  @ApiPropertyOptional({ type: ScimGroupMetaDto }) meta?: ScimGroupMetaDto;
}

export class ScimGroupMemberInputDto {
  @ApiProperty({
    example: USER_ID,
    minLength: 1,
    description: "The member user's id: a user that exists (else 400 invalidValue, the data decides it).",
  })
  value!: string;
  @ApiPropertyOptional({ example: 'Babs Jensen', description: 'Ignored (read from the user)' })
  display?: string;
  @ApiPropertyOptional({ example: 'User', enum: ['User'] }) type?: string;
  @ApiPropertyOptional({ example: `https://api.example.com/api/v1/scim/Users/${USER_ID}` }) $ref?: string;
}

/** A create or replace body; member names in any case, read-only members (id, meta) ignored. */
export class ScimGroupInputDto {
  @ApiPropertyOptional({ example: ['urn:ietf:params:scim:schemas:core:2.0:Group'] }) schemas?: string[];
  @ApiProperty({ example: 'Sales', minLength: 1, description: 'Unique case-insensitively (409 uniqueness)' })
  displayName!: string;
  @ApiPropertyOptional({ example: 'sales-0042' }) externalId?: string;
  // No member in the example: a member must name an existing user, which a fresh instance has none of.
  @ApiPropertyOptional({ type: [ScimGroupMemberInputDto], example: [] }) members?: ScimGroupMemberInputDto[];
}

export class ScimGroupListResponseDto {
  @ApiProperty({ example: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'] }) schemas!: string[];
  @ApiProperty({ type: 'integer', example: 1 }) totalResults!: number;
  @ApiProperty({ type: 'integer', example: 1 }) startIndex!: number;
  @ApiProperty({ type: 'integer', example: 1 }) itemsPerPage!: number;
  @ApiProperty({ type: [ScimGroupDto] }) Resources!: ScimGroupDto[];
}

/** displayName and externalId are strings (RFC 7643 §4.2) when added or replaced (also by an operation without op). */
const NAME_VALUE_IS_STRING = (path: string, value: string) => ({
  if: {
    required: [path],
    properties: { op: { pattern: ADD_OR_REPLACE_PATTERN }, [path]: { enum: ['displayName', 'externalId'] } },
  },
  then: { required: [value], properties: { [value]: { type: 'string', maxLength: MAX_GROUP_NAME } } },
});

const GROUP_PATH_DESCRIPTION =
  'members, members[value eq "…"] (a value filter), displayName, externalId; absent: the value is an object of paths.';

/** A Groups PATCH operation as RFC 7644 §3.5.2, Entra ID and Okta write it: `{op, path, value}`. */
@ApiObjectRule(NO_PATH_VALUE_IS_OBJECT('path', 'value'))
@ApiObjectRule(NAME_VALUE_IS_STRING('path', 'value'))
export class ScimGroupPatchOperationDto {
  @ApiPropertyOptional({
    ...PATCH_OP,
    description: 'add, remove or replace in any letter case (Entra ID writes `Add`); absent means replace.',
  })
  op?: string;
  @ApiPropertyOptional({ example: 'externalId', description: GROUP_PATH_DESCRIPTION }) path?: string;
  @ApiPropertyOptional({
    example: 'sales-0043',
    description: 'Any JSON value (an array of members, a string, an object of paths…)',
  })
  value?: unknown;
}

/** The same operation in the interface document's spelling (`{op, Path, Value}`, as operation 3 writes it). */
@ApiObjectRule(NO_PATH_VALUE_IS_OBJECT('Path', 'Value'))
@ApiObjectRule(NAME_VALUE_IS_STRING('Path', 'Value'))
export class ScimGroupPatchOperationInterfaceDto {
  @ApiPropertyOptional({
    ...PATCH_OP,
    description: 'add, remove or replace in any letter case; absent means replace.',
  })
  op?: string;
  @ApiPropertyOptional({ example: 'externalId', description: GROUP_PATH_DESCRIPTION }) Path?: string;
  @ApiPropertyOptional({
    example: 'sales-0043',
    description: 'Any JSON value (an array of members, a string, an object of paths…)',
  })
  Value?: unknown;
}

/**
 * RFC 7644 §3.5.2 PatchOp. The service reads member names in any letter case; the document states RFC 7644's
 * spelling and the interface document's (`Schemas`, `Path`, `Value`), each operation one or the other.
 */
@ApiExtraModels(ScimGroupPatchOperationDto, ScimGroupPatchOperationInterfaceDto)
@ApiObjectRule(NOT_BOTH('Schemas', 'schemas'))
@ApiObjectExample({
  schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
  Operations: [{ op: 'replace', path: 'externalId', value: 'sales-0043' }],
})
export class ScimGroupPatchRequestDto {
  @ApiPropertyOptional({ example: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'] }) schemas?: string[];
  @ApiPropertyOptional({
    type: [String],
    description: "The interface document's spelling (not together with schemas)",
  })
  Schemas?: string[];
  @ApiProperty({
    type: 'array',
    minItems: 1,
    description: 'Each operation as `{op, path, value}` (RFC 7644) or `{op, Path, Value}`.',
    items: {
      anyOf: [
        { $ref: getSchemaPath(ScimGroupPatchOperationDto) },
        { $ref: getSchemaPath(ScimGroupPatchOperationInterfaceDto) },
      ],
    },
  })
  Operations!: Array<ScimGroupPatchOperationDto | ScimGroupPatchOperationInterfaceDto>;
}

/** RFC 7644 §3.4.3 SearchRequest for groups: the list's query parameters in a body. */
export class ScimGroupSearchRequestDto {
  @ApiPropertyOptional({ example: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'] })
  schemas?: string[];
  @ApiPropertyOptional({ example: 'displayName eq "Sales"', maxLength: MAX_FILTER_LENGTH }) filter?: string;
  @ApiPropertyOptional({ type: 'integer', example: 1, ...SCIM_PAGING_RANGE }) startIndex?: number;
  @ApiPropertyOptional({ type: 'integer', example: 100, ...SCIM_PAGING_RANGE }) count?: number;
  @ApiPropertyOptional({ example: 'displayName', enum: [...GROUP_SORT_BY] }) sortBy?: string;
  @ApiPropertyOptional({ enum: ['ascending', 'descending'], example: 'ascending' }) sortOrder?: string;
  @ApiPropertyOptional({
    example: ['displayName'],
    ...ATTRIBUTE_NAMES,
    description:
      'Attributes to return (names as in the `attributes` parameter); not together with excludedAttributes.',
  })
  attributes?: string[];
  @ApiPropertyOptional({
    ...ATTRIBUTE_NAMES,
    description:
      'Attributes to leave out (e.g. ["members"]); not together with attributes (400 invalidValue).',
  })
  excludedAttributes?: string[];
}

/** The root `/.search` answer (RFC 7644 §3.4.3): users, then groups. */
@ApiExtraModels(ScimUserDto, ScimGroupDto)
export class ScimRootListResponseDto {
  @ApiProperty({ example: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'] }) schemas!: string[];
  @ApiProperty({ type: 'integer', example: 2 }) totalResults!: number;
  @ApiProperty({ type: 'integer', example: 1 }) startIndex!: number;
  @ApiProperty({ type: 'integer', example: 2 }) itemsPerPage!: number;
  @ApiProperty({
    type: 'array',
    description: 'Users (schema urn:ietf:params:scim:schemas:core:2.0:User) first, then Groups (…:Group)',
    items: { anyOf: [{ $ref: getSchemaPath(ScimUserDto) }, { $ref: getSchemaPath(ScimGroupDto) }] },
  })
  Resources!: Array<ScimUserDto | ScimGroupDto>;
}
