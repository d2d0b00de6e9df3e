// Case-insensitive attribute lookup in a resource schema (RFC 7643 §2.1: attribute names are case-insensitive;
// RFC 7644 §3.10: a name may be qualified by its schema URN, and extension attributes must be).
import type {
  ScimAttributeDefinition,
  ScimAttributePath,
  ScimResourceSchema,
  ScimSchemaDefinition,
} from './scim-schema.types.js';

export type ScimPathResolution =
  | {
      readonly kind: 'attribute';
      /** The schema the attribute belongs to; extension attributes live under this key in the resource. */
      readonly schemaId: string;
      readonly isExtension: boolean;
      readonly attribute: ScimAttributeDefinition;
      readonly subAttribute?: ScimAttributeDefinition;
    }
  | { readonly kind: 'schema'; readonly schemaId: string; readonly isExtension: boolean }
  | { readonly kind: 'unknownSchema'; readonly schemaId: string }
  | { readonly kind: 'unknownAttribute'; readonly message: string };

export function sameName(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

export function findAttribute(
  attributes: readonly ScimAttributeDefinition[],
  name: string,
): ScimAttributeDefinition | undefined {
  return (
    attributes.find((candidate) => sameName(candidate.name, name)) ??
    attributes.find((candidate) => candidate.inputAliases?.some((alias) => sameName(alias, name)) ?? false)
  );
}

export function findSchema(resource: ScimResourceSchema, schemaId: string): ScimSchemaDefinition | undefined {
  if (sameName(resource.core.id, schemaId)) return resource.core;
  return resource.extensions.find((extension) => sameName(extension.id, schemaId));
}

export function findExtension(
  resource: ScimResourceSchema,
  schemaId: string,
): ScimSchemaDefinition | undefined {
  return resource.extensions.find((extension) => sameName(extension.id, schemaId));
}

export function coreAttributes(resource: ScimResourceSchema): readonly ScimAttributeDefinition[] {
  return [...resource.commonAttributes, ...resource.core.attributes];
}

function printPath(path: ScimAttributePath): string {
  const name = path.subAttribute === undefined ? path.attribute : `${path.attribute}.${path.subAttribute}`;
  return path.schema === undefined ? name : `${path.schema}:${name}`;
}

export function resolveAttributePath(
  resource: ScimResourceSchema,
  path: ScimAttributePath,
): ScimPathResolution {
  let schema: ScimSchemaDefinition = resource.core;
  let attributes = coreAttributes(resource);
  if (path.schema !== undefined) {
    // The parser splits at the last colon, so a bare schema URN arrives as schema "…:2.0" + attribute "User".
    const whole = findSchema(resource, `${path.schema}:${path.attribute}`);
    if (whole !== undefined && path.subAttribute === undefined) {
      return { kind: 'schema', schemaId: whole.id, isExtension: whole !== resource.core };
    }
    const named = findSchema(resource, path.schema);
    if (named === undefined) return { kind: 'unknownSchema', schemaId: path.schema };
    schema = named;
    attributes = named === resource.core ? coreAttributes(resource) : named.attributes;
  }
  let attribute = findAttribute(attributes, path.attribute);
  if (attribute === undefined && path.schema === undefined) {
    // Microsoft Entra ID sends the enterprise `manager` unqualified (PATCH path `manager`, filter `manager eq
    // "<id>"`): an extension attribute marked `unqualified` is also found by its bare name when the core schema
    // has no attribute of that name (Entra ID's `manager`). Other extension attributes must be qualified (RFC 7644 §3.10).
    for (const extension of resource.extensions) {
      const candidate = findAttribute(extension.attributes, path.attribute);
      if (candidate?.unqualified === true) {
        schema = extension;
        attribute = candidate;
        break;
      }
    }
  }
  if (attribute === undefined) {
    return { kind: 'unknownAttribute', message: `Unknown attribute "${printPath(path)}"` };
  }
  const base = {
    kind: 'attribute',
    schemaId: schema.id,
    isExtension: schema !== resource.core,
    attribute,
  } as const;
  if (path.subAttribute === undefined) return base;
  const subAttribute = findAttribute(attribute.subAttributes ?? [], path.subAttribute);
  if (subAttribute === undefined) {
    return {
      kind: 'unknownAttribute',
      message:
        attribute.type === 'complex'
          ? `Unknown sub-attribute "${printPath(path)}"`
          : `Attribute "${attribute.name}" has no sub-attributes ("${printPath(path)}")`,
    };
  }
  return { ...base, subAttribute };
}
