// Attribute characteristics of RFC 7643 §2.2 (type, multiValued, required, caseExact, mutability, returned,
// uniqueness) and the schema/resource-type shapes of RFC 7643 §6–§7. Framework-free on purpose: the filter, the
// PATCH engine, input normalisation and the /Schemas endpoint all read the same table.

export const SCIM_ATTRIBUTE_TYPES = [
  'string',
  'boolean',
  'decimal',
  'integer',
  'dateTime',
  'reference',
  'binary',
  'complex',
] as const;
export type ScimAttributeType = (typeof SCIM_ATTRIBUTE_TYPES)[number];

export const SCIM_MUTABILITIES = ['readOnly', 'readWrite', 'immutable', 'writeOnly'] as const;
export type ScimMutability = (typeof SCIM_MUTABILITIES)[number];

export const SCIM_RETURNED = ['always', 'never', 'default', 'request'] as const;
export type ScimReturned = (typeof SCIM_RETURNED)[number];

export const SCIM_UNIQUENESS = ['none', 'server', 'global'] as const;
export type ScimUniqueness = (typeof SCIM_UNIQUENESS)[number];

export interface ScimAttributeDefinition {
  readonly name: string;
  readonly type: ScimAttributeType;
  readonly multiValued: boolean;
  readonly required: boolean;
  readonly caseExact: boolean;
  readonly mutability: ScimMutability;
  readonly returned: ScimReturned;
  readonly uniqueness: ScimUniqueness;
  readonly description: string;
  readonly canonicalValues?: readonly string[];
  readonly referenceTypes?: readonly string[];
  readonly subAttributes?: readonly ScimAttributeDefinition[];
  /**
   * Extra input names accepted for this attribute (case-insensitive). Never emitted: the interface document's
   * roles use `Id`/`DisplayName` where RFC 7643 uses `value`/`display`, and both forms must be accepted.
   */
  readonly inputAliases?: readonly string[];
  /**
   * An extension attribute that is also found by its bare name (a client sends it without its schema URN). Only
   * the enterprise `manager`, which Microsoft Entra ID sends unqualified; never emitted.
   */
  readonly unqualified?: boolean;
}

export interface ScimSchemaDefinition {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly attributes: readonly ScimAttributeDefinition[];
}

/** A resource type (RFC 7643 §6) with the attribute tables its representation is built from. */
export interface ScimResourceSchema {
  readonly name: string;
  readonly endpoint: string;
  /** RFC 7643 §3.1 common attributes (id, externalId, meta): part of every resource, not of any schema. */
  readonly commonAttributes: readonly ScimAttributeDefinition[];
  readonly core: ScimSchemaDefinition;
  readonly extensions: readonly ScimSchemaDefinition[];
}

/**
 * RFC 7644 §3.10 attribute notation: `[schemaURN ":"] attrName ["." subAttrName]`. Names are kept as written by
 * the client; `resolveAttributePath` maps them onto the table.
 */
export interface ScimAttributePath {
  readonly schema?: string;
  readonly attribute: string;
  readonly subAttribute?: string;
}
