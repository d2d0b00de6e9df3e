// RFC 7644 §4 discovery: /ServiceProviderConfig (RFC 7643 §5), /ResourceTypes (§6) and /Schemas (§7), built from
// the same attribute table the filter and PATCH engine use, so what is advertised is what is served.
import { sameName } from './schema/schema-lookup.js';
import { toSchemaRepresentation, type ScimSchemaRepresentation } from './schema/schema-representation.js';
import { GROUP_RESOURCE_SCHEMA, USER_VIEW_SCHEMA } from './schema/group-schema.js';
import type { ScimResourceSchema } from './schema/scim-schema.types.js';
import { USER_RESOURCE_SCHEMA } from './schema/user-schema.js';
import { DEFAULT_COUNT, MAX_RESULTS } from './scim-users.service.js';

export const SERVICE_PROVIDER_CONFIG_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig';
export const RESOURCE_TYPE_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ResourceType';

export function serviceProviderConfig(baseUrl: string) {
  return {
    schemas: [SERVICE_PROVIDER_CONFIG_SCHEMA],
    documentationUri: null,
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_RESULTS },
    changePassword: { supported: false },
    sort: { supported: true },
    etag: { supported: true },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'OAuth Bearer Token',
        description: `An API key of the service with the "users" scope, sent as Authorization: Bearer <key>. Pages hold ${String(DEFAULT_COUNT)} users unless count says otherwise.`,
        specUri: 'https://www.rfc-editor.org/info/rfc6750',
        documentationUri: null,
        primary: true,
      },
    ],
    meta: {
      resourceType: 'ServiceProviderConfig',
      location: `${baseUrl}/ServiceProviderConfig`,
    },
  };
}

export type ServiceProviderConfig = ReturnType<typeof serviceProviderConfig>;

export interface ResourceTypeRepresentation {
  schemas: string[];
  id: string;
  name: string;
  endpoint: string;
  description: string;
  schema: string;
  schemaExtensions: Array<{ schema: string; required: boolean }>;
  meta: { resourceType: 'ResourceType'; location: string };
}

const RESOURCES: readonly ScimResourceSchema[] = [USER_RESOURCE_SCHEMA, GROUP_RESOURCE_SCHEMA];

export function resourceTypes(baseUrl: string): ResourceTypeRepresentation[] {
  return RESOURCES.map((resource) => ({
    schemas: [RESOURCE_TYPE_SCHEMA],
    id: resource.name,
    name: resource.name,
    endpoint: resource.endpoint,
    description: resource.core.description,
    schema: resource.core.id,
    schemaExtensions: resource.extensions.map((extension) => ({ schema: extension.id, required: false })),
    meta: { resourceType: 'ResourceType', location: `${baseUrl}/ResourceTypes/${resource.name}` },
  }));
}

export function findResourceType(baseUrl: string, id: string): ResourceTypeRepresentation | undefined {
  return resourceTypes(baseUrl).find((type) => sameName(type.id, id));
}

export function schemas(baseUrl: string): ScimSchemaRepresentation[] {
  return [USER_VIEW_SCHEMA.core, ...USER_RESOURCE_SCHEMA.extensions, GROUP_RESOURCE_SCHEMA.core].map(
    (schema) => toSchemaRepresentation(schema, baseUrl),
  );
}

export function findSchemaRepresentation(baseUrl: string, id: string): ScimSchemaRepresentation | undefined {
  return schemas(baseUrl).find((schema) => sameName(schema.id, id));
}
