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
/** Body limit of the import (docs/schedules.md). */
export const IMPORT_BODY_LIMIT = 32 * 1024 * 1024;

@ApiTags('Schedule')
@ApiBearerAuth()
@ApiErrorResponses()
@RequireScope('schedules')
@Controller('api/v1/Schedule')
export class SchedulesImportController {
  constructor(private readonly imports: SchedulesImportService) {}

  @Post('import')
  @HttpCode(201)
  // 10,000+ events as Google or Outlook write them (descriptions, attendees, alarms) are tens of MB; BODY_LIMIT
  // still applies if larger. Such an import takes seconds of work (in slices), hence the longer time-out.
  @RouteLimits({ bodyLimit: IMPORT_BODY_LIMIT, extraTimeoutMs: 60_000, textBodies: [CALENDAR] })
  @Idempotent()
  @ApiConsumes(CALENDAR)
  @ApiBody({
    description: 'One VCALENDAR (RFC 5545): VEVENTs with RRULE, RDATE, EXDATE and RECURRENCE-ID overrides',
    schema: { type: 'string', example: 'BEGIN:VCALENDAR\r\nVERSION:2.0\r\n…\r\nEND:VCALENDAR\r\n' },
  })
  @ApiOperation({
    operationId: 'Schedule_ImportIcal',
    summary:
      'Create or update one schedule per series (UID) of an iCalendar file; `Schedules` lists them, `Result` is the first',
    description:
      'Components a schedule cannot represent or that are broken (VTODO, a cancelled event, an impossible date, …) ' +
      'are skipped and listed in `Skipped` with their line, UID and reason; the import is refused (400, errors ' +
      'naming the line) only when nothing importable remains, or with more than 20,000 events. A series imported ' +
      'before (same UID) is updated in place. Body up to 32 MiB. See docs/schedules.md.',
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
    const { schedule, schedules, message, skipped } = await this.imports.importIcal(
      body,
      charset,
      idempotentWriteOf(request),
    );
    return { ...ok(message), Result: schedule, Schedules: schedules, Skipped: skipped };
  }
}
