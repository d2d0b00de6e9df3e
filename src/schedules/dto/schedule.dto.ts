import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  Allow,
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { OptionalNested } from '../../common/dto/nested.js';
import { MAX_INTEGER_TEXT, MAX_PATTERN_LENGTH } from '../recurrence/series-compiler.js';
import { ApiObjectRule } from '../../openapi/object-rules.js';

// Request DTOs check shapes and types; the recurrence engine checks meaning (zones, RRULE, durations, dates) and
// names the field (e.g. ScheduleItems[0].Recurrence.Pattern).

/**
 * An id a GET answer carries (`Id`, `RecurrenceId`): accepted in a write and ignored — the service assigns ids, and
 * `PUT` replaces the items — so a client can send back what it read, or a model class with its ids (`null`, a
 * Guid.Empty), without a 400. The schedule's id is the path's.
 */
function ReadOnlyId(): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: String,
      nullable: true,
      readOnly: true,
      description: 'Read-only: ignored in a write (ids are assigned by the service)',
    }),
    IsOptional(),
    IsString(),
    MaxLength(100),
  );
}

export class RecurrenceExceptionInput {
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: '2026-03-16T08:00:00Z',
    description: 'Start instant of the occurrence it changes',
  })
  @IsOptional()
  @IsString()
  @MaxLength(40)
  OriginalTime?: string | null;

  @ApiPropertyOptional({ example: false })
  @IsOptional()
  @IsBoolean()
  IsDeleted?: boolean | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: null,
    description: 'New start as a local wall time in the item zone',
  })
  @IsOptional()
  @IsString()
  @MaxLength(40)
  NewStart?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: null,
    description: 'New end as a local wall time in the item zone',
  })
  @IsOptional()
  @IsString()
  @MaxLength(40)
  NewEnd?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: '2026-03-17T12:00:00Z',
    description: 'New start instant (wins over NewStart)',
  })
  @IsOptional()
  @IsString()
  @MaxLength(40)
  NewStartTime?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: '2026-03-17T12:30:00Z',
    description: 'New end instant (wins over NewEnd)',
  })
  @IsOptional()
  @IsString()
  @MaxLength(40)
  NewEndTime?: string | null;

  @ReadOnlyId() Id?: string | null;
  @ReadOnlyId() RecurrenceId?: string | null;
}

/** A series ends after a count or at a time, not both (series-compiler.ts); COUNT/UNTIL in Pattern count too. */
@ApiObjectRule({
  not: {
    required: ['EndCount', 'EndTime'],
    properties: {
      EndCount: { type: 'integer', minimum: 1, maximum: 1_000_000 },
      EndTime: { type: 'string', maxLength: 40, pattern: '\\S' },
    },
  },
})
export class RecurrenceInput {
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: '2026-01-05T09:00:00',
    description: 'Series start (DTSTART); wall time in the item zone or an instant',
  })
  @IsOptional()
  @IsString()
  @MaxLength(40)
  StartTime?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: '2026-12-31T23:59:59Z',
    description: 'Series end (UNTIL, inclusive); not together with EndCount above 0 or COUNT in Pattern',
  })
  @IsOptional()
  @IsString()
  @MaxLength(40)
  EndTime?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: '-PT15M',
    description: 'Signed ISO 8601 duration added to every start',
  })
  @IsOptional()
  @IsString()
  @MaxLength(40)
  Offset?: string | null;

  @ApiPropertyOptional({
    type: 'integer',
    nullable: true,
    example: 0,
    description: 'COUNT; 0 or absent = unbounded; above 0 not together with EndTime or UNTIL in Pattern',
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(1_000_000)
  EndCount?: number | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: 'Weekly',
    description: 'None, Secondly, Minutely, Hourly, Daily, Weekly, Monthly, Yearly (any case)',
  })
  @IsOptional()
  @IsString()
  @MaxLength(20)
  RecurrenceType?: string | null;

  // Enforced by the series compiler (400 naming Recurrence.Interval): Interval may also be a JSON number.
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: '1',
    description: 'Positive integer as text',
    maxLength: MAX_INTEGER_TEXT,
  })
  @Allow()
  Interval?: string | number | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: 'PT1H',
    description: 'ISO 8601 duration of each occurrence; default End − Start',
  })
  @IsOptional()
  @IsString()
  @MaxLength(40)
  Duration?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: 'FREQ=WEEKLY;BYDAY=MO,WE,FR',
    description: 'RFC 5545 RRULE (RRULE: prefix allowed); authoritative',
    // Enforced by the series compiler (400 naming Recurrence.Pattern), not a decorator: Pattern is any JSON value.
    maxLength: MAX_PATTERN_LENGTH,
  })
  @Allow()
  Pattern?: unknown;

  @ApiPropertyOptional({
    type: [String],
    example: ['2026-02-14T09:00:00'],
    description:
      'RDATE (RFC 5545 §3.8.5.2): extra occurrence starts, each an instant or a wall time in the item zone; ' +
      'every one lasts the item duration. At most 1,000.',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @IsString({ each: true })
  @MaxLength(40, { each: true })
  RecurrenceDates?: string[] | null;

  @ApiPropertyOptional({
    type: [String],
    example: ['2026-03-16T09:00:00'],
    description:
      'EXDATE (RFC 5545 §3.8.5.1): starts removed from the set (RRULE and RecurrenceDates), each an instant or ' +
      'a wall time in the item zone. At most 1,000.',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @IsString({ each: true })
  @MaxLength(40, { each: true })
  ExceptionDates?: string[] | null;

  @ApiPropertyOptional({ type: [RecurrenceExceptionInput] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @ValidateNested({ each: true })
  @Type(() => RecurrenceExceptionInput)
  Exceptions?: RecurrenceExceptionInput[] | null;

  @ReadOnlyId() Id?: string | null;
}

export class ScheduleItemInput {
  @ApiPropertyOptional({ type: String, nullable: true, example: 'Stand-up' })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  Name?: string | null;

  @ApiProperty({ example: '2026-01-05T09:00:00+01:00', description: 'Start of the first occurrence' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(40)
  Start!: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: '2026-01-05T09:15:00+01:00',
    description: 'End of the first occurrence',
  })
  @IsOptional()
  @IsString()
  @MaxLength(40)
  End?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: 'Europe/Berlin',
    description:
      'IANA or Windows zone id; absent = UTC. Also a POSIX TZ string (IEEE 1003.1 TZ, RFC 8536 §3.3, e.g. ' +
      '`<-0330>3:30<-0230>,M10.1.0/0,M2.3.0/0`), which the iCalendar import stores for a VTIMEZONE no IANA zone ' +
      'matches; `UTC+01`-style names are refused (POSIX would read them as UTC-1)',
  })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  StartTimeZone?: string | null;

  @ApiPropertyOptional({
    type: Boolean,
    nullable: true,
    example: false,
    default: false,
    description:
      'Extension: an all-day item, as an iCalendar DATE event. Start and End (exclusive) must then be ' +
      'starts of local days (midnight) in StartTimeZone with End after Start; Recurrence.StartTime, ' +
      'RecurrenceDates and ExceptionDates midnights too, Duration and Offset whole days, no sub-daily FREQ or ' +
      'BYHOUR/BYMINUTE/BYSECOND. Each occurrence lasts whole days (default: End − Start in days). Absent = false.',
  })
  @IsOptional()
  @IsBoolean()
  AllDay?: boolean | null;

  @ApiPropertyOptional({ type: RecurrenceInput, nullable: true })
  @OptionalNested(() => RecurrenceInput)
  Recurrence?: RecurrenceInput | null;

  @ReadOnlyId() Id?: string | null;
}

/** A realistic schedule for Swagger: a weekly stand-up in Berlin, one occurrence cancelled and one moved. */
const STAND_UP_EXAMPLE = [
  {
    Name: 'Team stand-up',
    Start: '2026-01-05T09:00:00+01:00',
    End: '2026-01-05T09:15:00+01:00',
    StartTimeZone: 'Europe/Berlin',
    Recurrence: {
      RecurrenceType: 'Weekly',
      Interval: '1',
      Pattern: 'FREQ=WEEKLY;BYDAY=MO,WE,FR',
      EndTime: '2026-12-31T23:59:59Z',
      Exceptions: [
        { OriginalTime: '2026-03-16T08:00:00Z', IsDeleted: true },
        {
          OriginalTime: '2026-03-18T08:00:00Z',
          NewStartTime: '2026-03-18T12:00:00Z',
          NewEndTime: '2026-03-18T12:15:00Z',
        },
      ],
    },
  },
];

export class ScheduleInput {
  @ApiProperty({ type: [ScheduleItemInput], example: STAND_UP_EXAMPLE })
  @IsArray()
  @ArrayMaxSize(100)
  @ValidateNested({ each: true })
  @Type(() => ScheduleItemInput)
  ScheduleItems!: ScheduleItemInput[];

  @ReadOnlyId() Id?: string | null;
}

export class ListSchedulesQuery {
  // Bounded so (PageIndex - 1) × PageSize stays a valid SQL OFFSET (the fuzzer's 1e308 was a 500).
  @ApiPropertyOptional({ type: 'integer', example: 1, description: '1-based, default 1, at most 1,000,000' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  PageIndex?: number;

  @ApiPropertyOptional({ type: 'integer', example: 20, description: 'default 20, at most 500' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(500)
  PageSize?: number;
}

// Responses (documented field names and casing; every field present, null when empty).

export class RecurrenceExceptionDto {
  @ApiProperty({ example: '4b0f2b1e-8c1d-4c1e-9f5e-2f1d8f2a9e01' }) Id!: string;
  @ApiProperty({ example: '7d4e0f3a-1b2c-4d5e-8f90-a1b2c3d4e5f6' }) RecurrenceId!: string;
  @ApiProperty({ nullable: true, example: '2026-03-16T08:00:00Z' }) OriginalTime!: string | null;
  @ApiProperty({ example: false }) IsDeleted!: boolean;
  @ApiProperty({ type: String, nullable: true, example: null }) NewStart!: string | null;
  @ApiProperty({ type: String, nullable: true, example: null }) NewEnd!: string | null;
  @ApiProperty({ nullable: true, example: '2026-03-17T12:00:00Z' }) NewStartTime!: string | null;
  @ApiProperty({ nullable: true, example: '2026-03-17T12:30:00Z' }) NewEndTime!: string | null;
}

export class RecurrenceDto {
  @ApiProperty({ example: '7d4e0f3a-1b2c-4d5e-8f90-a1b2c3d4e5f6' }) Id!: string;
  @ApiProperty({ nullable: true, example: '2026-01-05T09:00:00' }) StartTime!: string | null;
  @ApiProperty({ type: String, nullable: true, example: null }) EndTime!: string | null;
  @ApiProperty({ type: String, nullable: true, example: null }) Offset!: string | null;
  @ApiProperty({ nullable: true, example: 0 }) EndCount!: number | null;
  @ApiProperty({ nullable: true, example: 'Weekly' }) RecurrenceType!: string | null;
  @ApiProperty({ nullable: true, example: '1' }) Interval!: string | null;
  @ApiProperty({ nullable: true, example: 'PT15M' }) Duration!: string | null;
  @ApiProperty({ nullable: true, example: 'FREQ=WEEKLY;BYDAY=MO,WE,FR' }) Pattern!: string | null;
  @ApiProperty({ type: [RecurrenceExceptionDto] }) Exceptions!: RecurrenceExceptionDto[];
  @ApiProperty({ type: [String], example: [], description: 'RDATE starts as sent; [] when none' })
  RecurrenceDates!: string[];
  @ApiProperty({ type: [String], example: [], description: 'EXDATE starts as sent; [] when none' })
  ExceptionDates!: string[];
}

export class ScheduleItemDto {
  @ApiProperty({ example: '0c5b2f7e-3a41-4c8e-9a3b-5f6e7d8c9b0a' }) Id!: string;
  @ApiProperty({ nullable: true, example: 'Stand-up' }) Name!: string | null;
  @ApiProperty({ example: '2026-01-05T09:00:00+01:00' }) Start!: string;
  @ApiProperty({ nullable: true, example: '2026-01-05T09:15:00+01:00' }) End!: string | null;
  @ApiProperty({
    nullable: true,
    example: 'Europe/Berlin',
    description:
      'As sent: an IANA or Windows zone id, or a POSIX TZ string (an imported zone without IANA id)',
  })
  StartTimeZone!: string | null;
  @ApiProperty({
    example: false,
    description:
      'Extension: true for an all-day item (an iCalendar DATE event, or written with AllDay: true); ' +
      'Start and End are then starts of local days in StartTimeZone. Always present.',
  })
  AllDay!: boolean;
  @ApiProperty({ type: RecurrenceDto, nullable: true }) Recurrence!: RecurrenceDto | null;
}

export class ScheduleDto {
  @ApiProperty({ example: '3f2504e0-4f89-11d3-9a0c-0305e82c3301' }) Id!: string;
  @ApiProperty({ type: [ScheduleItemDto] }) ScheduleItems!: ScheduleItemDto[];
}

/** The envelope of an operation with no result (Schedule_Delete). */
export class ScheduleDeletedResponse {
  @ApiProperty({ example: true }) Succeeded!: boolean;
  @ApiProperty({ type: String, nullable: true, example: null }) Message!: string | null;
  @ApiProperty({ type: String, nullable: true, example: null }) Code!: string | null;
}

export class ScheduleResponse {
  @ApiProperty({ example: true }) Succeeded!: boolean;
  @ApiProperty({ type: String, nullable: true, example: null }) Message!: string | null;
  @ApiProperty({ type: String, nullable: true, example: null }) Code!: string | null;
  @ApiProperty({ type: ScheduleDto }) Result!: ScheduleDto;
}

export class ScheduleListResponse {
  @ApiProperty({ example: true }) Succeeded!: boolean;
  @ApiProperty({ type: String, nullable: true, example: null }) Message!: string | null;
  @ApiProperty({ type: String, nullable: true, example: null }) Code!: string | null;
  @ApiProperty({ type: [ScheduleDto] }) Result!: ScheduleDto[];
  @ApiProperty({ type: 'integer', example: 1 }) PageIndex!: number;
  @ApiProperty({ type: 'integer', example: 3 }) TotalPages!: number;
  @ApiProperty({ example: false }) HasPreviousPage!: boolean;
  @ApiProperty({ example: true }) HasNextPage!: boolean;
}
