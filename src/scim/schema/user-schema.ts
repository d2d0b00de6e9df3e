// The one attribute table for the SCIM User resource: RFC 7643 §3.1 (common attributes), §4.1 (User, limited to
// the attributes this service stores), §4.3 (enterprise extension) and the service's own top-level attributes
// from the interface document (applicationExternalId, status, nfc). Filter, PATCH engine, input normalisation
// and the /Schemas endpoint all read it, so adding an attribute here makes it filterable, patchable and listed.
import type {
  ScimAttributeDefinition,
  ScimAttributeType,
  ScimMutability,
  ScimResourceSchema,
  ScimSchemaDefinition,
} from './scim-schema.types.js';

export const CORE_USER_SCHEMA_ID = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const ENTERPRISE_USER_SCHEMA_ID = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const PATCH_OP_MESSAGE_ID = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

interface AttributeOptions {
  readonly type?: ScimAttributeType;
  readonly multiValued?: boolean;
  readonly required?: boolean;
  readonly caseExact?: boolean;
  readonly mutability?: ScimMutability;
  readonly returned?: ScimAttributeDefinition['returned'];
  readonly uniqueness?: ScimAttributeDefinition['uniqueness'];
  readonly canonicalValues?: readonly string[];
  readonly referenceTypes?: readonly string[];
  readonly subAttributes?: readonly ScimAttributeDefinition[];
  readonly inputAliases?: readonly string[];
  readonly unqualified?: boolean;
}

// RFC 7643 §2.2 defaults, so the table below only states what differs from them.
export function attribute(
  name: string,
  description: string,
  options: AttributeOptions = {},
): ScimAttributeDefinition {
  return {
    name,
    type: options.type ?? 'string',
    multiValued: options.multiValued ?? false,
    required: options.required ?? false,
    caseExact: options.caseExact ?? false,
    mutability: options.mutability ?? 'readWrite',
    returned: options.returned ?? 'default',
    uniqueness: options.uniqueness ?? 'none',
    description,
    ...(options.canonicalValues ? { canonicalValues: options.canonicalValues } : {}),
    ...(options.referenceTypes ? { referenceTypes: options.referenceTypes } : {}),
    ...(options.subAttributes ? { subAttributes: options.subAttributes } : {}),
    ...(options.inputAliases ? { inputAliases: options.inputAliases } : {}),
    ...(options.unqualified === true ? { unqualified: true } : {}),
  };
}

function primary(what: string): ScimAttributeDefinition {
  return attribute('primary', `A Boolean value indicating the 'primary' or preferred ${what}.`, {
    type: 'boolean',
  });
}

function multiValuedComplex(
  name: string,
  description: string,
  subAttributes: readonly ScimAttributeDefinition[],
): ScimAttributeDefinition {
  return attribute(name, description, { type: 'complex', multiValued: true, subAttributes });
}

export const COMMON_ATTRIBUTES: readonly ScimAttributeDefinition[] = [
  attribute('id', 'Unique identifier for the SCIM resource as defined by the service provider.', {
    caseExact: true,
    mutability: 'readOnly',
    returned: 'always',
    uniqueness: 'server',
  }),
  attribute('externalId', 'Identifier for the resource as defined by the provisioning client.', {
    caseExact: true,
  }),
  attribute('meta', 'Resource metadata.', {
    type: 'complex',
    mutability: 'readOnly',
    subAttributes: [
      attribute('resourceType', 'The name of the resource type of the resource.', {
        caseExact: true,
        mutability: 'readOnly',
      }),
      attribute('created', 'The DateTime that the resource was added to the service provider.', {
        type: 'dateTime',
        mutability: 'readOnly',
      }),
      attribute('lastModified', 'The most recent DateTime that the details of this resource were updated.', {
        type: 'dateTime',
        mutability: 'readOnly',
      }),
      attribute('location', 'The URI of the resource being returned.', {
        type: 'reference',
        caseExact: true,
        mutability: 'readOnly',
        referenceTypes: ['uri'],
      }),
      attribute('version', 'The version of the resource being returned (equals the ETag).', {
        caseExact: true,
        mutability: 'readOnly',
      }),
    ],
  }),
];

export const USER_SCHEMA: ScimSchemaDefinition = {
  id: CORE_USER_SCHEMA_ID,
  name: 'User',
  description: 'User Account',
  attributes: [
    attribute('userName', 'Unique identifier for the User, compared case-insensitively.', {
      required: true,
      uniqueness: 'server',
    }),
    attribute('name', "The components of the user's real name.", {
      type: 'complex',
      subAttributes: [
        attribute('formatted', 'The full name, formatted for display.'),
        attribute('familyName', 'The family name of the User.'),
        attribute('givenName', 'The given name of the User.'),
        attribute('middleName', 'The middle name(s) of the User.'),
        attribute('honorificPrefix', "The honorific prefix(es) of the User, e.g. 'Ms.'."),
        attribute('honorificSuffix', "The honorific suffix(es) of the User, e.g. 'III'."),
      ],
    }),
    attribute('displayName', 'The name of the User, suitable for display to end-users.'),
    attribute('nickName', 'The casual way to address the user in real life.'),
    attribute('title', "The user's title, such as 'Vice President'."),
    attribute('userType', 'Used to identify the relationship between the organization and the user.'),
    attribute(
      'preferredLanguage',
      "The User's preferred written or spoken language (RFC 7231 language tag).",
    ),
    attribute('locale', "The User's default location for localisation, e.g. 'en-US'."),
    attribute('timezone', "The User's time zone in IANA format, e.g. 'Europe/Berlin'."),
    attribute('active', "A Boolean value indicating the User's administrative status.", { type: 'boolean' }),
    multiValuedComplex('emails', 'Email addresses for the user.', [
      attribute('value', 'Email address for the user.'),
      // The interface document lists `nullable` on emails without saying what it means: kept as sent, so a client
      // can send back what it read.
      attribute('nullable', 'Listed by the service interface for emails; stored and returned as sent.'),
      attribute('display', 'A human-readable name, primarily used for display purposes.'),
      attribute('type', "A label indicating the attribute's function, e.g. 'work' or 'home'.", {
        canonicalValues: ['work', 'home', 'other'],
      }),
      primary('mail address'),
    ]),
    multiValuedComplex('phoneNumbers', 'Phone numbers for the User.', [
      attribute('value', 'Phone number of the User.'),
      attribute('display', 'A human-readable name, primarily used for display purposes.'),
      attribute('type', "A label indicating the attribute's function, e.g. 'work' or 'mobile'.", {
        canonicalValues: ['work', 'home', 'mobile', 'fax', 'pager', 'other'],
      }),
      primary('phone number'),
    ]),
    multiValuedComplex('addresses', 'A physical mailing address for this User.', [
      attribute('formatted', 'The full mailing address, formatted for display.'),
      attribute('streetAddress', 'The full street address component.'),
      attribute('locality', 'The city or locality component.'),
      attribute('region', 'The state or region component.'),
      attribute('postalCode', 'The zip code or postal code component.'),
      attribute('country', 'The country name component (ISO 3166-1 alpha-2).'),
      attribute('type', "A label indicating the attribute's function, e.g. 'work' or 'home'.", {
        canonicalValues: ['work', 'home', 'other'],
      }),
      primary('mailing address'),
    ]),
    multiValuedComplex('roles', 'A list of roles for the User (emitted as Id/DisplayName by the service).', [
      attribute('value', 'The value of a role (the role identifier).', { inputAliases: ['id'] }),
      attribute('display', 'A human-readable name, primarily used for display purposes.', {
        inputAliases: ['displayName'],
      }),
      attribute('type', "A label indicating the role's function."),
      primary('role'),
    ]),
    // The service's own top-level attributes (interface document, "User (SCIM representation)").
    attribute('applicationExternalId', 'Identifier of the user in the consuming application.', {
      caseExact: true,
    }),
    attribute('status', 'Provisioning status of the user in the service.'),
    attribute('nfc', 'NFC badge identifier of the user.', { caseExact: true }),
  ],
};

export const ENTERPRISE_USER_SCHEMA: ScimSchemaDefinition = {
  id: ENTERPRISE_USER_SCHEMA_ID,
  name: 'EnterpriseUser',
  description: 'Enterprise User',
  attributes: [
    attribute('employeeNumber', 'Numeric or alphanumeric identifier assigned to a person.'),
    attribute('costCenter', 'Identifies the name of a cost center.'),
    attribute('organization', 'Identifies the name of an organization.'),
    attribute('division', 'Identifies the name of a division.'),
    attribute('department', 'Identifies the name of a department.'),
    attribute('manager', "The User's manager.", {
      type: 'complex',
      // Microsoft Entra ID: PATCH path `manager` and the filter `manager eq "<id>"`, without the URN.
      unqualified: true,
      subAttributes: [
        attribute('value', 'The id of the SCIM resource representing the User’s manager.'),
        attribute('$ref', 'The URI of the SCIM resource representing the User’s manager.', {
          type: 'reference',
          referenceTypes: ['User'],
        }),
        // RFC 7643 §4.3: readOnly, so a client's value is ignored (this service does not fill it in).
        attribute('displayName', 'The displayName of the User’s manager.', { mutability: 'readOnly' }),
      ],
    }),
  ],
};

/**
 * RFC 7643 §4.1 User attributes this service does not store. Okta sends `password` and `groups` in create
 * bodies, so these are accepted and dropped rather than refused; names outside RFC 7643 are still refused.
 */
export const UNSUPPORTED_USER_ATTRIBUTES: readonly string[] = [
  'password',
  'groups',
  'profileUrl',
  'ims',
  'photos',
  'entitlements',
  'x509Certificates',
];

export const USER_RESOURCE_SCHEMA: ScimResourceSchema = {
  name: 'User',
  endpoint: '/Users',
  commonAttributes: COMMON_ATTRIBUTES,
  core: USER_SCHEMA,
  extensions: [ENTERPRISE_USER_SCHEMA],
};

export interface ScimMeta {
  resourceType?: string;
  created?: string;
  lastModified?: string;
  location?: string;
  version?: string;
}

export interface ScimName {
  formatted?: string;
  familyName?: string;
  givenName?: string;
  middleName?: string;
  honorificPrefix?: string;
  honorificSuffix?: string;
}

/** Element of emails, phoneNumbers and roles (RFC 7643 §2.4 multi-valued sub-attributes). */
export interface ScimMultiValue {
  value?: string;
  nullable?: string;
  display?: string;
  type?: string;
  primary?: boolean;
}

export interface ScimAddress {
  formatted?: string;
  streetAddress?: string;
  locality?: string;
  region?: string;
  postalCode?: string;
  country?: string;
  type?: string;
  primary?: boolean;
}

export interface ScimEnterpriseUser {
  employeeNumber?: string;
  costCenter?: string;
  organization?: string;
  division?: string;
  department?: string;
  manager?: { value?: string; $ref?: string };
}

/** A User in SCIM core-schema form, as the PATCH engine and normalisation read and write it. */
export interface ScimUser {
  schemas?: string[];
  id?: string;
  externalId?: string;
  meta?: ScimMeta;
  userName: string;
  name?: ScimName;
  displayName?: string;
  nickName?: string;
  title?: string;
  userType?: string;
  preferredLanguage?: string;
  locale?: string;
  timezone?: string;
  active?: boolean;
  emails?: ScimMultiValue[];
  phoneNumbers?: ScimMultiValue[];
  addresses?: ScimAddress[];
  roles?: ScimMultiValue[];
  applicationExternalId?: string;
  status?: string;
  nfc?: string;
  [ENTERPRISE_USER_SCHEMA_ID]?: ScimEnterpriseUser;
}
