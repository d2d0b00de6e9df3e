// Swagger UI's "Try it out" asks for an id and nothing else on GET/DELETE of one resource; a newcomer has none yet.
// Every operation whose required inputs are path parameters only says, for each id among them, which GET route
// lists the resources it comes from: the route the path continues (GET /api/v1/Schedule for
// /api/v1/Schedule/{id}), when the document has one.
import type { OpenAPIObject } from '@nestjs/swagger';

type Json = Record<string, unknown>;

/** A path parameter that names a resource (`id`, `installedAppId`), not a tenant's domain. */
export const isIdParameter = (name: string): boolean => name === 'id' || /Id$/.test(name);

/** The path parameters an operation cannot be called without, when they are all it needs (no body, no query). */
export function onlyRequiredInputs(operation: Json): Json[] | undefined {
  const required = ((operation.parameters ?? []) as Json[]).filter((p) => p.required === true);
  const body = operation.requestBody as Json | undefined;
  if (required.length === 0 || body?.required === true) return undefined;
  return required.every((p) => p.in === 'path') ? required : undefined;
}

export function pointToIdSources(document: OpenAPIObject): void {
  const paths = document.paths as Record<string, Record<string, Json>>;
  for (const [path, item] of Object.entries(paths)) {
    for (const operation of Object.values(item)) {
      if (typeof operation.responses !== 'object' || operation.responses === null) continue;
      for (const parameter of onlyRequiredInputs(operation) ?? []) {
        const name = String(parameter.name);
        if (!isIdParameter(name)) continue;
        const list = path.slice(0, path.indexOf(`/{${name}}`));
        if (paths[list]?.get === undefined) continue;
        const hint = `Get an \`${name}\` from GET ${list} (the list), then "Try it out" here.`;
        const description = typeof operation.description === 'string' ? operation.description : '';
        if (!description.includes(hint)) operation.description = `${description}\n\n${hint}`.trim();
        const said = typeof parameter.description === 'string' ? parameter.description : '';
        if (!said.includes(`GET ${list}`)) parameter.description = `${said} Listed by GET ${list}.`.trim();
      }
    }
  }
}
