import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequireScope } from '../auth/scopes.js';
import { ApiErrorResponses } from '../openapi/api-error-responses.js';
import {
  DecommissionNodeRequest,
  DecommissionServerRequest,
  ListServersQuery,
  RenameNodeRequest,
  RenameServerRequest,
  ServersResponse,
  TopologyChangeResponse,
} from './dto/topology.dto.js';
import { ReplicationTopologyService, type TopologyOutcome } from './replication-topology.service.js';

/** Servers and nodes register through the agents; operators list, rename and decommission them here. */
@ApiTags('Replication')
@ApiBearerAuth()
@ApiErrorResponses()
@RequireScope('replication')
@Controller('api/v1/Replication')
export class ReplicationTopologyController {
  constructor(private readonly topology: ReplicationTopologyService) {}

  @Get('Servers')
  @ApiOperation({ operationId: 'Replication_ListServers', summary: 'Registered servers with their nodes' })
  @ApiOkResponse({ type: ServersResponse })
  async list(@Query() query: ListServersQuery): Promise<ServersResponse> {
    const servers = await this.topology.list(query.IncludeDecommissioned ?? false);
    return { Succeeded: true, Message: null, Code: null, Servers: servers };
  }

  @Post('Servers/rename')
  @HttpCode(200)
  @ApiOperation({ operationId: 'Replication_RenameServer', summary: "Change a server's display name" })
  @ApiOkResponse({ type: TopologyChangeResponse })
  async renameServer(@Body() body: RenameServerRequest): Promise<TopologyChangeResponse> {
    return envelope(await this.topology.renameServer(body.Server, body.Name));
  }

  @Post('Servers/decommission')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'Replication_DecommissionServer',
    summary: 'Take a server and its nodes out of every diagnosis (Decommissioned:false brings it back)',
  })
  @ApiOkResponse({ type: TopologyChangeResponse })
  async decommissionServer(@Body() body: DecommissionServerRequest): Promise<TopologyChangeResponse> {
    return envelope(await this.topology.decommissionServer(body.Server, body.Decommissioned ?? true));
  }

  @Post('Nodes/rename')
  @HttpCode(200)
  @ApiOperation({ operationId: 'Replication_RenameNode', summary: "Change a node's display name" })
  @ApiOkResponse({ type: TopologyChangeResponse })
  async renameNode(@Body() body: RenameNodeRequest): Promise<TopologyChangeResponse> {
    return envelope(await this.topology.renameNode(body.Node, body.Name));
  }

  @Post('Nodes/decommission')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'Replication_DecommissionNode',
    summary: 'Take a node out of every diagnosis (Decommissioned:false brings it back)',
  })
  @ApiOkResponse({ type: TopologyChangeResponse })
  async decommissionNode(@Body() body: DecommissionNodeRequest): Promise<TopologyChangeResponse> {
    return envelope(await this.topology.decommissionNode(body.Node, body.Decommissioned ?? true));
  }
}

function envelope(outcome: TopologyOutcome): TopologyChangeResponse {
  return { Succeeded: true, Message: outcome.message, Code: outcome.code };
}
