import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsISO8601, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';

export class AuditEventsQuery {
  @ApiPropertyOptional({
    example: '5b0e8c1e-2f8a-4a55-9f0e-8d7c6b5a4f3e',
    description:
      'An actor id (API key id, `env:<16 hex>` for an API_KEYS key, a token `sub`/`azp`/`client_id`, a CLI command) or name',
  })
  @IsOptional()
  @IsString()
  @MaxLength(300)
  Actor?: string;

  @ApiPropertyOptional({
    example: 'schedule.create',
    description: 'e.g. `scim.user.patch`, `request.forbidden`',
  })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  Action?: string;

  @ApiPropertyOptional({
    example: 'Schedule',
    description: 'e.g. `ScimUser`, `SmtpConfiguration`, `ApiKey`, `Route`',
  })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  ResourceType?: string;

  @ApiPropertyOptional({ example: '3f2a7c10-9a7e-4d2b-8f1e-6c5d4b3a2f10' })
  @IsOptional()
  @IsString()
  @MaxLength(300)
  ResourceId?: string;

  @ApiPropertyOptional({ format: 'date-time', example: '2026-11-01T00:00:00Z', description: 'Inclusive' })
  @IsOptional()
  @IsString()
  @IsISO8601()
  @MaxLength(64)
  Since?: string;

  @ApiPropertyOptional({ format: 'date-time', example: '2026-12-01T00:00:00Z', description: 'Exclusive' })
  @IsOptional()
  @IsString()
  @IsISO8601()
  @MaxLength(64)
  Until?: string;

  @ApiPropertyOptional({ type: 'integer', example: 50, description: 'default 50, at most 500' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(500)
  PageSize?: number;

  @ApiPropertyOptional({
    example: '1042',
    description: 'The previous page’s NextCursor: the page after it (older events). Absent: the newest page.',
  })
  @IsOptional()
  @IsString()
  @Matches(/^\d{1,15}$/, { message: 'Cursor must be a NextCursor value from a previous page' })
  @MaxLength(15)
  Cursor?: string;
}

export class AuditEventDto {
  @ApiProperty({ example: '1043', description: 'Increasing in the order events were written' }) Id!: string;
  @ApiProperty({ example: '2026-11-29T02:51:07.123Z' }) OccurredAt!: string;
  @ApiProperty({
    enum: ['api-key', 'env-key', 'token', 'cli', 'system', 'anonymous', 'webhook'],
    example: 'api-key',
  })
  ActorType!: string;
  @ApiProperty({ type: String, nullable: true, example: '5b0e8c1e-2f8a-4a55-9f0e-8d7c6b5a4f3e' })
  ActorId!: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'billing-sync' }) ActorName!: string | null;
  @ApiProperty({ type: String, nullable: true, example: null, description: 'A token’s issuer' })
  ActorIssuer!: string | null;
  @ApiProperty({ example: 'schedule.create' }) Action!: string;
  @ApiProperty({ example: 'Schedule' }) ResourceType!: string;
  @ApiProperty({ type: String, nullable: true, example: '3f2a7c10-9a7e-4d2b-8f1e-6c5d4b3a2f10' })
  ResourceId!: string | null;
  @ApiProperty({ enum: ['success', 'denied'], example: 'success' }) Outcome!: string;
  @ApiProperty({ type: String, nullable: true, example: '9b2f6a52-3c55-4bd4-8f0c-0c8f0e2f4d1e' })
  CorrelationId!: string | null;
  @ApiProperty({ type: String, nullable: true, example: '10.0.4.17' }) ClientAddress!: string | null;
  @ApiProperty({
    type: 'object',
    nullable: true,
    additionalProperties: true,
    example: { items: 2 },
    description: 'Small non-secret facts about the change (names, counts, outcome codes)',
  })
  Detail!: Record<string, unknown> | null;
}

export class AuditEventListResponse {
  @ApiProperty({ example: true }) Succeeded!: boolean;
  @ApiProperty({ type: String, nullable: true, example: null }) Message!: string | null;
  @ApiProperty({ type: String, nullable: true, example: null }) Code!: string | null;
  @ApiProperty({ type: [AuditEventDto], description: 'Newest first' }) Result!: AuditEventDto[];
  @ApiProperty({
    type: String,
    nullable: true,
    example: '1001',
    description: 'Cursor of the next (older) page',
  })
  NextCursor!: string | null;
  @ApiProperty({ example: true }) HasNextPage!: boolean;
}
