// The independent side of the iCalendar import e2e test: ical.js (Mozilla's implementation) expands a calendar
// file itself — its own VTIMEZONE arithmetic for every zone the file defines, its own RRULE/RDATE/EXDATE
// expansion and RECURRENCE-ID handling — and the occurrences are compared with the service's listing. Only what
// ical.js leaves open is decided here, the same way the import documents it: floating times and dates are read in
// X-WR-TIMEZONE (else UTC), a TZID without a VTIMEZONE is read as the IANA zone of that name (through Intl, not the
// service's code), STATUS:CANCELLED overrides remove their occurrence, an RDATE equal to an RRULE instance is one
// occurrence, and EXDATEs are also applied here because ical.js skips some (below).
import ICAL from 'ical.js';

export interface OracleOccurrence {
  start: number;
  end: number;
}

/** Offset (ms) of an IANA zone at an instant, through Intl only. */
function intlOffset(zone: string, instant: number): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(new Date(instant));
  const get = (type: string): number => Number(parts.find((part) => part.type === type)!.value);
  const wall = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return wall - Math.floor(instant / 1000) * 1000;
}

/** The instant of a wall time in an IANA zone (the offset in force just before it, as RFC 5545 reads gaps). */
function intlInstant(zone: string, wall: number): number {
  const first = wall - intlOffset(zone, wall - intlOffset(zone, wall));
  return wall - intlOffset(zone, first);
}

function wallOf(time: ICAL.Time): number {
  return Date.UTC(time.year, time.month - 1, time.day, time.hour, time.minute, time.second);
}

/**
 * Occurrences of every event of the calendar whose start is before `until` (ms), sorted by start then end.
 * `ianaOf` names the IANA zone for floating times (X-WR-TIMEZONE) and for TZIDs without a VTIMEZONE.
 */
export function expandWithIcalJs(text: string, until: number): OracleOccurrence[] {
  ICAL.TimezoneService.reset();
  const calendar = new ICAL.Component(ICAL.parse(text) as unknown[]);
  const knownZones = new Set<string>();
  for (const vtimezone of calendar.getAllSubcomponents('vtimezone')) {
    const zone = new ICAL.Timezone(vtimezone);
    if (zone.tzid !== 'UTC') {
      ICAL.TimezoneService.register(zone);
      knownZones.add(zone.tzid);
    }
  }
  const floatingName = calendar.getFirstPropertyValue('x-wr-timezone');
  const floating = typeof floatingName === 'string' ? floatingName : 'UTC';
  const toInstant = (time: ICAL.Time, tzid: string | undefined): number => {
    if (time.isDate) return intlInstant(floating, wallOf(time));
    if (time.zone === ICAL.Timezone.utcTimezone) return time.toUnixTime() * 1000;
    if (tzid !== undefined && knownZones.has(tzid)) return time.toUnixTime() * 1000;
    return intlInstant(tzid ?? floating, wallOf(time));
  };
  const tzidOf = (component: ICAL.Component, name: string): string | undefined => {
    const value = component.getFirstProperty(name)?.getParameter('tzid');
    return typeof value === 'string' ? value : undefined;
  };

  const masters = new Map<string, ICAL.Component>();
  const overrides = new Map<string, ICAL.Component[]>();
  for (const vevent of calendar.getAllSubcomponents('vevent')) {
    const uid = String(vevent.getFirstPropertyValue('uid'));
    if (vevent.hasProperty('recurrence-id')) overrides.set(uid, [...(overrides.get(uid) ?? []), vevent]);
    else masters.set(uid, vevent);
  }
  const occurrences: OracleOccurrence[] = [];
  const add = (component: ICAL.Component, start: ICAL.Time, end: ICAL.Time): void => {
    const startMs = toInstant(start, tzidOf(component, 'dtstart'));
    if (startMs >= until) return;
    const endProperty = component.hasProperty('dtend') ? 'dtend' : 'dtstart';
    occurrences.push({ start: startMs, end: toInstant(end, tzidOf(component, endProperty)) });
  };
  for (const [uid, master] of masters) {
    const event = new ICAL.Event(master, { exceptions: overrides.get(uid) ?? [] });
    const iterator = event.iterator();
    // RFC 5545 §3.8.5.2: the recurrence set is a set; ical.js yields an RDATE that equals an RRULE instance twice.
    const seen = new Set<string>();
    // ical.js 2.2.1 stops applying a VEVENT's EXDATEs after one that matches no instance (EXDATE 4 Jan, 10 Jan on a
    // rule hitting 1 and 10 Jan keeps 10 Jan); the removed starts are therefore also checked here, as instants.
    const excluded = new Set<number>();
    for (const property of master.getAllProperties('exdate')) {
      const tzid = property.getParameter('tzid');
      for (const value of property.getValues() as ICAL.Time[]) {
        excluded.add(toInstant(value, typeof tzid === 'string' ? tzid : undefined));
      }
    }
    for (let next = iterator.next(); next !== undefined && next !== null; next = iterator.next()) {
      const key = next.toString();
      if (seen.has(key)) continue;
      seen.add(key);
      const details = event.getOccurrenceDetails(next);
      const item = details.item;
      if (excluded.has(toInstant(details.recurrenceId, tzidOf(master, 'dtstart')))) continue;
      if (toInstant(details.recurrenceId, tzidOf(master, 'dtstart')) >= until + 400 * 86_400_000) break;
      if (String(item.component.getFirstPropertyValue('status') ?? '').toUpperCase() === 'CANCELLED')
        continue;
      add(item.component, details.startDate, details.endDate);
    }
  }
  // Overrides without their master in the file stand for themselves.
  for (const [uid, list] of overrides) {
    if (masters.has(uid)) continue;
    for (const component of list) {
      const event = new ICAL.Event(component);
      add(component, event.startDate, event.endDate);
    }
  }
  return occurrences.sort((a, b) => a.start - b.start || a.end - b.end);
}
