// RFC 7643 §7 "Schema Definition" representation of the attribute table, for the /Schemas endpoint. Input-only
// details of the table (aliases) are left out: /Schemas describes what the service emits.
import type { ScimAttributeDefinition, ScimSchemaDefinition } from './scim-schema.types.js';

export const SCHEMA_RESOURCE_ID = 'urn:ietf:params:scim:schemas:core:2.0:Schema';

export interface ScimAttributeRepresentation {
  name: string;
  type: ScimAttributeDefinition['type'];
  multiValued: boolean;
  description: string;
  required: boolean;
  caseExact: boolean;
  mutability: ScimAttributeDefinition['mutability'];
  returned: ScimAttributeDefinition['returned'];
  uniqueness: ScimAttributeDefinition['uniqueness'];
  canonicalValues?: string[];
  referenceTypes?: string[];
  subAttributes?: ScimAttributeRepresentation[];
}

export interface ScimSchemaRepresentation {
  schemas: string[];
  id: string;
  name: string;
  description: string;
  attributes: ScimAttributeRepresentation[];
  meta: { resourceType: 'Schema'; location: string };
}

function toAttributeRepresentation(attribute: ScimAttributeDefinition): ScimAttributeRepresentation {
  return {
    name: attribute.name,
    type: attribute.type,
    multiValued: attribute.multiValued,
    description: attribute.description,
    required: attribute.required,
    caseExact: attribute.caseExact,
    mutability: attribute.mutability,
    returned: attribute.returned,
    uniqueness: attribute.uniqueness,
    ...(attribute.canonicalValues ? { canonicalValues: [...attribute.canonicalValues] } : {}),
    ...(attribute.referenceTypes ? { referenceTypes: [...attribute.referenceTypes] } : {}),
    ...(attribute.subAttributes
      ? { subAttributes: attribute.subAttributes.map(toAttributeRepresentation) }
      : {}),
  };
}

/** @param baseUrl the SCIM base address without trailing slash, e.g. `https://host/api/v1/scim`. */
export function toSchemaRepresentation(
  schema: ScimSchemaDefinition,
  baseUrl: string,
): ScimSchemaRepresentation {
  return {
    schemas: [SCHEMA_RESOURCE_ID],
    id: schema.id,
    name: schema.name,
    description: schema.description,
    attributes: schema.attributes.map(toAttributeRepresentation),
    meta: { resourceType: 'Schema', location: `${baseUrl}/Schemas/${schema.id}` },
  };
}
