import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Histogram } from 'prom-client';
import { RequireScope } from '../auth/scopes.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { RouteLimits } from '../route-config/route-limits.js';
import { Ctx, RequestContext } from '../logging/request-context.js';
import { ApiErrorResponses } from '../openapi/api-error-responses.js';
import {
  HasOccurrencesGroupedRequest,
  HasOccurrencesGroupedResult,
  OccurrencesQuery,
  OccurrencesResponse,
} from './dto/occurrence.dto.js';
import { OccurrencesService } from './occurrences.service.js';

const UNKNOWN = 'UnknownSchedules';

function unknownMessage(ids: readonly string[]): string | null {
  if (ids.length === 0) return null;
  const shown = ids.slice(0, 20).join(', ');
  return `Unknown schedule ids count as having no occurrences: ${shown}${ids.length > 20 ? ` and ${ids.length - 20} more` : ''}.`;
}

@ApiTags('Occurrence')
@ApiErrorResponses()
@Controller('api/v1/Occurrence')
export class OccurrencesController {
  /** Operation 1's batch shapes and the time its answer takes to compute (the dashboard's operation 1 row). */
  private readonly batchGroups: Histogram;
  private readonly batchScheduleIds: Histogram;
  private readonly batchSeconds: Histogram;

  constructor(
    private readonly occurrences: OccurrencesService,
    metrics: MetricsService,
  ) {
    const registers = [metrics.registry];
    this.batchGroups = new Histogram({
      name: 'occurrences_batch_groups',
      help: 'Groups per operation 1 request (hasOccurrences/byGroup)',
      buckets: [1, 5, 10, 50, 100, 250, 500, 1000],
      registers,
    });
    this.batchScheduleIds = new Histogram({
      name: 'occurrences_batch_schedule_ids',
      help: 'Schedule ids per operation 1 request, all groups together',
      buckets: [1, 10, 100, 1000, 5000, 10000, 25000, 50000],
      registers,
    });
    this.batchSeconds = new Histogram({
      name: 'occurrences_batch_duration_seconds',
      help: 'Time operation 1 takes to compute its answer (validated body to result), in seconds',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
  }

  @Post('hasOccurrences/byGroup')
  @HttpCode(200)
  // 1,000 groups and 50,000 ids (operation 1's maximum) take about 2 MB of JSON: more than the default BODY_LIMIT.
  @RouteLimits({ bodyLimit: 4 * 1024 * 1024 })
  @RequireScope('schedules', { publicWhen: (config) => config.publicOccurrences })
  @ApiOperation({
    operationId: 'Occurrence_HasOccurrencesGrouped',
    summary: 'For each group: does any listed schedule have an occurrence overlapping [Start, End)?',
    description:
      'Public unless PUBLIC_OCCURRENCES=false (then scope "schedules"). Unknown ids count as having no occurrence and ' +
      'are named in Message with Code "UnknownSchedules". At most 1,000 groups and 50,000 ids.',
  })
  @ApiOkResponse({ type: HasOccurrencesGroupedResult })
  async hasOccurrencesGrouped(
    @Body() body: HasOccurrencesGroupedRequest,
    @Ctx() ctx: RequestContext,
  ): Promise<HasOccurrencesGroupedResult> {
    const started = performance.now();
    const { groups, unknownIds } = await this.occurrences.hasOccurrencesGrouped(body, ctx);
    this.batchSeconds.observe((performance.now() - started) / 1000);
    let ids = 0;
    for (const group of body.Groups) ids += group.ScheduleIds?.length ?? 0;
    this.batchGroups.observe(body.Groups.length);
    this.batchScheduleIds.observe(ids);
    return {
      Succeeded: true,
      Message: unknownMessage(unknownIds),
      Code: unknownIds.length ? UNKNOWN : null,
      Groups: groups,
    };
  }

  @Get()
  @RequireScope('schedules')
  @ApiBearerAuth()
  @ApiOperation({
    operationId: 'Occurrence_List',
    summary:
      'Occurrences of the schedules overlapping [Start, End), ordered by Start, instants in UTC (at most 10,000)',
  })
  @ApiOkResponse({ type: OccurrencesResponse })
  async list(@Query() query: OccurrencesQuery, @Ctx() ctx: RequestContext): Promise<OccurrencesResponse> {
    const { occurrences, unknownIds } = await this.occurrences.list(query, ctx);
    return {
      Succeeded: true,
      Message: unknownMessage(unknownIds),
      Code: unknownIds.length ? UNKNOWN : null,
      Result: occurrences,
    };
  }
}
