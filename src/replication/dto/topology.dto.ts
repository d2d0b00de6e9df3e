// Servers and nodes: listed, renamed and decommissioned (routes designed in docs/replication.md).
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsOptional } from 'class-validator';
import { Name } from './agent.dto.js';

export class ListServersQuery {
  @ApiPropertyOptional({
    example: false,
    default: false,
    description: 'Also list decommissioned servers and nodes.',
  })
  @IsOptional()
  @IsBoolean()
  IncludeDecommissioned?: boolean;
}

export class RenameServerRequest {
  @ApiProperty({ example: 'berlin' }) @Name() Server!: string;
  @ApiProperty({ example: 'Berlin (primary DC)' }) @Name() Name!: string;
}

export class RenameNodeRequest {
  @ApiProperty({ example: 'node-berlin-2' }) @Name() Node!: string;
  @ApiProperty({ example: 'Berlin replica 2' }) @Name() Name!: string;
}

export class DecommissionServerRequest {
  @ApiProperty({ example: 'berlin' }) @Name() Server!: string;

  @ApiPropertyOptional({
    type: Boolean,
    example: true,
    default: true,
    description: 'false brings a decommissioned server back.',
  })
  @IsOptional()
  @IsBoolean()
  Decommissioned?: boolean | null;
}

export class DecommissionNodeRequest {
  @ApiProperty({ example: 'node-berlin-2' }) @Name() Node!: string;

  @ApiPropertyOptional({
    type: Boolean,
    example: true,
    default: true,
    description: 'false brings a decommissioned node back.',
  })
  @IsOptional()
  @IsBoolean()
  Decommissioned?: boolean | null;
}

export class NodeDto {
  @ApiProperty({ example: 'node-berlin-2' }) Id!: string;
  @ApiProperty({ example: 'Berlin replica 2' }) Name!: string;
  @ApiProperty({ example: '2026-11-20T08:00:00.000Z' }) RegisteredAt!: string;
  @ApiProperty({
    type: String,
    nullable: true,
    example: '2026-11-22T10:15:00.000Z',
    description: 'Last heartbeat or report.',
  })
  LastSeenAt!: string | null;
  @ApiProperty({ type: String, nullable: true, example: '2026-11-22T10:15:00.000Z' }) LastHeartbeatAt!:
    string | null;
  @ApiProperty({ type: String, nullable: true, example: '3.4.1' }) AgentVersion!: string | null;
  @ApiProperty({ type: String, nullable: true, example: null }) DecommissionedAt!: string | null;
}

export class ServerDto {
  @ApiProperty({ example: 'berlin' }) Id!: string;
  @ApiProperty({ example: 'Berlin (primary DC)' }) Name!: string;
  @ApiProperty({ example: '2026-11-20T08:00:00.000Z' }) RegisteredAt!: string;
  @ApiProperty({ type: String, nullable: true, example: null }) DecommissionedAt!: string | null;
  @ApiProperty({ type: [NodeDto] }) Nodes!: NodeDto[];
}

export class ServersResponse {
  @ApiProperty({ example: true }) Succeeded!: boolean;
  @ApiProperty({ type: String, nullable: true, example: null }) Message!: string | null;
  @ApiProperty({ type: String, nullable: true, example: null }) Code!: string | null;
  @ApiProperty({ type: [ServerDto], nullable: true }) Servers!: ServerDto[] | null;
}

export class TopologyChangeResponse {
  @ApiProperty({ example: true }) Succeeded!: boolean;
  @ApiProperty({ type: String, nullable: true, example: 'Server berlin renamed to "Berlin (primary DC)".' })
  Message!: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'Updated',
    description: 'Updated | Unchanged; failures: ServerNotFound | NodeNotFound',
  })
  Code!: string | null;
}
