// Entities ↔ the documented Schedule representation (which is also the recurrence engine's input).
import type { ScheduleDto, ScheduleItemDto, ScheduleItemInput } from './dto/schedule.dto.js';
import { Recurrence, RecurrenceException, Schedule, ScheduleItem } from './entities/schedule.entity.js';

const orNull = <T>(value: T | null | undefined): T | null => (value === undefined ? null : value);
const byPosition = (a: { position: number }, b: { position: number }) => a.position - b.position;

export function toScheduleDto(schedule: Schedule): ScheduleDto {
  return { Id: schedule.id, ScheduleItems: [...schedule.items].sort(byPosition).map(toItemDto) };
}

/**
 * A stored item in the documented representation. The recurrence engine reads the same field names, so this is
 * also its input (it ignores the ids).
 */
export function toItemDto(item: ScheduleItem): ScheduleItemDto {
  const recurrence = item.recurrences?.[0];
  return {
    Id: item.id,
    Name: item.name,
    Start: item.start,
    End: item.end,
    StartTimeZone: item.startTimeZone,
    AllDay: item.allDay === true,
    Recurrence: recurrence
      ? {
          Id: recurrence.id,
          StartTime: recurrence.startTime,
          EndTime: recurrence.endTime,
          Offset: recurrence.offset,
          EndCount: recurrence.endCount,
          RecurrenceType: recurrence.recurrenceType,
          Interval: recurrence.interval,
          Duration: recurrence.duration,
          Pattern: recurrence.pattern,
          Exceptions: [...(recurrence.exceptions ?? [])].sort(byPosition).map((exception) => ({
            Id: exception.id,
            RecurrenceId: recurrence.id,
            OriginalTime: exception.originalTime,
            IsDeleted: exception.isDeleted,
            NewStart: exception.newStart,
            NewEnd: exception.newEnd,
            NewStartTime: exception.newStartTime,
            NewEndTime: exception.newEndTime,
          })),
          // After the documented fields, so clients that read them in order see the same prefix.
          RecurrenceDates: recurrence.recurrenceDates ?? [],
          ExceptionDates: recurrence.exceptionDates ?? [],
        }
      : null,
  };
}

/** New rows for a schedule's items (ids assigned here, so the answer can show them). */
export function toItemEntities(
  scheduleId: string,
  items: readonly ScheduleItemInput[],
  newId: () => string,
): ScheduleItem[] {
  return items.map((input, position) => {
    const item = Object.assign(new ScheduleItem(), {
      id: newId(),
      scheduleId,
      position,
      name: orNull(input.Name),
      start: input.Start.trim(),
      end: orNull(input.End?.trim() || null),
      startTimeZone: orNull(input.StartTimeZone?.trim() || null),
      allDay: input.AllDay === true,
      recurrences: [] as Recurrence[],
    });
    const source = input.Recurrence;
    if (source) {
      const recurrenceId = newId();
      const recurrence = Object.assign(new Recurrence(), {
        id: recurrenceId,
        scheduleItemId: item.id,
        startTime: orNull(source.StartTime),
        endTime: orNull(source.EndTime),
        offset: orNull(source.Offset),
        endCount: orNull(source.EndCount),
        recurrenceType: orNull(source.RecurrenceType),
        interval: source.Interval === undefined || source.Interval === null ? null : String(source.Interval),
        duration: orNull(source.Duration),
        pattern: typeof source.Pattern === 'string' ? source.Pattern : null,
        recurrenceDates: source.RecurrenceDates?.length ? source.RecurrenceDates : null,
        exceptionDates: source.ExceptionDates?.length ? source.ExceptionDates : null,
        exceptions: (source.Exceptions ?? []).map((exception, index) =>
          Object.assign(new RecurrenceException(), {
            id: newId(),
            recurrenceId,
            position: index,
            originalTime: orNull(exception.OriginalTime),
            isDeleted: exception.IsDeleted ?? false,
            newStart: orNull(exception.NewStart),
            newEnd: orNull(exception.NewEnd),
            newStartTime: orNull(exception.NewStartTime),
            newEndTime: orNull(exception.NewEndTime),
          }),
        ),
      });
      item.recurrences = [recurrence];
    }
    return item;
  });
}
