import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequireScope } from '../auth/scopes.js';
import { ok } from '../errors/envelope.js';
import { ApiErrorResponses } from '../openapi/api-error-responses.js';
import { AuditEventsReader } from './audit-events.reader.js';
import { AuditTrail } from './audit-trail.js';
import { AuditEventListResponse, AuditEventsQuery } from './dto/audit-event.dto.js';

/** Read-only: no route changes or deletes an event (the trail is append-only). */
@ApiTags('Audit')
@ApiBearerAuth()
@ApiErrorResponses()
@RequireScope('admin')
@Controller('api/v1/audit-events')
export class AuditEventsController {
  constructor(
    private readonly reader: AuditEventsReader,
    private readonly trail: AuditTrail,
  ) {}

  @Get()
  @ApiOperation({
    operationId: 'Audit_GetEvents',
    summary: 'The audit trail, newest first: every change and every 401/403, with who, what and from where',
  })
  @ApiOkResponse({ type: AuditEventListResponse })
  async list(@Query() query: AuditEventsQuery): Promise<AuditEventListResponse> {
    await this.trail.flushRefusals();
    const { events, nextCursor } = await this.reader.page(
      {
        actor: query.Actor,
        action: query.Action,
        resourceType: query.ResourceType,
        resourceId: query.ResourceId,
        since: query.Since === undefined ? undefined : new Date(query.Since),
        until: query.Until === undefined ? undefined : new Date(query.Until),
      },
      query.PageSize ?? 50,
      query.Cursor,
    );
    return { ...ok(), Result: events, NextCursor: nextCursor, HasNextPage: nextCursor !== null };
  }
}
