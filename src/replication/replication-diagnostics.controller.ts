import { Body, Controller, HttpCode, Post, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { RequireScope } from '../auth/scopes.js';
import { ApiErrorResponses } from '../openapi/api-error-responses.js';
import { ChangeSetStateService } from './change-set-state.service.js';
import {
  ChangeSetStateRequest,
  ChangeSetStateResponse,
  MAX_WAIT_SECONDS,
} from './dto/change-set-state.dto.js';
import { RouteLimits } from '../route-config/route-limits.js';

@ApiTags('Replication')
@ApiBearerAuth()
@ApiErrorResponses()
@RequireScope('replication')
@Controller('api/v1/Replication/Diagnostics')
export class ReplicationDiagnosticsController {
  constructor(private readonly state: ChangeSetStateService) {}

  @Post('changeSetState')
  @HttpCode(200)
  @RouteLimits({ extraTimeoutMs: MAX_WAIT_SECONDS * 1000 })
  @ApiOperation({
    operationId: 'Replication_ChangeSetState',
    summary: 'Operation 5: per server and node, the state of a change set of a collection',
    description:
      'Node is the origin node; Increment ≥ 1 is a change-set number, ≤ 0 counts back from the latest (0 = latest). ' +
      'LocalOnly limits the answer to REPLICATION_SERVER_ID. WaitSeconds (≤ 60) answers as soon as the change set is ' +
      'fully replicated. Unresolvable Increment: Succeeded:false, Code "ChangeSetNotFound".',
  })
  @ApiOkResponse({ type: ChangeSetStateResponse })
  async changeSetState(
    @Body() body: ChangeSetStateRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ChangeSetStateResponse> {
    // The response closing before the handler returned — the caller hung up, or the route's time-out answered
    // for us — ends the wait. (Not the request's 'close': Node emits it as soon as the body has been read.)
    const hangUp = new AbortController();
    reply.raw.once('close', () => hangUp.abort());
    return this.state.changeSetState(body, hangUp.signal);
  }
}
