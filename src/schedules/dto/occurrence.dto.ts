import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsISO8601,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUUID,
  MaxLength,
  ValidateNested,
} from 'class-validator';

/** occurrences.service.ts checks it (a rule between two values, which JSON Schema cannot state). */
const END_AFTER_START = 'Must be later than Start (else 400 naming End).';

const GUID_A = '3f2504e0-4f89-11d3-9a0c-0305e82c3301';
const GUID_B = '9a7b3c1d-2e4f-4a6b-8c9d-0e1f2a3b4c5d';

export class GroupedScheduleRequest {
  @ApiProperty({ example: 'meeting-rooms', description: 'Required, non-empty, unique in the request' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(500)
  Key!: string;

  @ApiPropertyOptional({
    type: [String],
    format: 'uuid',
    example: [GUID_A, GUID_B],
    description: 'May be empty',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(50_000)
  @IsUUID('all', { each: true })
  ScheduleIds?: string[] | null;
}

export class HasOccurrencesGroupedRequest {
  @ApiProperty({ type: [GroupedScheduleRequest], minItems: 1, maxItems: 1000 })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(1000)
  @ValidateNested({ each: true })
  @Type(() => GroupedScheduleRequest)
  Groups!: GroupedScheduleRequest[];

  @ApiProperty({ format: 'date-time', minLength: 1, example: '2026-03-16T08:00:00Z' })
  @IsString()
  @IsNotEmpty()
  @IsISO8601()
  @MaxLength(40)
  Start!: string;

  @ApiProperty({
    format: 'date-time',
    minLength: 1,
    example: '2026-03-16T09:00:00Z',
    description: END_AFTER_START,
  })
  @IsString()
  @IsNotEmpty()
  @IsISO8601()
  @MaxLength(40)
  End!: string;
}

export class HasOccurrencesGroupedResult {
  @ApiProperty({ example: true }) Succeeded!: boolean;
  @ApiProperty({ type: String, nullable: true, example: null }) Message!: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    example: null,
    description: '"UnknownSchedules" when some ids are unknown',
  })
  Code!: string | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'boolean' },
    example: { 'meeting-rooms': true, parking: false },
  })
  Groups!: Record<string, boolean>;
}

export class OccurrencesQuery {
  @ApiProperty({ type: [String], example: [GUID_A], description: 'Comma-separated or repeated' })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(1000)
  @IsUUID('all', { each: true })
  ScheduleIds!: string[];

  @ApiProperty({ format: 'date-time', example: '2026-03-16T00:00:00Z' })
  @IsString()
  @IsISO8601()
  @MaxLength(40)
  Start!: string;

  @ApiProperty({ format: 'date-time', example: '2026-03-23T00:00:00Z', description: END_AFTER_START })
  @IsString()
  @IsISO8601()
  @MaxLength(40)
  End!: string;
}

export class OccurrenceDto {
  @ApiProperty({ example: GUID_A }) ScheduleId!: string;
  @ApiProperty({ example: '0c5b2f7e-3a41-4c8e-9a3b-5f6e7d8c9b0a' }) ScheduleItemId!: string;
  @ApiProperty({ example: '2026-03-16T08:00:00.000Z' }) Start!: string;
  @ApiProperty({ example: '2026-03-16T08:15:00.000Z' }) End!: string;
  @ApiProperty({ example: false }) IsMoved!: boolean;
  @ApiProperty({
    example: false,
    description:
      'Extension: true when the occurrence is whole local days of an all-day item (Start and End are ' +
      'then the UTC instants of those days’ midnights in the item’s StartTimeZone); false for timed items and for ' +
      'an all-day item’s occurrence an exception moved to a time of day. Always present.',
  })
  AllDay!: boolean;
  @ApiPropertyOptional({
    format: 'date',
    example: '2026-03-16',
    description:
      'All-day occurrences only: the first local day (in the item’s StartTimeZone: for imports the calendar’s ' +
      'X-WR-TIMEZONE, else UTC).',
  })
  Date?: string;
  @ApiPropertyOptional({
    format: 'date',
    example: '2026-03-17',
    description:
      'All-day occurrences only: the day after the last day (exclusive, like iCalendar DTEND;VALUE=DATE and End): ' +
      'Date 2026-03-16 with EndDate 2026-03-17 is one day.',
  })
  EndDate?: string;
}

export class OccurrencesResponse {
  @ApiProperty({ example: true }) Succeeded!: boolean;
  @ApiProperty({ type: String, nullable: true, example: null }) Message!: string | null;
  @ApiProperty({ type: String, nullable: true, example: null }) Code!: string | null;
  @ApiProperty({ type: [OccurrenceDto] }) Result!: OccurrenceDto[];
}
