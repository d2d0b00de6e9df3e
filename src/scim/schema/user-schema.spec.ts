import { describe, expect, it } from '@jest/globals';
import { resolveAttributePath } from './schema-lookup.js';
import { toSchemaRepresentation } from './schema-representation.js';
import type { ScimAttributeDefinition } from './scim-schema.types.js';
import {
  CORE_USER_SCHEMA_ID,
  ENTERPRISE_USER_SCHEMA,
  ENTERPRISE_USER_SCHEMA_ID,
  UNSUPPORTED_USER_ATTRIBUTES,
  USER_RESOURCE_SCHEMA,
  USER_SCHEMA,
} from './user-schema.js';

const allTopLevel: readonly ScimAttributeDefinition[] = [
  ...USER_RESOURCE_SCHEMA.commonAttributes,
  ...USER_SCHEMA.attributes,
  ...ENTERPRISE_USER_SCHEMA.attributes,
];

describe('User attribute table', () => {
  it('has unique names (case-insensitively) per level', () => {
    const levels = [
      [...USER_RESOURCE_SCHEMA.commonAttributes, ...USER_SCHEMA.attributes],
      ENTERPRISE_USER_SCHEMA.attributes,
      ...allTopLevel.map((attribute) => attribute.subAttributes ?? []),
    ];
    for (const level of levels) {
      const names = level.map((attribute) => attribute.name.toLowerCase());
      expect(new Set(names).size).toBe(names.length);
    }
  });

  it('gives sub-attributes exactly to complex attributes, one level deep (RFC 7643 §2.3.8)', () => {
    for (const attribute of allTopLevel) {
      expect(attribute.type === 'complex').toBe(attribute.subAttributes !== undefined);
      for (const sub of attribute.subAttributes ?? []) expect(sub.type).not.toBe('complex');
    }
  });

  it('states the characteristics the engines rely on', () => {
    const byName = (name: string): ScimAttributeDefinition | undefined =>
      allTopLevel.find((attribute) => attribute.name === name);
    expect(byName('id')).toMatchObject({ mutability: 'readOnly', caseExact: true });
    expect(byName('userName')).toMatchObject({ required: true, caseExact: false, uniqueness: 'server' });
    expect(byName('active')).toMatchObject({ type: 'boolean' });
    expect(byName('emails')).toMatchObject({ multiValued: true, type: 'complex' });
    expect(byName('meta')).toMatchObject({ mutability: 'readOnly' });
  });

  it('does not list attributes it also declares unsupported', () => {
    const names = allTopLevel.map((attribute) => attribute.name.toLowerCase());
    for (const name of UNSUPPORTED_USER_ATTRIBUTES) expect(names).not.toContain(name.toLowerCase());
  });
});

describe('resolveAttributePath', () => {
  it.each([
    [
      { attribute: 'USERNAME' },
      { kind: 'attribute', schemaId: CORE_USER_SCHEMA_ID, attributeName: 'userName' },
    ],
    [
      { schema: CORE_USER_SCHEMA_ID, attribute: 'id' },
      { kind: 'attribute', schemaId: CORE_USER_SCHEMA_ID, attributeName: 'id' },
    ],
    [
      { schema: ENTERPRISE_USER_SCHEMA_ID.toLowerCase(), attribute: 'Manager', subAttribute: 'VALUE' },
      { kind: 'attribute', schemaId: ENTERPRISE_USER_SCHEMA_ID, attributeName: 'manager' },
    ],
    [
      { schema: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0', attribute: 'User' },
      { kind: 'schema', schemaId: ENTERPRISE_USER_SCHEMA_ID },
    ],
    [{ schema: 'urn:example:ext', attribute: 'x' }, { kind: 'unknownSchema' }],
    [{ attribute: 'employeeNumber' }, { kind: 'unknownAttribute' }],
    // Entra ID's unqualified manager: the enterprise attribute, and only that one.
    [
      { attribute: 'manager', subAttribute: 'value' },
      { kind: 'attribute', schemaId: ENTERPRISE_USER_SCHEMA_ID, isExtension: true, attributeName: 'manager' },
    ],
    [{ attribute: 'name', subAttribute: 'nope' }, { kind: 'unknownAttribute' }],
  ])('%j', (path, expected) => {
    const resolved = resolveAttributePath(USER_RESOURCE_SCHEMA, path);
    const { attributeName, ...rest } = expected as { attributeName?: string };
    expect(resolved).toMatchObject(rest);
    if (attributeName !== undefined && resolved.kind === 'attribute')
      expect(resolved.attribute.name).toBe(attributeName);
  });
});

describe('toSchemaRepresentation (RFC 7643 §7)', () => {
  it('describes the schema without input-only aliases', () => {
    const representation = toSchemaRepresentation(USER_SCHEMA, 'https://example.com/scim');
    expect(representation.meta.location).toBe(`https://example.com/scim/Schemas/${CORE_USER_SCHEMA_ID}`);
    const roles = representation.attributes.find((attribute) => attribute.name === 'roles');
    expect(roles?.subAttributes?.map((sub) => sub.name)).toEqual(['value', 'display', 'type', 'primary']);
    expect(JSON.stringify(representation)).not.toContain('inputAliases');
  });
});
