// Resolution of RFC 7644 §3.5.2 PATCH paths (and of the keys of a path-less value, which Entra uses as paths)
// against the attribute table, with the value filter checked and put in canonical form.
import { parsePatchPath } from '../filter/scim-filter-parser.js';
import { ScimFilterError } from '../filter/scim-filter.errors.js';
import { resolveFilter } from '../filter/scim-filter-resolver.js';
import { elementScope } from '../filter/scim-filter-scope.js';
import type { ScimFilter, ScimPatchPath } from '../filter/scim-filter.types.js';
import { findAttribute, findExtension, resolveAttributePath, sameName } from '../schema/schema-lookup.js';
import type { ScimAttributeDefinition, ScimResourceSchema } from '../schema/scim-schema.types.js';
import { ScimPatchError } from './scim-patch.errors.js';

export interface PatchContext {
  readonly schema: ScimResourceSchema;
  readonly ignoreUnknownExtensions: boolean;
  readonly ignoredAttributes: readonly string[];
}

export type PatchTarget =
  | { readonly kind: 'ignore' }
  | { readonly kind: 'schema'; readonly schemaId: string; readonly isExtension: boolean }
  | {
      readonly kind: 'attribute';
      readonly label: string;
      /** Resource key of the extension holding the attribute; undefined for core and common attributes. */
      readonly extensionId?: string;
      readonly attribute: ScimAttributeDefinition;
      readonly subAttribute?: ScimAttributeDefinition;
      readonly filter?: ScimFilter;
    };

export function fail(scimType: ScimPatchError['scimType'], message: string): never {
  throw new ScimPatchError(scimType, message);
}

function parsePath(text: string): ScimPatchPath {
  try {
    return parsePatchPath(text);
  } catch (error) {
    if (error instanceof ScimFilterError)
      return fail(error.scimType, `Invalid path "${text}": ${error.message}`);
    throw error;
  }
}

/**
 * Resolves a PATCH `path`, or a key of a path-less value (where Entra puts `name.givenName` and URN-qualified
 * names). Inside an extension's object value (`within`), unqualified names belong to that extension.
 */
export function resolveTarget(text: string, context: PatchContext, within?: string): PatchTarget {
  const parsed = parsePath(text);
  const { schema } = context;
  let resolution = resolveAttributePath(schema, parsed.path);
  const extension = within === undefined ? undefined : findExtension(schema, within);
  if (extension !== undefined && parsed.path.schema === undefined) {
    const attribute = findAttribute(extension.attributes, parsed.path.attribute);
    const subAttribute =
      attribute && parsed.path.subAttribute !== undefined
        ? findAttribute(attribute.subAttributes ?? [], parsed.path.subAttribute)
        : undefined;
    resolution =
      attribute === undefined || (parsed.path.subAttribute !== undefined && subAttribute === undefined)
        ? { kind: 'unknownAttribute', message: `Unknown attribute "${extension.id}:${text}"` }
        : {
            kind: 'attribute',
            schemaId: extension.id,
            isExtension: true,
            attribute,
            ...(subAttribute !== undefined ? { subAttribute } : {}),
          };
  }
  switch (resolution.kind) {
    case 'unknownSchema':
      if (context.ignoreUnknownExtensions) return { kind: 'ignore' };
      return fail('invalidPath', `Unknown schema "${resolution.schemaId}" in path "${text}"`);
    case 'unknownAttribute': {
      const coreName = parsed.path.schema === undefined || sameName(parsed.path.schema, schema.core.id);
      if (
        coreName &&
        extension === undefined &&
        context.ignoredAttributes.some((name) => sameName(name, parsed.path.attribute))
      ) {
        return { kind: 'ignore' };
      }
      return fail('invalidPath', `${resolution.message} (path "${text}")`);
    }
    case 'schema':
      if (parsed.valueFilter !== undefined)
        fail('invalidPath', `A schema cannot take a value filter ("${text}")`);
      return { kind: 'schema', schemaId: resolution.schemaId, isExtension: resolution.isExtension };
    case 'attribute':
      break;
  }
  const { attribute } = resolution;
  const base = {
    kind: 'attribute' as const,
    label: text,
    ...(resolution.isExtension ? { extensionId: resolution.schemaId } : {}),
    attribute,
  };
  if (parsed.valueFilter === undefined) {
    return resolution.subAttribute === undefined ? base : { ...base, subAttribute: resolution.subAttribute };
  }
  if (!attribute.multiValued || attribute.type !== 'complex') {
    return fail(
      'invalidPath',
      `"${attribute.name}" is not a multi-valued complex attribute; "${text}" cannot filter it`,
    );
  }
  let filter: ScimFilter;
  try {
    filter = resolveFilter(parsed.valueFilter, elementScope(attribute));
  } catch (error) {
    if (error instanceof ScimFilterError) return fail('invalidFilter', `${error.message} (path "${text}")`);
    throw error;
  }
  if (parsed.subAttribute === undefined) return { ...base, filter };
  const subAttribute = findAttribute(attribute.subAttributes ?? [], parsed.subAttribute);
  if (subAttribute === undefined) {
    return fail(
      'invalidPath',
      `Unknown sub-attribute "${attribute.name}.${parsed.subAttribute}" (path "${text}")`,
    );
  }
  return { ...base, filter, subAttribute };
}

export type AttributeTarget = Extract<PatchTarget, { kind: 'attribute' }>;
