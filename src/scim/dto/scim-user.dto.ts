// OpenAPI descriptions of the SCIM bodies. They document, they do not validate: SCIM bodies carry arbitrary
// extension keys and many casings, so the controller takes them as `unknown` and the pure engine
// (normalizeUserInput, applyUserPatch) checks them against the attribute table, answering in SCIM's error schema.
import { ApiExtraModels, ApiProperty, ApiPropertyOptional, OmitType, getSchemaPath } from '@nestjs/swagger';
import { ApiObjectExample, ApiObjectRule } from '../../openapi/object-rules.js';
import { ATTRIBUTE_NAME_PATTERN, MAX_PROJECTION_NAMES } from '../schema/attribute-projection.js';
import { USER_SORT_BY } from '../scim-sort-by.js';
import { MAX_MULTI_VALUES } from '../patch/scim-value-coercion.js';
import { MAX_FILTER_LENGTH } from '../scim-list-filter.js';
import { MAX_EXTERNAL_ID, MAX_USER_NAME } from '../scim-users.service.js';
import { SCIM_PAGING_RANGE } from '../scim-http.js';

const USER_ID = '2819c223-7f76-453a-919d-413861904646';

/** A /.search body's attribute list: names (RFC 7643 §2.1; URN-qualified ones too, said in words). */
export const ATTRIBUTE_NAMES = {
  type: 'array',
  maxItems: MAX_PROJECTION_NAMES,
  items: { type: 'string', pattern: ATTRIBUTE_NAME_PATTERN },
} as const;

// Every sub-attribute of an answer is optional: `attributes=name.givenName` leaves the others out.
export class ScimMetaDto {
  @ApiPropertyOptional({ example: 'User' }) resourceType?: string;
  @ApiPropertyOptional({ example: '2026-11-22T08:15:31.412Z' }) created?: string;
  @ApiPropertyOptional({ example: '2026-11-22T09:02:10.007Z' }) lastModified?: string;
  @ApiPropertyOptional({ example: `https://api.example.com/api/v1/scim/Users/${USER_ID}` }) location?: string;
  @ApiPropertyOptional({ example: 'W/"3"', description: 'Equals the ETag header.' }) version?: string;
}

export class ScimNameDto {
  @ApiPropertyOptional({ nullable: true, example: 'Ms. Barbara J Jensen III' }) formatted?: string | null;
  @ApiPropertyOptional({ nullable: true, example: 'Jensen' }) familyName?: string | null;
  @ApiPropertyOptional({ nullable: true, example: 'Barbara' }) givenName?: string | null;
  @ApiPropertyOptional({ nullable: true, example: 'Jane' }) middleName?: string | null;
  @ApiPropertyOptional({ nullable: true, example: 'Ms.' }) honorificPrefix?: string | null;
  @ApiPropertyOptional({ nullable: true, example: 'III' }) honorificSuffix?: string | null;
}

export class ScimEmailDto {
  @ApiPropertyOptional({ nullable: true, example: 'work' }) type?: string | null;
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: null,
    description: 'Listed by the interface; kept as sent',
  })
  nullable?: string | null;
  @ApiPropertyOptional({ nullable: true, example: 'bjensen@example.com' }) value?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, example: null }) display?: string | null;
  @ApiPropertyOptional({ example: true }) primary?: boolean;
}

export class ScimRoleDto {
  @ApiPropertyOptional({ nullable: true, example: 'admin', description: 'RFC 7643 roles.value' }) Id?:
    string | null;
  @ApiPropertyOptional({ nullable: true, example: 'Administrator', description: 'RFC 7643 roles.display' })
  DisplayName?: string | null;
  @ApiPropertyOptional({ nullable: true, example: 'admin', description: 'RFC 7643 roles.value (= Id)' })
  value?: string | null;
  @ApiPropertyOptional({
    nullable: true,
    example: 'Administrator',
    description: 'RFC 7643 roles.display (= DisplayName)',
  })
  display?: string | null;
  @ApiPropertyOptional({ example: 'application', description: 'As sent' }) type?: string;
  @ApiPropertyOptional({ example: true, description: 'As sent' }) primary?: boolean;
}

/**
 * The User as every operation returns it (interface document, "User (SCIM representation)"). `attributes` /
 * `excludedAttributes` may leave any attribute but `schemas` and `id` out (RFC 7644 §3.9), so only those are required.
 */
export class ScimUserDto {
  @ApiProperty({ example: ['urn:ietf:params:scim:schemas:core:2.0:User'] }) schemas!: string[];
  @ApiProperty({ example: USER_ID }) id!: string;
  @ApiPropertyOptional({ nullable: true, example: '00u1dhhb1fkIGP7RL1d8' }) externalId?: string | null;
  @ApiPropertyOptional({ nullable: true, example: 'app-4711' }) applicationExternalId?: string | null;
  @ApiPropertyOptional({ type: ScimMetaDto }) meta?: ScimMetaDto;
  @ApiPropertyOptional({ type: String, nullable: true, example: null }) status?: string | null;
  @ApiPropertyOptional({ example: 'bjensen@example.com' }) userName?: string;
  @ApiPropertyOptional({ type: ScimNameDto, nullable: true }) name?: ScimNameDto | null;
  @ApiPropertyOptional({ nullable: true, example: 'Babs Jensen' }) displayName?: string | null;
  @ApiPropertyOptional({ nullable: true, example: 'en-US' }) preferredLanguage?: string | null;
  @ApiPropertyOptional({ nullable: true, example: 'en-US' }) locale?: string | null;
  @ApiPropertyOptional({ nullable: true, example: 'America/Los_Angeles' }) timezone?: string | null;
  @ApiPropertyOptional({ nullable: true, example: true }) active?: boolean | null;
  @ApiPropertyOptional({ type: [ScimEmailDto], nullable: true }) emails?: ScimEmailDto[] | null;
  @ApiPropertyOptional({ nullable: true, example: '04A224D2C35E80' }) nfc?: string | null;
  @ApiPropertyOptional({ type: [ScimRoleDto], nullable: true }) roles?: ScimRoleDto[] | null;
}

export class ScimNameInputDto {
  @ApiPropertyOptional({ type: String, nullable: true, example: 'Ms. Barbara J Jensen III' }) formatted?:
    string | null;
  @ApiPropertyOptional({ type: String, nullable: true, example: 'Jensen' }) familyName?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, example: 'Barbara' }) givenName?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, example: 'Jane' }) middleName?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, example: 'Ms.' }) honorificPrefix?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, example: 'III' }) honorificSuffix?: string | null;
}

export class ScimEmailInputDto {
  @ApiPropertyOptional({ type: String, nullable: true, example: 'bjensen@example.com' }) value?:
    string | null;
  @ApiPropertyOptional({ type: String, nullable: true, example: 'work' }) type?: string | null;
  @ApiPropertyOptional({ example: true, description: '"True"/"False" accepted' }) primary?: boolean;
  @ApiPropertyOptional({ type: String, nullable: true, example: 'Babs at work' }) display?: string | null;
}

export class ScimRoleInputDto {
  @ApiPropertyOptional({ type: String, nullable: true, example: 'admin', description: 'RFC 7643 form' })
  value?: string | null;
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: 'Administrator',
    description: 'RFC 7643 form',
  })
  display?: string | null;
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: 'admin',
    description: 'Interface document form of value; ignored when value is also given (value wins)',
  })
  Id?: string | null;
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: 'Administrator',
    description: 'Interface document form of display; ignored when display is also given (display wins)',
  })
  DisplayName?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, example: 'application' }) type?: string | null;
  @ApiPropertyOptional({ example: false }) primary?: boolean;
}

/** A create or replace body: a SCIM User in RFC 7643 form; names in any case, read-only members ignored. */
@ApiObjectRule({
  // RFC 7643 §2.4: "primary" is true for at most one value of a multi-valued attribute.
  properties: {
    emails: {
      contains: { properties: { primary: { const: true } }, required: ['primary'] },
      minContains: 0,
      maxContains: 1,
    },
  },
})
export class ScimUserInputDto {
  @ApiPropertyOptional({
    example: [
      'urn:ietf:params:scim:schemas:core:2.0:User',
      'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User',
    ],
  })
  schemas?: string[];
  @ApiProperty({ example: 'bjensen@example.com', minLength: 1, maxLength: MAX_USER_NAME }) userName!: string;
  @ApiPropertyOptional({ example: '00u1dhhb1fkIGP7RL1d8', maxLength: MAX_EXTERNAL_ID }) externalId?: string;
  @ApiPropertyOptional({ type: ScimNameInputDto, example: { givenName: 'Barbara', familyName: 'Jensen' } })
  name?: ScimNameInputDto;
  @ApiPropertyOptional({ example: 'Babs Jensen' }) displayName?: string;
  @ApiPropertyOptional({ example: true, description: 'true when absent on create; "True"/"False" accepted' })
  active?: boolean;
  @ApiPropertyOptional({
    type: [ScimEmailInputDto],
    maxItems: MAX_MULTI_VALUES,
    example: [{ type: 'work', value: 'bjensen@example.com', primary: true }],
    description: 'At most one with primary true.',
  })
  emails?: ScimEmailInputDto[];
  @ApiPropertyOptional({
    type: [ScimRoleInputDto],
    maxItems: MAX_MULTI_VALUES,
    example: [{ value: 'admin', display: 'Administrator' }],
    description: 'RFC form (value/display) or the interface document form (Id/DisplayName)',
  })
  roles?: ScimRoleInputDto[];
}

const REMOVE_PATTERN = '^[Rr][Ee][Mm][Oo][Vv][Ee]$';

/**
 * RFC 7644 §3.5.2.1/3: without a path, the value is an object of attribute paths and values; §3.5.2.2: a remove
 * without a path has no target (400 noTarget).
 */
export const NO_PATH_VALUE_IS_OBJECT = (path: string, value: string) => ({
  if: { not: { required: [path] } },
  then: {
    required: [value],
    properties: { [value]: { type: 'object' }, op: { not: { pattern: REMOVE_PATTERN } } },
  },
});

/**
 * `op` in any letter case, as the service reads it: RFC 7644 and Okta write `replace`, Entra ID `Replace`. A
 * pattern rather than an enum, because an enum would list some spellings and refuse the rest.
 */
export const PATCH_OP = {
  type: 'string',
  pattern: '^([Aa][Dd][Dd]|[Rr][Ee][Mm][Oo][Vv][Ee]|[Rr][Ee][Pp][Ll][Aa][Cc][Ee])$',
  example: 'replace',
} as const;

/** The spellings of `op` that add or replace (the rules that depend on the value use them). */
export const ADD_OR_REPLACE_PATTERN = '^([Aa][Dd][Dd]|[Rr][Ee][Pp][Ll][Aa][Cc][Ee])$';

const OP_DESCRIPTION =
  'add, remove or replace in any letter case (RFC 7644 and Okta write `replace`, Entra ID `Replace`); absent means replace.';

/** Two spellings of one member are refused (the service cannot tell which one is meant). */
export const NOT_BOTH = (a: string, b: string) => ({ not: { required: [a, b] } });

/** Operation 3's operation as the interface document writes it: `{Path, Value}` (and `op`). */
@ApiObjectRule(NO_PATH_VALUE_IS_OBJECT('Path', 'Value'))
export class ScimPatchOperationDto {
  @ApiPropertyOptional({ ...PATCH_OP, description: OP_DESCRIPTION }) op?: string;
  @ApiPropertyOptional({
    example: 'emails[type eq "work"].value',
    description:
      'An attribute path, also with a value filter (RFC 7644 §3.5.2). Absent: Value is an object of paths.',
  })
  Path?: string;
  @ApiPropertyOptional({
    example: 'bjensen@example.org',
    description: 'Any JSON value; a JSON object inside a string is read as that object.',
  })
  Value?: unknown;
}

/** The same operation as RFC 7644 §3.5.2, Entra ID and Okta write it: `{op, path, value}`. */
@ApiObjectRule(NO_PATH_VALUE_IS_OBJECT('path', 'value'))
export class ScimPatchOperationRfcDto {
  @ApiPropertyOptional({ ...PATCH_OP, description: OP_DESCRIPTION }) op?: string;
  @ApiPropertyOptional({
    example: 'emails[type eq "work"].value',
    description:
      'An attribute path, also with a value filter (RFC 7644 §3.5.2). Absent: value is an object of paths.',
  })
  path?: string;
  @ApiPropertyOptional({
    example: 'bjensen@example.org',
    description: 'Any JSON value; a JSON object inside a string is read as that object.',
  })
  value?: unknown;
}

const PATCH_OP_SCHEMAS = ['urn:ietf:params:scim:api:messages:2.0:PatchOp'];

/**
 * Operation 3's body: `{Schemas, Operations:[{Path, Value}]}` as the interface document writes it, or the RFC 7644
 * PatchOp `{schemas, Operations:[{op, path, value}]}`. The service reads member names in any letter case; the
 * document states these two spellings (each operation one or the other), which every client known sends.
 */
@ApiExtraModels(ScimPatchOperationDto, ScimPatchOperationRfcDto)
@ApiObjectRule(NOT_BOTH('Schemas', 'schemas'))
@ApiObjectExample({
  Schemas: PATCH_OP_SCHEMAS,
  Operations: [{ op: 'replace', Path: 'emails[type eq "work"].value', Value: 'bjensen@example.org' }],
})
export class ScimPatchRequestDto {
  @ApiPropertyOptional({ example: PATCH_OP_SCHEMAS, description: "The interface document's spelling" })
  Schemas?: string[];
  @ApiPropertyOptional({ type: [String], description: "RFC 7644's spelling (not together with Schemas)" })
  schemas?: string[];
  @ApiProperty({
    type: 'array',
    minItems: 1,
    description:
      'Each operation as `{op, Path, Value}` (the interface document) or `{op, path, value}` (RFC 7644).',
    items: {
      anyOf: [
        { $ref: getSchemaPath(ScimPatchOperationDto) },
        { $ref: getSchemaPath(ScimPatchOperationRfcDto) },
      ],
    },
  })
  Operations!: Array<ScimPatchOperationDto | ScimPatchOperationRfcDto>;
}

export class ScimListResponseDto {
  @ApiProperty({ example: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'] }) schemas!: string[];
  @ApiProperty({ type: 'integer', example: 1 }) totalResults!: number;
  @ApiProperty({ type: 'integer', example: 1 }) startIndex!: number;
  @ApiProperty({ type: 'integer', example: 1 }) itemsPerPage!: number;
  @ApiProperty({ type: [ScimUserDto] }) Resources!: ScimUserDto[];
}

export class ScimSearchRequestDto {
  @ApiPropertyOptional({ example: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'] })
  schemas?: string[];
  @ApiPropertyOptional({ example: 'userName eq "bjensen@example.com"', maxLength: MAX_FILTER_LENGTH })
  filter?: string;
  @ApiPropertyOptional({ type: 'integer', example: 1, ...SCIM_PAGING_RANGE }) startIndex?: number;
  @ApiPropertyOptional({ type: 'integer', example: 100, ...SCIM_PAGING_RANGE }) count?: number;
  @ApiPropertyOptional({ example: 'userName', enum: [...USER_SORT_BY] }) sortBy?: string;
  @ApiPropertyOptional({ enum: ['ascending', 'descending'], example: 'ascending' }) sortOrder?: string;
  @ApiPropertyOptional({
    example: ['userName', 'emails'],
    ...ATTRIBUTE_NAMES,
    description:
      'Attributes to return (names as in the `attributes` parameter); not together with excludedAttributes.',
  })
  attributes?: string[];
  @ApiPropertyOptional({
    ...ATTRIBUTE_NAMES,
    description: 'Attributes to leave out (e.g. ["roles"]); not together with attributes (400 invalidValue).',
  })
  excludedAttributes?: string[];
}

/** The root `/.search` body (RFC 7644 §3.4.3): no sorting across resource types (400 invalidValue). */
export class ScimRootSearchRequestDto extends OmitType(ScimSearchRequestDto, [
  'sortBy',
  'sortOrder',
] as const) {}

export class ScimErrorDto {
  @ApiProperty({ example: ['urn:ietf:params:scim:api:messages:2.0:Error'] }) schemas!: string[];
  @ApiProperty({ example: '400', description: 'The HTTP status, as a string.' }) status!: string;
  @ApiPropertyOptional({
    example: 'invalidFilter',
    description: 'RFC 7644 §3.12 error type; present on 400 and on 409 uniqueness.',
  })
  scimType?: string;
  @ApiProperty({ example: 'Expected an operator (eq, ne, co, …) at position 9' }) detail!: string;
}
