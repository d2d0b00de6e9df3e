// Rules between the properties of a request object that the service checks outside class-validator (the
// recurrence compiler, the SCIM engine), stated where JSON Schema can state them: `not` (two properties not both),
// `if`/`then` (one property's value fixes another's type). Declared on the DTO class next to its properties and
// written into that class's component schema as `allOf` parts (so the document states them); the DTO's description says the
// same in words. Also a whole-object example where sampling each property would mislead.
import type { OpenAPIObject } from '@nestjs/swagger';

type Json = Record<string, unknown>;

const RULES = new Map<string, Json[]>();

/** Declares a JSON Schema rule on the class's component schema (by class name, as @nestjs/swagger names it). */
export const ApiObjectRule =
  (rule: Json): ClassDecorator =>
  (target) => {
    RULES.set(target.name, [...(RULES.get(target.name) ?? []), rule]);
  };

export function addObjectRules(document: OpenAPIObject): void {
  const schemas = (document.components?.schemas ?? {}) as Record<string, Json>;
  for (const [name, rules] of RULES) {
    const schema = schemas[name];
    if (schema === undefined) continue;
    schema.allOf = [...((schema.allOf ?? []) as Json[]), ...rules];
  }
  addObjectExamples(document);
}

const EXAMPLES = new Map<string, Json>();

/**
 * A whole-object example on the class's component schema: Swagger UI pre-fills it instead of sampling every
 * property (which, for two spellings of one member, would send both).
 */
export const ApiObjectExample =
  (example: Json): ClassDecorator =>
  (target) => {
    EXAMPLES.set(target.name, example);
  };

function addObjectExamples(document: OpenAPIObject): void {
  const schemas = (document.components?.schemas ?? {}) as Record<string, Json>;
  for (const [name, example] of EXAMPLES) if (schemas[name] !== undefined) schemas[name].example = example;
}
