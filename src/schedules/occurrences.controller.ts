import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequireScope } from '../auth/scopes.js';
import { RouteLimits } from '../http/route-limits.js';
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
  constructor(private readonly occurrences: OccurrencesService) {}

  @Post('hasOccurrences/byGroup')
  @HttpCode(200)
  // 1,000 groups and 50,000 ids (DESIGN §3) take about 2 MB of JSON: more than the default BODY_LIMIT.
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
    const { groups, unknownIds } = await this.occurrences.hasOccurrencesGrouped(body, ctx);
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
