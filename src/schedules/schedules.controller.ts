import {
  Body,
  Controller,
  Delete,
  Get,
  Header,
  HttpCode,
  Param,
  Post,
  Put,
  Query,
  Req,
} from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { AuditedBy, type AuditSource } from '../audit/audit-source.js';
import { RequireScope } from '../auth/scopes.js';
import { ok, type ResultMessage } from '../errors/envelope.js';
import { Idempotent, idempotentWriteOf, type RenderedAnswer } from '../http/idempotency.js';
import {
  ApiErrorResponses,
  ApiIdempotencyResponses,
  ErrorEnvelopeDto,
} from '../openapi/api-error-responses.js';
import {
  ListSchedulesQuery,
  ScheduleInput,
  ScheduleListResponse,
  ScheduleDeletedResponse,
  ScheduleResponse,
} from './dto/schedule.dto.js';
import { SchedulesService, type WriteResult } from './schedules.service.js';
import { ApiScheduleIdParam } from './schedule-id.param.js';

@ApiTags('Schedule')
@ApiBearerAuth()
@ApiErrorResponses()
@RequireScope('schedules')
@Controller('api/v1/Schedule')
export class SchedulesController {
  constructor(private readonly schedules: SchedulesService) {}

  @Get()
  @ApiOperation({
    operationId: 'Schedule_GetSchedules',
    summary: 'Schedules with items, recurrences and exceptions, paged by creation',
  })
  @ApiOkResponse({ type: ScheduleListResponse })
  // The answer is written here as JSON text around the page's JSON (built by the database on PostgreSQL), so a
  // page of 500 schedules is not parsed and serialised again on the event loop. Same fields, same order.
  @Header('content-type', 'application/json; charset=utf-8')
  async list(@Query() query: ListSchedulesQuery): Promise<string> {
    const pageIndex = query.PageIndex ?? 1;
    const { resultJson, totalPages } = await this.schedules.list(pageIndex, query.PageSize ?? 20);
    const { Succeeded, Message, Code } = ok();
    return (
      `{"Succeeded":${Succeeded},"Message":${JSON.stringify(Message)},"Code":${JSON.stringify(Code)},` +
      `"Result":${resultJson},"PageIndex":${pageIndex},"TotalPages":${totalPages},` +
      `"HasPreviousPage":${pageIndex > 1},"HasNextPage":${pageIndex < totalPages}}`
    );
  }

  @Post()
  @HttpCode(201)
  @ApiOperation({ operationId: 'Schedule_Create', summary: 'Create a schedule (ids are assigned)' })
  @ApiCreatedResponse({ type: ScheduleResponse })
  @Idempotent()
  @ApiIdempotencyResponses()
  async create(
    @Body() body: ScheduleInput,
    @Req() request: FastifyRequest,
    @AuditedBy() by: AuditSource,
  ): Promise<ScheduleResponse> {
    const result = await this.schedules.create(
      body,
      by,
      idempotentWriteOf(request)?.answeredBy(createdAnswer),
    );
    return createdAnswer(result).body;
  }

  @Get(':id')
  @ApiScheduleIdParam()
  @ApiOperation({ operationId: 'Schedule_Get', summary: 'One schedule' })
  @ApiNotFoundResponse({ description: 'ScheduleNotFound: no schedule has this id', type: ErrorEnvelopeDto })
  @ApiOkResponse({ type: ScheduleResponse })
  async get(@Param('id') id: string): Promise<ScheduleResponse> {
    return { ...ok(), Result: await this.schedules.get(id) };
  }

  @Put(':id')
  @ApiScheduleIdParam()
  @ApiOperation({ operationId: 'Schedule_Replace', summary: 'Replace a schedule’s items (new item ids)' })
  @ApiNotFoundResponse({ description: 'ScheduleNotFound: no schedule has this id', type: ErrorEnvelopeDto })
  @ApiOkResponse({ type: ScheduleResponse })
  async replace(
    @Param('id') id: string,
    @Body() body: ScheduleInput,
    @AuditedBy() by: AuditSource,
  ): Promise<ScheduleResponse> {
    const { schedule, message } = await this.schedules.replace(id, body, by);
    return { ...ok(message), Result: schedule };
  }

  @Delete(':id')
  @ApiScheduleIdParam()
  @ApiOperation({ operationId: 'Schedule_Delete', summary: 'Delete a schedule' })
  @ApiOkResponse({ description: 'Deleted', type: ScheduleDeletedResponse })
  @ApiNotFoundResponse({ description: 'ScheduleNotFound: no schedule has this id', type: ErrorEnvelopeDto })
  async remove(@Param('id') id: string, @AuditedBy() by: AuditSource): Promise<ResultMessage> {
    await this.schedules.remove(id, by);
    return ok();
  }
}

/** The 201 of a create, also stored with the schedule under an Idempotency-Key. */
function createdAnswer({ schedule, message }: WriteResult): RenderedAnswer<ScheduleResponse> {
  return { statusCode: 201, body: { ...ok(message), Result: schedule } };
}
