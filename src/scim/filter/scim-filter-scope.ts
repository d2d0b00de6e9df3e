// Where the attribute paths of a filter are looked up (RFC 7644 §3.4.2.2): against a whole resource, or — inside
// a value filter such as `emails[type eq "work"]` — against the sub-attributes of one multi-valued element.
import { findAttribute, resolveAttributePath } from '../schema/schema-lookup.js';
import type {
  ScimAttributeDefinition,
  ScimAttributePath,
  ScimResourceSchema,
} from '../schema/scim-schema.types.js';
import { USER_RESOURCE_SCHEMA } from '../schema/user-schema.js';

export type ScimFilterScope =
  | { readonly kind: 'resource'; readonly schema: ScimResourceSchema }
  | { readonly kind: 'element'; readonly attribute: ScimAttributeDefinition };

export const USER_FILTER_SCOPE: ScimFilterScope = { kind: 'resource', schema: USER_RESOURCE_SCHEMA };

export function elementScope(attribute: ScimAttributeDefinition): ScimFilterScope {
  return { kind: 'element', attribute };
}

export type ScopedAttribute =
  | {
      readonly found: true;
      /** Set for extension attributes: the resource key (schema URN) holding them. */
      readonly extensionId?: string;
      readonly attribute: ScimAttributeDefinition;
      readonly subAttribute?: ScimAttributeDefinition;
    }
  | { readonly found: false; readonly message: string };

export function lookupScopedAttribute(scope: ScimFilterScope, path: ScimAttributePath): ScopedAttribute {
  if (scope.kind === 'element') {
    if (path.schema !== undefined || path.subAttribute !== undefined) {
      return {
        found: false,
        message: `Inside "${scope.attribute.name}[...]" only sub-attribute names of "${scope.attribute.name}" may be used`,
      };
    }
    const attribute = findAttribute(scope.attribute.subAttributes ?? [], path.attribute);
    return attribute === undefined
      ? { found: false, message: `Unknown sub-attribute "${scope.attribute.name}.${path.attribute}"` }
      : { found: true, attribute };
  }
  const resolved = resolveAttributePath(scope.schema, path);
  switch (resolved.kind) {
    case 'attribute':
      return {
        found: true,
        ...(resolved.isExtension ? { extensionId: resolved.schemaId } : {}),
        attribute: resolved.attribute,
        ...(resolved.subAttribute !== undefined ? { subAttribute: resolved.subAttribute } : {}),
      };
    case 'schema':
      return { found: false, message: `"${resolved.schemaId}" is a schema, not an attribute` };
    case 'unknownSchema':
      return { found: false, message: `Unknown schema "${resolved.schemaId}"` };
    case 'unknownAttribute':
      return { found: false, message: resolved.message };
  }
}
