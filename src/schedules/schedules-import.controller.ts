import { Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AuditedBy, type AuditSource } from '../audit/audit-source.js';
import { RequireScope } from '../auth/scopes.js';
import { PlatformError, PlatformErrorCode } from '../errors/api-error.js';
import { ok } from '../errors/envelope.js';
import { Idempotent, idempotentWriteOf, type RenderedAnswer } from '../http/idempotency.js';
import { RouteLimits } from '../route-config/route-limits.js';
import { ApiErrorResponses, ApiIdempotencyResponses } from '../openapi/api-error-responses.js';
import { IcalImportResponse } from './dto/ical.dto.js';
import { ContentLineMeter, IcalSyntaxError } from './ical/ical-content.js';
import { invalidCalendar } from './ical-import-answer.js';
import { SchedulesImportService, type ImportResult } from './schedules-import.service.js';

const CALENDAR = 'text/calendar';
/** Body limit of the import (docs/schedules.md). */
export const IMPORT_BODY_LIMIT = 32 * 1024 * 1024;

/** A complete calendar that imports as shown (Swagger UI sends the example as it is): one weekly series. */
const IMPORT_EXAMPLE = [
  'BEGIN:VCALENDAR',
  'VERSION:2.0',
  'PRODID:-//Example Corp//Team calendar//EN',
  'BEGIN:VEVENT',
  'UID:standup-2026@example.com',
  'DTSTAMP:20260101T000000Z',
  'DTSTART;TZID=Europe/Berlin:20260105T090000',
  'DTEND;TZID=Europe/Berlin:20260105T091500',
  'RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR',
  'SUMMARY:Stand-up',
  'END:VEVENT',
  'END:VCALENDAR',
  '',
].join('\r\n');

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
  // Its lines are measured as the body arrives: a line over the limit is refused there, the rest never kept.
  @RouteLimits({
    bodyLimit: IMPORT_BODY_LIMIT,
    extraTimeoutMs: 60_000,
    textBodies: [CALENDAR],
    bodyCheck: calendarLinesCheck,
    longWork: true,
  })
  @Idempotent()
  @ApiConsumes(CALENDAR)
  @ApiBody({
    description:
      'A VCALENDAR (RFC 5545), or several one after another: VEVENTs with RRULE, RDATE, EXDATE and RECURRENCE-ID ' +
      'overrides',
    // The body limit bounds the text (in octets; a character is at least one).
    schema: { type: 'string', maxLength: IMPORT_BODY_LIMIT, example: IMPORT_EXAMPLE },
  })
  @ApiOperation({
    operationId: 'Schedule_ImportIcal',
    summary:
      'Create or update one schedule per series (UID) of an iCalendar file; `Schedules` lists them, `Result` is the first',
    description:
      'Components a schedule cannot represent or that are broken (VTODO, a cancelled event, an impossible date, …) ' +
      'are skipped and listed in `Skipped` with their line, UID and reason (the first 100; `SkippedCounts` counts ' +
      'them all by kind), and so are malformed lines of properties the service does not store (the event kept); ' +
      'the import is refused (400, errors ' +
      'naming the line) only when nothing importable remains, or with more than 20,000 events, 100,000 RDATE and ' +
      'EXDATE values or 300,000 kept properties in all. A series imported before (same UID) is updated in place. ' +
      'Body up to 32 MiB. An instance carries out LONG_WORK_CONCURRENCY imports and exports at a time; beyond them ' +
      '503 Overloaded with Retry-After, nothing done. While other imports on the instance hold bodies of ' +
      'IMPORT_INFLIGHT_BYTES (32 MiB by default) in all, a further one is answered 503 ServiceUnavailable with ' +
      'Retry-After, nothing stored. See docs/schedules.md.',
  })
  @ApiCreatedResponse({ type: IcalImportResponse })
  @ApiIdempotencyResponses()
  async importIcal(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @AuditedBy() by: AuditSource,
  ): Promise<IcalImportResponse> {
    const body: unknown = request.body;
    if (!Buffer.isBuffer(body)) {
      throw new PlatformError(
        PlatformErrorCode.UnsupportedMediaType,
        `Content type ${String(request.headers['content-type'] ?? '(none)')} is not supported; send ${CALENDAR}.`,
      );
    }
    // The octets as sent: decoded per the charset parameter (UTF-8 by default) once folds are joined.
    const charset = charsetOf(request);
    const result = await this.imports.importIcal(
      body,
      by,
      charset,
      idempotentWriteOf(request)?.answeredBy(importedAnswer),
      // The deadline (REQUEST_TIMEOUT_MS + 60 s) answered 503, or the client left: stop, store nothing.
      () => reply.sent || request.raw.socket?.destroyed === true,
    );
    return importedAnswer(result).body;
  }
}

/** The charset parameter of the request's Content-Type, if any. */
function charsetOf(request: FastifyRequest): string | undefined {
  return /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(String(request.headers['content-type']))?.[1];
}

/**
 * The body check of the import (RouteLimits bodyCheck): each content line measured as the chunks arrive, so a line
 * over MAX_LINE_LENGTH (a 25 MB RDATE) is a 400 naming it without the body being collected or decoded.
 * A body in another charset than UTF-8 is measured in octets, against a bound no line of its characters can pass.
 */
function calendarLinesCheck(request: FastifyRequest): ((chunk: Buffer) => void) | undefined {
  const meter = new ContentLineMeter(charsetOf(request));
  return (chunk) => {
    try {
      meter.feed(chunk);
    } catch (error) {
      if (!(error instanceof IcalSyntaxError)) throw error;
      throw invalidCalendar([{ line: error.line, property: error.property, message: error.message }]);
    }
  };
}

/** The 201 of an import, also stored with the schedules under an Idempotency-Key. */
function importedAnswer(result: ImportResult): RenderedAnswer<IcalImportResponse> {
  const { schedule, schedules, message, skipped, skippedTotal, skippedCounts } = result;
  return {
    statusCode: 201,
    body: {
      ...ok(message),
      Result: schedule,
      Schedules: schedules,
      Skipped: skipped,
      SkippedTotal: skippedTotal,
      SkippedCounts: skippedCounts,
    },
  };
}
