import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequireScope } from '../auth/scopes.js';
import { ApiErrorResponses } from '../openapi/api-error-responses.js';
import { AgentResponse, ChangeSetCreatedRequest, HeartbeatRequest, ReportRequest } from './dto/agent.dto.js';
import { ReplicationIngestionService, type IngestionOutcome } from './replication-ingestion.service.js';

/** Where replication agents report progress. Every call is idempotent and safe to retry. */
@ApiTags('Replication')
@ApiBearerAuth()
@ApiErrorResponses()
@RequireScope('replication')
@Controller('api/v1/Replication/Agent')
export class ReplicationAgentController {
  constructor(private readonly ingestion: ReplicationIngestionService) {}

  @Post('changeSetCreated')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'Replication_ChangeSetCreated',
    summary: 'An origin node created a change set (numbered 1, 2, 3… per collection and origin)',
  })
  @ApiOkResponse({ type: AgentResponse })
  async changeSetCreated(@Body() body: ChangeSetCreatedRequest): Promise<AgentResponse> {
    return envelope(await this.ingestion.changeSetCreated(body));
  }

  @Post('report')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'Replication_Report',
    summary: "A node's applied watermark for an origin, with any apply errors",
    description: 'Watermarks only move forward: a repeated or out-of-order report never moves one back.',
  })
  @ApiOkResponse({ type: AgentResponse })
  async report(@Body() body: ReportRequest): Promise<AgentResponse> {
    return envelope(await this.ingestion.report(body));
  }

  @Post('heartbeat')
  @HttpCode(200)
  @ApiOperation({ operationId: 'Replication_Heartbeat', summary: 'A node is alive (Stale after silence)' })
  @ApiOkResponse({ type: AgentResponse })
  async heartbeat(@Body() body: HeartbeatRequest): Promise<AgentResponse> {
    return envelope(await this.ingestion.heartbeat(body));
  }
}

function envelope(outcome: IngestionOutcome): AgentResponse {
  return { Succeeded: true, Message: outcome.message, Code: outcome.code };
}
