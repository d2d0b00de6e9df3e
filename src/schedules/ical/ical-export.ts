// Schedules → one RFC 5545 VCALENDAR (§3.4, §3.6.1 VEVENT, §3.6.5 VTIMEZONE). Each schedule item becomes a VEVENT
// whose recurrence set (§3.8.5: RRULE, RDATE, EXDATE) is the one the engine expands, and each moved exception a
// VEVENT with the same UID and a RECURRENCE-ID (§3.8.4.4). Content lines are folded at 75 octets (§3.1) with CRLF,
// TEXT values escaped (§3.3.11). Offset, which iCalendar lacks, is folded into DTSTART and the rule where that
// is exact (see docs/schedules.md, "iCalendar export"). Pure functions: no Nest, no database.
import { CalendarBuilder } from './ical-export-builder.js';
import type { ExportSchedule } from './ical-export-model.js';
import { floorSecond } from './ical-export-zone.js';
import { escapeText, joinLines } from './ical-lines.js';
import { derivedScheduleUid, itemUid } from './ical-identity.js';
import { formatWall, tzidProperty, vtimezoneLines } from './vtimezone.js';

export { escapeText, foldLine, joinLines } from './ical-lines.js';
export { IcalExportError, MAX_LISTED, type ExportItem, type ExportSchedule } from './ical-export-model.js';

export const PRODID = '-//platform-api//Schedules iCalendar export 1.0//EN';

/**
 * One VCALENDAR with a VEVENT per schedule item (plus one per moved exception) and a VTIMEZONE per zone used.
 * `now` is the DTSTAMP. Throws IcalExportError for an item iCalendar cannot express exactly.
 */
export function exportCalendar(schedules: readonly ExportSchedule[], now: number): string {
  const steps = calendarSteps(schedules, now);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * exportCalendar as steps: the generator pauses after each schedule and each VTIMEZONE, so a caller can give the
 * event loop a turn between them (1,000 schedules are tens of milliseconds of work) and returns the calendar.
 */
export function* calendarSteps(
  schedules: readonly ExportSchedule[],
  now: number,
): Generator<void, string, void> {
  const builder = new CalendarBuilder(`${formatWall(floorSecond(now))}Z`);
  for (const schedule of schedules) {
    schedule.ScheduleItems.forEach((item, index) =>
      builder.addItem(schedule.Id, index, item, identityLines(schedule, index)),
    );
    yield;
  }
  const lines = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    `PRODID:${PRODID}`,
    'CALSCALE:GREGORIAN',
    'METHOD:PUBLISH',
  ];
  // DATEs are floating (§3.3.4); importers, this service's too, read them in X-WR-TIMEZONE (Google's and Apple's
  // calendar property), else in UTC. Written when every all-day item has one zone other than UTC.
  const [dayZone] = builder.allDayZones;
  if (builder.allDayZones.size === 1 && dayZone !== 'UTC') lines.push(`X-WR-TIMEZONE:${dayZone}`);
  for (const [tzid, use] of builder.zones) {
    const component = vtimezoneLines(use.rules, use.from, use.to);
    // The component is built under the engine's canonical id; the events name the zone as resolved.
    lines.push(...component.map((line) => (line.startsWith('TZID:') ? tzidProperty(tzid) : line)));
    yield;
  }
  lines.push(...builder.events, 'END:VCALENDAR');
  return joinLines(lines);
}

/**
 * UID (the imported one, else derived from the schedule id) and SEQUENCE of an item's VEVENTs: the same in every
 * export, so a subscriber sees updates, not new events, and importing the export updates the schedule.
 */
function identityLines(schedule: ExportSchedule, position: number): string[] {
  const uid = itemUid(schedule.Uid ?? derivedScheduleUid(schedule.Id), position);
  const sequence = schedule.Sequence ?? 0;
  return [`UID:${escapeText(uid)}`, ...(sequence > 0 ? [`SEQUENCE:${sequence}`] : [])];
}
