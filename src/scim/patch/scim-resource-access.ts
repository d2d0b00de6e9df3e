// Reading and writing a resource held as a plain object, with attribute names matched case-insensitively
// (RFC 7643 §2.1) and written in the table's casing; extension attributes live under their schema URN key
// (RFC 7643 §3.3).
import { sameName } from '../schema/schema-lookup.js';
import type { ScimAttributeDefinition } from '../schema/scim-schema.types.js';
import { isPlainObject } from './scim-patch-request.js';

export type Mutable = Record<string, unknown>;

/** The working copy is ours to change; request values are only read (see isPlainObject). */
export function isMutableObject(value: unknown): value is Mutable {
  return isPlainObject(value);
}

export function keyOf(object: Mutable, name: string): string | undefined {
  if (Object.hasOwn(object, name)) return name;
  return Object.keys(object).find((key) => sameName(key, name));
}

export function read(object: Mutable, name: string): unknown {
  const key = keyOf(object, name);
  return key === undefined ? undefined : object[key];
}

export function remove(object: Mutable, name: string): void {
  for (const key of Object.keys(object)) if (sameName(key, name)) Reflect.deleteProperty(object, key);
}

/** Writes under the canonical name, dropping any differently-cased copy (in place when already canonical). */
export function write(object: Mutable, name: string, value: unknown): void {
  for (const key of Object.keys(object))
    if (key !== name && sameName(key, name)) Reflect.deleteProperty(object, key);
  object[name] = value;
}

export function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (Array.isArray(value)) return value.length === 0;
  if (isPlainObject(value)) return Object.keys(value).length === 0;
  return false;
}

export function elementsOf(container: Mutable, attribute: ScimAttributeDefinition): unknown[] {
  const current = read(container, attribute.name);
  if (current === undefined || current === null) return [];
  if (!Array.isArray(current)) return [current];
  const list: readonly unknown[] = current;
  return [...list];
}

export function storeElements(
  container: Mutable,
  attribute: ScimAttributeDefinition,
  elements: unknown[],
): void {
  if (elements.length === 0) remove(container, attribute.name);
  else write(container, attribute.name, elements);
}

export function containerOf(
  document: Mutable,
  target: { readonly extensionId?: string },
): Mutable | undefined {
  if (target.extensionId === undefined) return document;
  const current = read(document, target.extensionId);
  return isMutableObject(current) ? current : undefined;
}

/** The object holding the target's attribute, creating the extension object when it is missing. */
export function ensureContainer(document: Mutable, target: { readonly extensionId?: string }): Mutable {
  const existing = containerOf(document, target);
  if (existing !== undefined || target.extensionId === undefined) return existing ?? document;
  const created: Mutable = {};
  write(document, target.extensionId, created);
  return created;
}
