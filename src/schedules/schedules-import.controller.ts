import { Controller, HttpCode, Post, Req } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { RequireScope } from '../auth/scopes.js';
import { PlatformError, PlatformErrorCode } from '../errors/api-error.js';
import { ok } from '../errors/envelope.js';
import { Idempotent, idempotentWriteOf } from '../http/idempotency.js';
import { RouteLimits } from '../http/route-limits.js';
import { ApiErrorResponses, ApiIdempotencyResponses } from '../openapi/api-error-responses.js';
import { IcalImportResponse } from './dto/ical.dto.js';
import { SchedulesImportService } from './schedules-import.service.js';

const CALENDAR = 'text/calendar';

@ApiTags('Schedule')
@ApiBearerAuth()
@ApiErrorResponses()
@RequireScope('schedules')
@Controller('api/v1/Schedule')
export class SchedulesImportController {
  constructor(private readonly imports: SchedulesImportService) {}

  @Post('import')
  @HttpCode(201)
  // 100 items with up to 1,000 overrides each are several MB of iCalendar; BODY_LIMIT still applies if larger.
  @RouteLimits({ bodyLimit: 4 * 1024 * 1024, textBodies: [CALENDAR] })
  @Idempotent()
  @ApiConsumes(CALENDAR)
  @ApiBody({
    description: 'One VCALENDAR (RFC 5545): VEVENTs with RRULE, RDATE, EXDATE and RECURRENCE-ID overrides',
    schema: { type: 'string', example: 'BEGIN:VCALENDAR\r\nVERSION:2.0\r\n…\r\nEND:VCALENDAR\r\n' },
  })
  @ApiOperation({
    operationId: 'Schedule_ImportIcal',
    summary: 'Create one schedule from an iCalendar file (one item per event); answers like Schedule_Create',
    description:
      'Components a schedule cannot represent or that are broken (VTODO, a cancelled event, an impossible date, …) ' +
      'are skipped and listed in `Skipped` with their line, UID and reason; the import is refused (400, errors ' +
      'naming the line) only when nothing importable remains, or with more than 100 events. See docs/schedules.md.',
  })
  @ApiCreatedResponse({ type: IcalImportResponse })
  @ApiIdempotencyResponses()
  async importIcal(@Req() request: FastifyRequest): Promise<IcalImportResponse> {
    const body: unknown = request.body;
    if (!Buffer.isBuffer(body)) {
      throw new PlatformError(
        PlatformErrorCode.UnsupportedMediaType,
        `Content type ${String(request.headers['content-type'] ?? '(none)')} is not supported; send ${CALENDAR}.`,
      );
    }
    // The octets as sent: decoded per the charset parameter (UTF-8 by default) once folds are joined.
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(String(request.headers['content-type']))?.[1];
    const { schedule, message, skipped } = await this.imports.importIcal(
      body,
      charset,
      idempotentWriteOf(request),
    );
    return { ...ok(message), Result: schedule, Skipped: skipped };
  }
}
