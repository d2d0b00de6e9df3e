import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsUUID } from 'class-validator';
import { ScheduleResponse } from './schedule.dto.js';

/** At most this many schedules in one export (one request's work stays bounded). */
export const MAX_EXPORT_IDS = 1_000;

export class IcalExportQuery {
  @ApiProperty({
    type: [String],
    // No example: the ids must name existing schedules (404 otherwise), which no example id can on a new instance.
    description: `Ids of existing schedules, comma-separated or repeated; 1 to ${MAX_EXPORT_IDS}`,
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_EXPORT_IDS)
  @IsUUID('all', { each: true })
  ids!: string[];
}

/** A calendar component the import left out. */
export class IcalSkippedComponent {
  @ApiProperty({
    type: 'integer',
    example: 37,
    description: 'Line of the component’s BEGIN in the body; for a single line left out (below), that line',
  })
  Line!: number;

  @ApiProperty({
    example: 'VTODO',
    description:
      'VEVENT, VTODO, VJOURNAL, VFREEBUSY, VTIMEZONE, …; VCALENDAR for one of several VCALENDARs that is no ' +
      'calendar of events (an iTIP CANCEL or REPLY, a VERSION other than 2.0); or, for a single line left out of a ' +
      'component that was imported (a SUMMARY cut to 500 characters, a malformed ATTENDEE or X- line), its ' +
      'property name',
  })
  Component!: string;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'uid4@host1.com',
    description: 'The component’s UID; derived from its content for a VEVENT without one; null if none',
  })
  Uid!: string | null;

  @ApiProperty({
    example:
      'line 37: VTODO: VTODO components (to-dos) cannot be represented: a schedule holds events (VEVENT) only',
    description: 'Why, naming the line and property at fault',
  })
  Reason!: string;
}

/** How many components of one kind the import left out (`Skipped` lists only the first 100). */
export class IcalSkippedCount {
  @ApiProperty({
    example: 'VTODO',
    description: 'VEVENT, VTODO, …; `(other)` for the kinds past the first 20',
  })
  Component!: string;

  @ApiProperty({ type: 'integer', example: 3 })
  Count!: number;
}

/**
 * A schedule an import created or updated: one per series (UID) of the calendar, except that the series of this
 * service's export that name one schedule (`X-PLATFORM-SCHEDULE-ID`) are that schedule's items and listed once.
 */
export class IcalImportedSchedule {
  @ApiProperty({ example: '3f2504e0-4f89-11d3-9a0c-0305e82c3301' })
  Id!: string;

  @ApiProperty({
    example: '040000008200E00074C5B7101A82E008@example.com',
    description: 'The series’ UID (derived from its content for a VEVENT without one)',
  })
  Uid!: string;

  @ApiProperty({ type: 'integer', example: 12, description: 'Line of the series’ VEVENT BEGIN in the body' })
  Line!: number;

  @ApiProperty({
    enum: ['Created', 'Updated'],
    example: 'Created',
    description: 'Updated: an earlier import of this series made the schedule; its items were replaced',
  })
  Status!: 'Created' | 'Updated';
}

/**
 * Schedule_ImportIcal: the first series' schedule in `Result` (as Schedule_Create answers), every schedule created
 * or updated in `Schedules`, and what was left out.
 */
export class IcalImportResponse extends ScheduleResponse {
  @ApiProperty({
    type: [IcalImportedSchedule],
    description:
      'Every schedule the import created or updated, once each, in file order: one per series (UID), or for this ' +
      "service's export of a schedule of several items that schedule once; `Result` is the first",
  })
  Schedules!: IcalImportedSchedule[];

  @ApiProperty({
    type: [IcalSkippedComponent],
    description:
      'Components left out of the import, in file order: the first 100 (`SkippedTotal` counts them all); [] when ' +
      'nothing was skipped',
  })
  Skipped!: IcalSkippedComponent[];

  @ApiProperty({ type: 'integer', example: 1, description: 'How many components were left out in all' })
  SkippedTotal!: number;

  @ApiProperty({
    type: [IcalSkippedCount],
    description: 'How many were left out per component kind, most first (at most 21 entries); [] when none',
  })
  SkippedCounts!: IcalSkippedCount[];
}
