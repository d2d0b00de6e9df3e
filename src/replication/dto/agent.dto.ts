// Ingestion bodies: what replication agents send (changeSetCreated, report, heartbeat).
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsInt,
  IsISO8601,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { REPLICATION_NAME_LENGTH } from '../entities/replication.entities.js';

/** Names are shown to operators and used as keys: no control characters. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
export const PRINTABLE = /^[^\u0000-\u001f\u007f]+$/;
/** An instant: date, time and an offset (or Z), so no server time zone is ever guessed. */
export const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;
export const MAX_ERRORS_PER_REPORT = 100;
/** The longest text INSTANT matches: `2026-11-22T10:15:00.123456789+01:00`. */
export const INSTANT_MAX_LENGTH = 35;

/** The decorators of an id or name field that agents send. */
export function Name(): PropertyDecorator {
  return (target, property) => {
    IsString()(target, property);
    IsNotEmpty()(target, property);
    MaxLength(REPLICATION_NAME_LENGTH)(target, property);
    Matches(PRINTABLE, { message: `${String(property)} must not contain control characters` })(
      target,
      property,
    );
  };
}

export function Instant(): PropertyDecorator {
  return (target, property) => {
    IsString()(target, property);
    // Says in the document the length INSTANT already implies (every request string is bounded).
    MaxLength(INSTANT_MAX_LENGTH)(target, property);
    Matches(INSTANT, { message: `${String(property)} must be an ISO 8601 date-time with an offset or Z` })(
      target,
      property,
    );
    IsISO8601({ strict: true }, { message: `${String(property)} must be a valid date-time` })(
      target,
      property,
    );
  };
}

export class ChangeSetCreatedRequest {
  @ApiProperty({ example: 'orders', maxLength: REPLICATION_NAME_LENGTH })
  @Name()
  Collection!: string;

  @ApiProperty({ example: 'node-berlin-1', description: 'The origin node that created the change set.' })
  @Name()
  Node!: string;

  @ApiProperty({
    type: 'integer',
    example: 42,
    minimum: 1,
    description: 'Numbered 1, 2, 3… per (collection, origin node).',
  })
  @IsInt()
  @Min(1)
  @Max(Number.MAX_SAFE_INTEGER)
  ChangeSet!: number;

  @ApiProperty({ example: '2026-11-22T10:15:00.000Z' })
  @Instant()
  CreatedAt!: string;
}

export class ReportedErrorDto {
  @ApiProperty({ example: 'E_CONSTRAINT', maxLength: 100 })
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  Code!: string;

  @ApiProperty({ example: 'duplicate key value violates unique constraint "orders_pkey"', maxLength: 2000 })
  @IsString()
  @MaxLength(2000)
  Message!: string;

  @ApiPropertyOptional({
    type: 'integer',
    nullable: true,
    example: 43,
    description: 'The change set that failed to apply, if any.',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(Number.MAX_SAFE_INTEGER)
  ChangeSet?: number | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: '{"table":"orders","key":17}',
    maxLength: 4000,
  })
  @IsOptional()
  @IsString()
  @MaxLength(4000)
  Data?: string | null;
}

export class ReportRequest {
  @ApiProperty({
    example: 'berlin',
    description: 'The server the node runs on (registered on first report).',
  })
  @Name()
  Server!: string;

  @ApiProperty({ example: 'node-berlin-2', description: 'The reporting node (registered on first report).' })
  @Name()
  Node!: string;

  @ApiProperty({ example: 'orders' })
  @Name()
  Collection!: string;

  @ApiProperty({ example: 'node-berlin-1', description: 'The origin node whose change sets this is about.' })
  @Name()
  Origin!: string;

  @ApiProperty({
    type: 'integer',
    example: 42,
    minimum: 0,
    description: 'Highest change set of Origin applied on Node (its watermark); 0 = none yet.',
  })
  @IsInt()
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER)
  AppliedChangeSet!: number;

  @ApiProperty({
    example: '2026-11-22T10:15:03.250Z',
    description: 'When the node reached AppliedChangeSet.',
  })
  @Instant()
  AppliedAt!: string;

  @ApiPropertyOptional({ type: [ReportedErrorDto], nullable: true, maxItems: MAX_ERRORS_PER_REPORT })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_ERRORS_PER_REPORT)
  @ValidateNested({ each: true })
  @Type(() => ReportedErrorDto)
  Errors?: ReportedErrorDto[] | null;
}

export class HeartbeatRequest {
  @ApiProperty({ example: 'berlin' })
  @Name()
  Server!: string;

  @ApiProperty({ example: 'node-berlin-2' })
  @Name()
  Node!: string;

  @ApiProperty({
    example: '2026-11-22T10:15:00.000Z',
    description: "The agent's clock when it sent the heartbeat.",
  })
  @Instant()
  At!: string;

  @ApiPropertyOptional({ type: String, nullable: true, example: '3.4.1', maxLength: 100 })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  AgentVersion?: string | null;
}

export class AgentResponse {
  @ApiProperty({ example: true }) Succeeded!: boolean;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'Watermark of node-berlin-2 for orders/node-berlin-1 moved to 42.',
  })
  Message!: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'Advanced',
    description:
      'changeSetCreated: Created | Unchanged; report: Advanced | Unchanged (already at or beyond); heartbeat: Recorded.',
  })
  Code!: string | null;
}
