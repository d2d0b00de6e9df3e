// RFC 7643 §4.2 Group: the attribute table behind /Schemas and /ResourceTypes for Groups, and the `returned`
// characteristics the attributes/excludedAttributes projection reads.
import type { ScimResourceSchema, ScimSchemaDefinition } from './scim-schema.types.js';
import { attribute, COMMON_ATTRIBUTES, USER_RESOURCE_SCHEMA } from './user-schema.js';

export const CORE_GROUP_SCHEMA_ID = 'urn:ietf:params:scim:schemas:core:2.0:Group';

export const GROUP_SCHEMA: ScimSchemaDefinition = {
  id: CORE_GROUP_SCHEMA_ID,
  name: 'Group',
  description: 'Group',
  attributes: [
    // Unique (case-insensitively) as Microsoft Entra ID requires to match groups; RFC 7643 does not.
    attribute('displayName', 'A human-readable name for the Group. REQUIRED.', {
      required: true,
      uniqueness: 'server',
    }),
    attribute('members', 'A list of members of the Group (Users of this service).', {
      type: 'complex',
      multiValued: true,
      subAttributes: [
        attribute('value', 'Identifier of the member of this Group.', {
          caseExact: true,
          mutability: 'immutable',
        }),
        attribute('$ref', 'The URI of the member resource.', {
          type: 'reference',
          caseExact: true,
          mutability: 'immutable',
          referenceTypes: ['User'],
        }),
        attribute('display', "The member's displayName, or its userName when it has none.", {
          mutability: 'readOnly',
        }),
        attribute('type', 'The type of the member: always "User".', {
          mutability: 'immutable',
          canonicalValues: ['User'],
        }),
      ],
    }),
  ],
};

export const GROUP_RESOURCE_SCHEMA: ScimResourceSchema = {
  name: 'Group',
  endpoint: '/Groups',
  commonAttributes: COMMON_ATTRIBUTES,
  core: GROUP_SCHEMA,
  extensions: [],
};

/** RFC 7643 §4.1.2 User `groups`: read-only, filled from the group memberships. */
export const USER_GROUPS_ATTRIBUTE = attribute('groups', 'A list of groups to which the user belongs.', {
  type: 'complex',
  multiValued: true,
  mutability: 'readOnly',
  subAttributes: [
    attribute('value', 'The identifier of the group.', { mutability: 'readOnly', caseExact: true }),
    attribute('$ref', 'The URI of the group.', {
      type: 'reference',
      mutability: 'readOnly',
      caseExact: true,
      referenceTypes: ['Group'],
    }),
    attribute('display', "The group's displayName.", { mutability: 'readOnly' }),
    attribute('type', 'Always "direct": groups do not nest here.', {
      mutability: 'readOnly',
      canonicalValues: ['direct'],
    }),
  ],
});

/** The User resource as it is answered (and described by /Schemas): the stored attributes plus `groups`. */
export const USER_VIEW_SCHEMA: ScimResourceSchema = {
  ...USER_RESOURCE_SCHEMA,
  core: {
    ...USER_RESOURCE_SCHEMA.core,
    attributes: [
      ...USER_RESOURCE_SCHEMA.core.attributes.map((definition) =>
        definition.name === 'roles'
          ? {
              ...definition,
              description:
                'A list of roles for the User: RFC 7643 value/display/type/primary, and Id/DisplayName mirroring value/display.',
              subAttributes: [
                ...(definition.subAttributes ?? []),
                // One attribute under two names (the interface document's and RFC 7643's). Advertised readOnly: a
                // schema-driven client fills every writable sub-attribute, and two writable names for one value
                // invite conflicts.
                attribute(
                  'Id',
                  "Mirrors value under the interface document's name: always returned equal to value. Not " +
                    'separately writable: write value. A request may still give Id alone (taken as value); when it ' +
                    'gives both, value wins and Id is ignored.',
                  { mutability: 'readOnly' },
                ),
                attribute(
                  'DisplayName',
                  "Mirrors display under the interface document's name: always returned equal to display. Not " +
                    'separately writable: write display. A request may still give DisplayName alone (taken as ' +
                    'display); when it gives both, display wins and DisplayName is ignored.',
                  { mutability: 'readOnly' },
                ),
              ],
            }
          : definition,
      ),
      USER_GROUPS_ATTRIBUTE,
    ],
  },
};
