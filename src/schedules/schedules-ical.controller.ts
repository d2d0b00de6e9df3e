import { Controller, Get, Header, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequireScope } from '../auth/scopes.js';
import { runInSlices, TimeSlicer } from '../common/time-slicer.js';
import { ApiErrorResponses, ErrorEnvelopeDto } from '../openapi/api-error-responses.js';
import { RouteLimits } from '../route-config/route-limits.js';
import { IcalExportQuery } from './dto/ical.dto.js';
import { calendarSteps, IcalExportError, type ExportSchedule } from './ical/ical-export.js';
import { ScheduleReader } from './schedule-reader.js';
import { ScheduleError, ScheduleErrorCode } from './schedules.errors.js';
import { SchedulesService } from './schedules.service.js';
import { IcalIdentityStore } from './ical-identity-store.js';
import type { ScheduleDto } from './dto/schedule.dto.js';
import { ApiScheduleIdParam } from './schedule-id.param.js';

const CALENDAR = 'text/calendar; charset=utf-8';
const CALENDAR_EXAMPLE =
  'BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//platform-api//Schedules iCalendar export 1.0//EN\r\n…\r\nEND:VCALENDAR\r\n';
const calendarResponse = (description: string) =>
  ApiOkResponse({
    description,
    content: { 'text/calendar': { schema: { type: 'string' }, example: CALENDAR_EXAMPLE } },
  });

@ApiTags('Schedule')
@ApiBearerAuth()
@ApiErrorResponses()
@RequireScope('schedules')
@Controller('api/v1/Schedule')
export class SchedulesIcalController {
  constructor(
    private readonly schedules: SchedulesService,
    private readonly reader: ScheduleReader,
    private readonly identities: IcalIdentityStore,
  ) {}

  // Declared as a static path: Fastify's router prefers it over GET /api/v1/Schedule/:id.
  @Get('ical')
  @RouteLimits({ longWork: true })
  @Header('Content-Type', CALENDAR)
  @ApiOperation({
    operationId: 'Schedule_ExportIcalMany',
    summary: 'Schedules as one iCalendar (RFC 5545) VCALENDAR: a VEVENT per item, VTIMEZONEs once',
    description:
      'ids: 1 to 1,000 schedule ids, comma-separated or repeated. Unknown ids are a 404 naming them. An instance ' +
      'carries out LONG_WORK_CONCURRENCY imports and exports at a time; beyond them 503 Overloaded with ' +
      'Retry-After.',
  })
  @calendarResponse('A VCALENDAR holding every item of the schedules, in the order of ids')
  @ApiNotFoundResponse({
    description: 'ScheduleNotFound: names the ids no schedule has',
    type: ErrorEnvelopeDto,
  })
  async exportMany(@Query() query: IcalExportQuery): Promise<string> {
    const ids = [...new Set(query.ids.map((id) => id.toLowerCase()))];
    const slicer = new TimeSlicer();
    const schedules = await this.reader.findMany(ids, slicer);
    if (schedules.length !== ids.length) {
      const found = new Set(schedules.map((schedule) => schedule.Id));
      const missing = ids.filter((id) => !found.has(id));
      const shown = missing.slice(0, 20).join(', ');
      const more = missing.length > 20 ? ` and ${missing.length - 20} more` : '';
      throw new ScheduleError(ScheduleErrorCode.ScheduleNotFound, `No schedule has the ids ${shown}${more}.`);
    }
    return render(await this.withIdentities(schedules), slicer);
  }

  @Get(':id/ical')
  @Header('Content-Type', CALENDAR)
  @ApiScheduleIdParam()
  @ApiOperation({
    operationId: 'Schedule_ExportIcal',
    summary: 'One schedule as an iCalendar (RFC 5545) VCALENDAR: a VEVENT per item',
  })
  @calendarResponse('A VCALENDAR with a VEVENT per item and a VTIMEZONE per zone used')
  @ApiNotFoundResponse({ description: 'ScheduleNotFound: no schedule has this id', type: ErrorEnvelopeDto })
  async exportOne(@Param('id') id: string): Promise<string> {
    return render(await this.withIdentities([await this.schedules.get(id)]));
  }

  /** Each schedule with the UID and SEQUENCE an import stored for it (ical-identity.ts derives the others'). */
  private async withIdentities(schedules: readonly ScheduleDto[]): Promise<ExportSchedule[]> {
    const identities = await this.identities.icalIdentities(schedules.map((schedule) => schedule.Id));
    return schedules.map((schedule) => {
      const identity = identities.get(schedule.Id.toLowerCase());
      return identity === undefined
        ? schedule
        : { ...schedule, Uid: identity.uid, Sequence: identity.sequence };
    });
  }
}

/** The calendar, built in slices (calendarSteps) so 1,000 schedules never hold the event loop at once. */
async function render(schedules: readonly ExportSchedule[], slicer = new TimeSlicer()): Promise<string> {
  try {
    return await runInSlices(calendarSteps(schedules, Date.now()), slicer);
  } catch (error) {
    if (!(error instanceof IcalExportError)) throw error;
    throw ScheduleError.invalid([
      { Field: error.field, Message: `schedule ${error.scheduleId}: ${error.message}` },
    ]);
  }
}
