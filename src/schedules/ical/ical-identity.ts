// The iCalendar identity of a schedule (RFC 5545 §3.8.4.7 UID, §3.8.7.4 SEQUENCE): the one an import read, kept in
// `schedules.ical_uid` / `ical_sequence`, or for a schedule written as JSON a UID derived from its id, so it never
// changes and needs no storage (docs/decisions.md). The export writes it; an import that meets it again updates
// that schedule instead of creating another.

/** The domain part of UIDs derived from schedule ids. */
const DERIVED_DOMAIN = '@schedules.platform-api';
const DERIVED_UID =
  /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})@schedules\.platform-api$/i;

/** `<schedule id>@schedules.platform-api`: the UID of a schedule no import named. */
export function derivedScheduleUid(scheduleId: string): string {
  return `${scheduleId.toLowerCase()}${DERIVED_DOMAIN}`;
}

/** The schedule id a derived UID names; undefined for any other UID. */
export function scheduleIdOfDerivedUid(uid: string): string | undefined {
  return DERIVED_UID.exec(uid.trim())?.[1].toLowerCase();
}

/**
 * The UID of the item at `position`: the schedule's own for the first (an imported schedule has one item), and
 * `<uid>#<position>` for further items of a schedule written as JSON, so every VEVENT master has its own.
 */
export function itemUid(scheduleUid: string, position: number): string {
  return position === 0 ? scheduleUid : `${scheduleUid}#${position}`;
}
