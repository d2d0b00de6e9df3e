// The `{id}` path parameter of the schedule routes, as normalizeId (schedules.service.ts) checks it: a GUID of any
// version in any case (the interface's "format guid"), documented as JSON Schema's `uuid` with its fixed length.
// No example: ids are assigned by the service, so no example id exists on a fresh instance (docs/decisions.md).
import { ApiParam } from '@nestjs/swagger';
import { GUID_PATTERN } from '../validation/constraint-checks.js';

export const SCHEDULE_ID = new RegExp(GUID_PATTERN);

export const ApiScheduleIdParam = (): MethodDecorator =>
  ApiParam({
    name: 'id',
    description:
      'The schedule id: a GUID (8-4-4-4-12 hex digits, any version, any case); anything else is a 400.',
    schema: { type: 'string', format: 'uuid', minLength: 36, maxLength: 36 },
  });
