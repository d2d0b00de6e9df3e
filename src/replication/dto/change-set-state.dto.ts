// Operation 5 (interface: "Replication change-set state"), plus the optional wait and lag thresholds (docs/replication.md).
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsInt, IsOptional, Max, Min } from 'class-validator';
import { INFO_TYPES } from '../state/change-set-state.js';
import { Name } from './agent.dto.js';

export const MAX_WAIT_SECONDS = 60;
export const DEFAULT_LAG_THRESHOLD_SECONDS = 60;
export const DEFAULT_LAG_THRESHOLD_CHANGE_SETS = 100;

export class ChangeSetStateRequest {
  @ApiProperty({ example: 'orders' })
  @Name()
  Collection!: string;

  @ApiProperty({ example: 'node-berlin-1', description: 'The origin node whose change set is examined.' })
  @Name()
  Node!: string;

  @ApiPropertyOptional({
    type: 'integer',
    example: 0,
    default: 0,
    description: "≥ 1: that change set number; ≤ 0: counted back from the origin's latest (0 = latest).",
  })
  @IsOptional()
  @IsInt()
  @Min(-Number.MAX_SAFE_INTEGER)
  @Max(Number.MAX_SAFE_INTEGER)
  Increment?: number | null;

  @ApiPropertyOptional({
    type: Boolean,
    example: false,
    default: false,
    description: 'Only the answering server (REPLICATION_SERVER_ID) and its nodes.',
  })
  @IsOptional()
  @IsBoolean()
  LocalOnly?: boolean | null;

  @ApiPropertyOptional({
    type: 'integer',
    example: 10,
    default: 0,
    minimum: 0,
    maximum: MAX_WAIT_SECONDS,
    description: 'Wait up to this long for the change set to be fully replicated; answers as soon as it is.',
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_WAIT_SECONDS)
  WaitSeconds?: number | null;

  @ApiPropertyOptional({
    type: 'integer',
    example: DEFAULT_LAG_THRESHOLD_SECONDS,
    default: DEFAULT_LAG_THRESHOLD_SECONDS,
    description: 'A node lags (Info Type "Lag") when its oldest missing change set is at least this old…',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(86_400 * 365)
  LagThresholdSeconds?: number | null;

  @ApiPropertyOptional({
    type: 'integer',
    example: DEFAULT_LAG_THRESHOLD_CHANGE_SETS,
    default: DEFAULT_LAG_THRESHOLD_CHANGE_SETS,
    description: '…or when it is at least this many change sets behind the latest.',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(Number.MAX_SAFE_INTEGER)
  LagThresholdChangeSets?: number | null;
}

export class NamedDto {
  @ApiProperty({ example: 'node-berlin-2' }) Id!: string;
  @ApiProperty({ example: 'Berlin replica 2' }) Name!: string;
}

export class InfoEntryDto {
  @ApiProperty({ example: false }) IsError!: boolean;
  @ApiProperty({ enum: INFO_TYPES, example: 'Applied' }) Type!: string;
  @ApiProperty({ example: 'Applied change set 42' }) Message!: string;
  @ApiProperty({
    example:
      '{"ChangeSet":42,"AppliedChangeSet":42,"AppliedAt":"2026-11-22T10:15:03.250Z","CreatedAt":"2026-11-22T10:15:00.000Z","LatencySeconds":3.25,"LagChangeSets":0,"LagSeconds":0}',
    description: 'A JSON object as text; its fields depend on Type (see docs/replication.md).',
  })
  Data!: string;
  @ApiProperty({
    type: [String],
    example: ['2026-11-22T10:15:03.250Z'],
    description: 'When this (Type, Message) occurred, newest first, deduplicated, at most 20.',
  })
  Timestamps!: string[];
}

export class NodeStateDto {
  @ApiProperty({ type: NamedDto }) Node!: NamedDto;
  @ApiProperty({ example: true }) HasChange!: boolean;
  @ApiProperty({ type: [InfoEntryDto] }) Info!: InfoEntryDto[];
}

export class ServerStateDto {
  @ApiProperty({ type: NamedDto, example: { Id: 'berlin', Name: 'Berlin' } }) Server!: NamedDto;
  @ApiProperty({ example: true }) HasChange!: boolean;
  @ApiProperty({ type: [NodeStateDto] }) Nodes!: NodeStateDto[];
  @ApiProperty({ type: [InfoEntryDto] }) Info!: InfoEntryDto[];
}

export class ChangeSetStateResponse {
  @ApiProperty({ example: true, description: 'The diagnosis ran (not: replication is complete).' })
  Succeeded!: boolean;
  @ApiProperty({
    type: String,
    nullable: true,
    example:
      'Change set 42 of origin "node-berlin-1" in "orders" is applied on 6 of 6 nodes; fully replicated.',
  })
  Message!: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    example: null,
    description: 'ChangeSetNotFound | LocalServerNotConfigured',
  })
  Code!: string | null;
  @ApiProperty({ type: [ServerStateDto], nullable: true }) Servers!: ServerStateDto[] | null;
  @ApiProperty({ example: 'orders' }) Collection!: string;
  @ApiProperty({ example: 'node-berlin-1' }) Node!: string;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: 42,
    description: 'The change set evaluated; null when none resolved.',
  })
  ChangeSet!: number | null;
  @ApiProperty({ example: true }) FullyReplicated!: boolean;
}
