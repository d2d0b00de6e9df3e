// JSON Schema draft-07 (json-schema.org/draft-07) rendering of a compiled DTO plan, so raw Fastify/ajv can be given
// the same rules (benchmarks, OpenAPI). Keys keep their declared casing: JSON Schema cannot express case-insensitive
// property names, and registered custom validators can only be named in `$comment`.
import type { JsonSchema } from './constraint-checks.js';
import type { FieldCheck, FieldPlan, ObjectPlan } from './dto-plan.js';

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Adds `fragment`'s keywords to `target`; a keyword that is already there with another value goes to `allOf`. */
function merge(target: JsonSchema, fragment: JsonSchema): void {
  const rest: JsonSchema = {};
  for (const [k, v] of Object.entries(fragment)) {
    if (k === 'allOf' && Array.isArray(v)) {
      const all = Array.isArray(target.allOf) ? (target.allOf as unknown[]) : [];
      target.allOf = [...all, ...(v as unknown[])];
    } else if (!(k in target)) {
      target[k] = v;
    } else if (
      k === 'type' &&
      ((target.type === 'integer' && v === 'number') || (target.type === 'number' && v === 'integer'))
    ) {
      target.type = 'integer';
    } else if (k === '$comment') {
      target.$comment = `${String(target.$comment)}; ${String(v)}`;
    } else if (!sameJson(target[k], v)) {
      rest[k] = v;
    }
  }
  if (Object.keys(rest).length > 0) {
    const all = Array.isArray(target.allOf) ? (target.allOf as unknown[]) : [];
    target.allOf = [...all, rest];
  }
}

function mergeChecks(checks: readonly FieldCheck[]): JsonSchema {
  const s: JsonSchema = {};
  for (const c of checks) merge(s, c.schema);
  return s;
}

export function buildJsonSchema(root: ObjectPlan): JsonSchema {
  const definitions: Record<string, JsonSchema> = {};
  const names = new Map<ObjectPlan, string>();

  const ref = (plan: ObjectPlan): string => {
    if (plan === root) return '#';
    let name = names.get(plan);
    if (name === undefined) {
      name = plan.className || 'Anonymous';
      for (let i = 2; name in definitions; i++) name = `${plan.className}${i}`;
      names.set(plan, name);
      definitions[name] = {};
      definitions[name] = objectSchema(plan);
    }
    return `#/definitions/${name}`;
  };

  const fieldSchema = (f: FieldPlan): JsonSchema => {
    const s = mergeChecks(f.checks);
    if (f.eachChecks.length > 0) {
      const item = mergeChecks(f.eachChecks);
      // class-validator applies `each` rules to a non-array value itself.
      if (f.checks.some((c) => c.list) || f.nestedList) merge(s, { type: 'array', items: item });
      else merge(s, { if: { type: 'array' }, then: { items: item }, else: item });
    }
    if (f.nested !== undefined) {
      const target = { $ref: ref(f.nested) };
      if (f.nestedList) merge(s, { type: 'array', allOf: [{ items: target }] });
      else merge(s, { allOf: [target] });
    }
    for (const c of f.custom) if (c.schema !== undefined) merge(s, c.schema);
    const unstated = f.custom.filter((c) => c.schema === undefined && c.objectSchema === undefined);
    if (unstated.length > 0)
      merge(s, { $comment: `not expressed: ${unstated.map((c) => c.name).join(', ')}` });
    if (f.optional && Object.keys(s).length > 0) return { anyOf: [{ type: 'null' }, s] };
    return s;
  };

  const objectSchema = (plan: ObjectPlan): JsonSchema => {
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    // Rules between fields (a custom constraint's objectJsonSchema), each once.
    const between = new Set<JsonSchema>();
    for (const f of plan.fields) {
      properties[f.name] = fieldSchema(f);
      if (f.required) required.push(f.name);
      for (const c of f.custom) if (c.objectSchema !== undefined) between.add(c.objectSchema);
    }
    return {
      type: 'object',
      properties,
      ...(required.length > 0 ? { required } : {}),
      additionalProperties: plan.allowUnknown,
      ...(between.size > 0 ? { allOf: [...between] } : {}),
    };
  };

  const schema: JsonSchema = { $schema: 'http://json-schema.org/draft-07/schema#', ...objectSchema(root) };
  if (Object.keys(definitions).length > 0) schema.definitions = definitions;
  return schema;
}
