// RFC 7644 §3.4.2.5 `attributes` / `excludedAttributes`, with RFC 7643 §2.2 `returned` characteristics: `always`
// attributes (id, schemas) are in every answer, `never` in none, `request` only when `attributes` names them, and
// `default` unless excluded. Works on any resource representation (plain JSON) with its attribute table, matching
// names case-insensitively (RFC 7643 §2.1), with sub-attributes (`name.givenName`, `members.value`) and
// URN-qualified names (`urn:…:enterprise:2.0:User:employeeNumber`, or the extension URN alone for all of it).
import type { ScimAttributeDefinition, ScimResourceSchema } from './scim-schema.types.js';

/** At most this many names per parameter (bounded work per request). */
export const MAX_PROJECTION_NAMES = 200;

/**
 * What the OpenAPI document states of a name (RFC 7643 §2.1 ATTRNAME, `$ref`, one optional sub-attribute): the
 * attribute-name grammar the service reads, without the URN-qualified form (`urn:…:User:userName`), which the
 * parameter descriptions name in words. A list is comma-separated (the query-string form).
 */
const ATTRIBUTE_NAME = '(?:\\$ref|[A-Za-z][A-Za-z0-9_-]*)(?:\\.(?:\\$ref|[A-Za-z][A-Za-z0-9_-]*))?';
export const ATTRIBUTE_NAME_PATTERN = `^${ATTRIBUTE_NAME}$`;
export const ATTRIBUTE_LIST_PATTERN = `^${ATTRIBUTE_NAME}(?:,${ATTRIBUTE_NAME}){0,${String(MAX_PROJECTION_NAMES - 1)}}$`;

export interface AttributeProjection {
  /** `attributes`: only these (plus `always`). */
  readonly attributes?: readonly ProjectedName[];
  /** `excludedAttributes`: all `default` ones but these. */
  readonly excluded?: readonly ProjectedName[];
}

export interface ProjectedName {
  /** Lower-cased extension schema URN, or undefined for the core schema / common attributes. */
  readonly extension?: string;
  /** Lower-cased; undefined with `extension` = the whole extension. */
  readonly attribute?: string;
  readonly subAttribute?: string;
}

export class AttributeProjectionError extends Error {
  override readonly name = 'AttributeProjectionError';
}

/** Parses a comma-separated list of attribute names (the query-string form, or a /.search array). */
export function parseAttributeNames(
  input: string | readonly string[],
  resource: ScimResourceSchema,
  parameter: string,
): ProjectedName[] {
  const items = (typeof input === 'string' ? input.split(',') : input)
    .map((item) => item.trim())
    .filter((item) => item !== '');
  if (items.length > MAX_PROJECTION_NAMES) {
    throw new AttributeProjectionError(
      `${parameter} names ${String(items.length)} attributes; at most ${String(MAX_PROJECTION_NAMES)}`,
    );
  }
  const core = resource.core.id.toLowerCase();
  const extensions = resource.extensions.map((extension) => extension.id.toLowerCase());
  return items.map((item) => {
    let lower = item.toLowerCase();
    if (extensions.includes(lower)) return { extension: lower };
    let extension: string | undefined;
    const owner = extensions.find((id) => lower.startsWith(`${id}:`));
    if (owner !== undefined) {
      extension = owner;
      lower = lower.slice(owner.length + 1);
    } else if (lower.startsWith(`${core}:`)) {
      lower = lower.slice(core.length + 1);
    } else if (lower.startsWith('urn:')) {
      throw new AttributeProjectionError(
        `${parameter}: "${item}" names no schema of the ${resource.name} resource`,
      );
    }
    const [attribute, subAttribute, ...rest] = lower.split('.');
    if (attribute === '' || rest.length > 0 || subAttribute === '') {
      throw new AttributeProjectionError(`${parameter}: "${item}" is not an attribute name`);
    }
    return { ...(extension ? { extension } : {}), attribute, ...(subAttribute ? { subAttribute } : {}) };
  });
}

function definitionOf(
  attributes: readonly ScimAttributeDefinition[],
  key: string,
): ScimAttributeDefinition | undefined {
  const lower = key.toLowerCase();
  return attributes.find(
    (attribute) =>
      attribute.name.toLowerCase() === lower ||
      (attribute.inputAliases ?? []).some((alias) => alias.toLowerCase() === lower),
  );
}

function namesFor(names: readonly ProjectedName[], extension: string | undefined): ProjectedName[] {
  return names.filter((name) => name.extension === extension);
}

/** Whether `projection` asks for the attribute `name` of the core schema (to skip loading what is not returned). */
export function isAttributeReturned(projection: AttributeProjection, name: string): boolean {
  const lower = name.toLowerCase();
  if (projection.attributes !== undefined) {
    return projection.attributes.some((item) => item.extension === undefined && item.attribute === lower);
  }
  if (projection.excluded !== undefined) {
    return !projection.excluded.some(
      (item) => item.extension === undefined && item.attribute === lower && item.subAttribute === undefined,
    );
  }
  return true;
}

function projectValue(
  value: unknown,
  definition: ScimAttributeDefinition | undefined,
  keep: (sub: string, subDefinition: ScimAttributeDefinition | undefined) => boolean,
): unknown {
  const projectObject = (object: unknown): unknown => {
    if (typeof object !== 'object' || object === null || Array.isArray(object)) return object;
    const out: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(object)) {
      if (keep(key, definitionOf(definition?.subAttributes ?? [], key))) out[key] = member;
    }
    return out;
  };
  return Array.isArray(value) ? value.map(projectObject) : projectObject(value);
}

function projectContainer(
  container: Readonly<Record<string, unknown>>,
  attributes: readonly ScimAttributeDefinition[],
  projection: AttributeProjection,
  extension: string | undefined,
): Record<string, unknown> {
  const requested = projection.attributes ? namesFor(projection.attributes, extension) : undefined;
  const excluded = projection.excluded ? namesFor(projection.excluded, extension) : [];
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(container)) {
    const lower = key.toLowerCase();
    const definition = definitionOf(attributes, key);
    const returned = definition?.returned ?? (lower === 'schemas' ? 'always' : 'default');
    if (returned === 'never') continue;
    if (returned === 'always') {
      out[key] = value;
      continue;
    }
    if (requested !== undefined) {
      const matches = requested.filter((item) => item.attribute === lower);
      if (matches.length === 0) continue;
      if (matches.some((item) => item.subAttribute === undefined)) {
        out[key] = value;
        continue;
      }
      const subs = matches.map((item) => item.subAttribute);
      out[key] = projectValue(value, definition, (sub, subDefinition) => {
        const names = [sub, subDefinition?.name, ...(subDefinition?.inputAliases ?? [])].map((name) =>
          name?.toLowerCase(),
        );
        return subDefinition?.returned === 'always' || names.some((name) => subs.includes(name));
      });
      continue;
    }
    if (returned === 'request') continue;
    const matches = excluded.filter((item) => item.attribute === lower);
    if (matches.some((item) => item.subAttribute === undefined)) continue;
    if (matches.length === 0) {
      out[key] = value;
      continue;
    }
    const subs = matches.map((item) => item.subAttribute);
    out[key] = projectValue(value, definition, (sub, subDefinition) => {
      const names = [sub, subDefinition?.name, ...(subDefinition?.inputAliases ?? [])].map((name) =>
        name?.toLowerCase(),
      );
      return subDefinition?.returned === 'always' || !names.some((name) => subs.includes(name));
    });
  }
  return out;
}

/** The representation as the projection asks; without `attributes`/`excludedAttributes`, unchanged. */
export function projectResource<T extends object>(
  view: T,
  resource: ScimResourceSchema,
  projection: AttributeProjection,
): Partial<T> {
  if (projection.attributes === undefined && projection.excluded === undefined) return view;
  const base = [...resource.commonAttributes, ...resource.core.attributes];
  const out = projectContainer(view as Record<string, unknown>, base, projection, undefined);
  for (const extension of resource.extensions) {
    const key = Object.keys(view).find((name) => name.toLowerCase() === extension.id.toLowerCase());
    if (key === undefined) continue;
    const id = extension.id.toLowerCase();
    const value = (view as Record<string, unknown>)[key] as Record<string, unknown>;
    let projected: Record<string, unknown> | undefined;
    if (projection.attributes !== undefined) {
      const wanted = projection.attributes.filter((item) => item.extension === id);
      if (wanted.some((item) => item.attribute === undefined)) projected = value;
      else if (wanted.length > 0) projected = projectContainer(value, extension.attributes, projection, id);
    } else {
      const unwanted = (projection.excluded ?? []).filter((item) => item.extension === id);
      if (!unwanted.some((item) => item.attribute === undefined)) {
        projected = projectContainer(value, extension.attributes, projection, id);
      }
    }
    delete out[key];
    if (projected !== undefined && Object.keys(projected).length > 0) out[key] = projected;
  }
  return out as Partial<T>;
}
