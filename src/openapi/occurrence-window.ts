// The occurrence window's Start/End (GET /api/v1/Occurrence and operation 1's body) are read by the schedules'
// own date-time parser, which takes a date alone as midnight UTC (docs/schedules.md). The validators' ISO 8601 rule
// is written into the document as `format: date-time` (validator-rules.ts); here both forms a client sends are
// stated, so a gateway that validates requests passes `Start=2026-01-01` as the service does.
import type { OpenAPIObject } from '@nestjs/swagger';

type Json = Record<string, unknown>;

const WINDOW_BOUNDS = ['Start', 'End'];
const WINDOW_QUERIES = new Set(['Occurrence_List']);
const WINDOW_BODIES = ['HasOccurrencesGroupedRequest'];

const DATE_OR_DATE_TIME = [
  { format: 'date-time', description: 'An instant (RFC 3339)' },
  { format: 'date', description: 'A date alone: midnight UTC' },
];

const SAID = 'A date-time, or a date alone (midnight UTC).';

function dateOrDateTime(schema: Json | undefined): void {
  if (schema === undefined || schema.format !== 'date-time') return;
  delete schema.format;
  schema.anyOf = DATE_OR_DATE_TIME.map((form) => ({ ...form }));
}

function describe(holder: Json): void {
  const description = typeof holder.description === 'string' ? holder.description : '';
  if (!description.includes(SAID)) holder.description = `${SAID} ${description}`.trim();
}

export function documentOccurrenceWindow(document: OpenAPIObject): void {
  for (const item of Object.values(document.paths) as Array<Record<string, Json>>) {
    for (const operation of Object.values(item)) {
      if (!WINDOW_QUERIES.has(String(operation.operationId))) continue;
      for (const parameter of (operation.parameters ?? []) as Json[]) {
        if (parameter.in !== 'query' || !WINDOW_BOUNDS.includes(String(parameter.name))) continue;
        dateOrDateTime(parameter.schema as Json | undefined);
        describe(parameter);
      }
    }
  }
  const schemas = (document.components?.schemas ?? {}) as Record<string, Json>;
  for (const name of WINDOW_BODIES) {
    const properties = (schemas[name]?.properties ?? {}) as Record<string, Json>;
    for (const bound of WINDOW_BOUNDS) {
      if (properties[bound] === undefined) continue;
      dateOrDateTime(properties[bound]);
      describe(properties[bound]);
    }
  }
}
