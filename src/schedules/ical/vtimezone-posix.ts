// RFC 5545 §3.6.5 VTIMEZONE → POSIX TZ string (IEEE 1003.1 XBD §8.3, RFC 8536 §3.3), for a VTIMEZONE that no IANA
// zone matches (a made-up, historical or customised zone): the service then stores the zone as the rules the
// calendar spells out. The observances in effect from the events' first day on must be one of:
//   - two unbounded yearly rules (one onset each year, back and forth between two offsets), each
//     `FREQ=YEARLY;BYMONTH=m` with `BYDAY=nDD` (n = 1..4 → `Mm.n.d`, n = -1 → `Mm.5.d`), `BYDAY=DD` with
//     `BYMONTHDAY` one of the weeks 1–7, 8–14, 15–21, 22–28 or the month's last seven days (Outlook's and tzdata's
//     "Sunday on or after"), or one fixed `BYMONTHDAY` (→ `Jn`); the time of the change is DTSTART's wall time,
//     which RFC 5545 reads in TZOFFSETFROM, as POSIX reads its rule time in the offset before the change;
//   - or no change at all: a fixed offset.
// Every other observance must have its last onset before the events' first day, and the string must give the
// VTIMEZONE's own offsets (computed by ical.js) at local noon of every day of the compared span. Anything else —
// rules that change within the events' span, a 5th weekday, BYSETPOS, … — gives undefined: the events are skipped.
// Names are the offsets (`<-0330>`, as tzdata writes zones without abbreviations), never the VTIMEZONE's TZNAME:
// an alphabetic name invites a reader to trust it (`EST`), and many TZNAMEs are not POSIX names at all.
import ICAL from 'ical.js';
import {
  MS_PER_DAY,
  MS_PER_HOUR,
  MS_PER_SECOND,
  daysFromCivil,
  daysInMonth,
} from '../recurrence/calendar.js';
import { zoneRules } from '../recurrence/time-zone.js';

const NOON_MS = 12 * MS_PER_HOUR;
const POSIX_WEEKDAYS = ['SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA'];
/** Onsets of a COUNT-bounded rule are enumerated up to this many; a larger COUNT counts as unbounded. */
const MAX_COUNTED_ONSETS = 1_000;

/** The VTIMEZONE's UTC offset (ms) at local noon of each day `firstDay..lastDay` (days since 1970), by ical.js. */
export function icalNoonOffsets(
  vtimezone: ICAL.Component,
  firstDay: number,
  lastDay: number,
): { walls: number[]; offsets: number[] } | undefined {
  let timezone: ICAL.Timezone;
  try {
    timezone = new ICAL.Timezone(vtimezone);
  } catch {
    return undefined;
  }
  // DST changes happen at night, so noon is never ambiguous and shows the day's offset.
  const walls: number[] = [];
  const offsets: number[] = [];
  for (let day = firstDay; day <= lastDay; day++) {
    const wall = day * MS_PER_DAY + NOON_MS;
    const date = new Date(wall);
    const time = ICAL.Time.fromData(
      {
        year: date.getUTCFullYear(),
        month: date.getUTCMonth() + 1,
        day: date.getUTCDate(),
        hour: 12,
        minute: 0,
        second: 0,
        isDate: false,
      },
      timezone,
    );
    const seconds = timezone.utcOffset(time);
    if (!Number.isFinite(seconds)) return undefined;
    walls.push(wall);
    offsets.push(seconds * 1000);
  }
  return { walls, offsets };
}

interface Observance {
  readonly kind: string;
  /** DTSTART as wall ms (in TZOFFSETFROM). */
  readonly start: number;
  readonly from: number;
  readonly to: number;
  readonly rule: ICAL.Recur | undefined;
  /** Wall ms of the last onset; Infinity for an unbounded rule. */
  readonly lastOnset: number;
}

function wallMsOf(time: ICAL.Time): number {
  return (
    daysFromCivil(time.year, time.month, time.day) * MS_PER_DAY +
    ((time.hour * 60 + time.minute) * 60 + time.second) * MS_PER_SECOND
  );
}

function observancesOf(vtimezone: ICAL.Component): Observance[] | undefined {
  const out: Observance[] = [];
  for (const component of vtimezone.getAllSubcomponents()) {
    if (component.name !== 'standard' && component.name !== 'daylight') continue;
    const dtstart = component.getFirstPropertyValue('dtstart');
    const from = component.getFirstPropertyValue('tzoffsetfrom');
    const to = component.getFirstPropertyValue('tzoffsetto');
    if (
      !(dtstart instanceof ICAL.Time) ||
      !(from instanceof ICAL.UtcOffset) ||
      !(to instanceof ICAL.UtcOffset)
    )
      return undefined;
    const rules = component.getAllProperties('rrule');
    if (rules.length > 1) return undefined;
    const rule = rules.length === 1 ? rules[0].getFirstValue() : undefined;
    if (rule !== undefined && !(rule instanceof ICAL.Recur)) return undefined;
    const start = wallMsOf(dtstart);
    let lastOnset = start;
    for (const property of component.getAllProperties('rdate')) {
      for (const value of property.getValues()) {
        if (value instanceof ICAL.Time) lastOnset = Math.max(lastOnset, wallMsOf(value));
        else return undefined;
      }
    }
    if (rule !== undefined) lastOnset = Math.max(lastOnset, lastOnsetOf(rule, dtstart));
    out.push({
      kind: component.name,
      start,
      from: from.toSeconds() * MS_PER_SECOND,
      to: to.toSeconds() * MS_PER_SECOND,
      rule,
      lastOnset,
    });
  }
  return out;
}

function lastOnsetOf(rule: ICAL.Recur, dtstart: ICAL.Time): number {
  if (rule.until) {
    // UNTIL is in UTC (or a wall time); a day of margin keeps the comparison with wall times on the safe side.
    return wallMsOf(rule.until) + MS_PER_DAY;
  }
  if (rule.count === null || rule.count > MAX_COUNTED_ONSETS) return Infinity;
  const iterator = rule.iterator(dtstart);
  let last = wallMsOf(dtstart);
  for (let next = iterator.next(); next; next = iterator.next()) last = Math.max(last, wallMsOf(next));
  return last;
}

/** `Mm.w.d` or `Jn` for a yearly rule, undefined when POSIX cannot say it. */
function posixDate(rule: ICAL.Recur, start: number): string | undefined {
  if (rule.freq !== 'YEARLY' || (rule.interval ?? 1) !== 1) return undefined;
  const { BYMONTH, BYDAY, BYMONTHDAY, ...others } = rule.parts as Record<
    string,
    (number | string)[] | undefined
  >;
  if (Object.keys(others).some((key) => (others[key]?.length ?? 0) > 0)) return undefined;
  const startDate = new Date(start);
  const months = BYMONTH ?? [startDate.getUTCMonth() + 1];
  if (months.length !== 1 || typeof months[0] !== 'number') return undefined;
  const month = months[0];
  if (month < 1 || month > 12) return undefined;
  if (BYDAY === undefined) {
    // A fixed date: BYMONTHDAY, or DTSTART's day when the rule names none (RFC 5545 §3.3.10).
    const days = BYMONTHDAY ?? [startDate.getUTCDate()];
    if (days.length !== 1 || typeof days[0] !== 'number') return undefined;
    const day = days[0];
    // Jn counts 1 January as 1 and never counts 29 February.
    if (day < 1 || day > daysInMonth(2001, month)) return undefined;
    return `J${daysFromCivil(2001, month, day) - daysFromCivil(2001, 1, 1) + 1}`;
  }
  if (BYMONTH === undefined || BYDAY.length !== 1 || typeof BYDAY[0] !== 'string') return undefined;
  const match = /^([+-]?\d{1,2})?(SU|MO|TU|WE|TH|FR|SA)$/.exec(BYDAY[0]);
  if (match === null) return undefined;
  const weekday = POSIX_WEEKDAYS.indexOf(match[2]);
  if (match[1] !== undefined) {
    if (BYMONTHDAY !== undefined) return undefined;
    const n = Number(match[1]);
    if (n === -1) return `M${month}.5.${weekday}`;
    return n >= 1 && n <= 4 ? `M${month}.${n}.${weekday}` : undefined;
  }
  // "Weekday on or after": seven consecutive days that are one of POSIX's weeks.
  if (BYMONTHDAY === undefined || BYMONTHDAY.length !== 7) return undefined;
  const days = [...BYMONTHDAY].map(Number).sort((a, b) => a - b);
  if (days.some((day, i) => day !== days[0] + i)) return undefined;
  if ([1, 8, 15, 22].includes(days[0])) return `M${month}.${(days[0] + 6) / 7}.${weekday}`;
  // The last seven days of a month whose length never changes (not February).
  if (month !== 2 && days[6] === daysInMonth(2001, month)) return `M${month}.5.${weekday}`;
  // -7..-1 (counted from the month's end) is the last week in every month, February too.
  if (days[0] === -7) return `M${month}.5.${weekday}`;
  return undefined;
}

/** `5`, `-3:30`, `1:00:15`: POSIX's `[-]h[:mm[:ss]]`. */
function clock(ms: number): string {
  const sign = ms < 0 ? '-' : '';
  const total = Math.round(Math.abs(ms) / MS_PER_SECOND);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${sign}${h}${m || s ? `:${pad(m)}` : ''}${s ? `:${pad(s)}` : ''}`;
}

/** `<-0330>`, `<+11>`: the offset as a name, as tzdata writes zones without an abbreviation. */
function offsetName(offset: number): string {
  const sign = offset < 0 ? '-' : '+';
  const total = Math.round(Math.abs(offset) / MS_PER_SECOND);
  const pad = (n: number) => String(n).padStart(2, '0');
  const h = pad(Math.floor(total / 3600));
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  return `<${sign}${h}${m || s ? pad(m) : ''}${s ? pad(s) : ''}>`;
}

/** The standard part of a POSIX string: name and offset (POSIX's sign: west of Greenwich is positive). */
function zonePart(offset: number): string {
  return `${offsetName(offset)}${clock(-offset)}`;
}

/**
 * The POSIX TZ string that describes `vtimezone` from the events' first local day on, checked against ical.js at
 * local noon of every day from `firstDay` to `lastDay` (days since 1970); undefined when there is none.
 */
export function vtimezoneToPosix(
  vtimezone: ICAL.Component,
  firstDay: number,
  lastDay: number,
): string | undefined {
  let observances: Observance[] | undefined;
  try {
    observances = observancesOf(vtimezone);
  } catch {
    return undefined;
  }
  if (observances === undefined || observances.length === 0) return undefined;
  const spanStart = firstDay * MS_PER_DAY;
  const spanEnd = (lastDay + 1) * MS_PER_DAY;
  const active = observances.filter((o) => o.lastOnset >= spanStart);
  const yearly = active.filter((o) => o.rule !== undefined && o.lastOnset === Infinity);
  const expected = icalNoonOffsets(vtimezone, firstDay, lastDay);
  if (expected === undefined || expected.offsets.length === 0) return undefined;

  let candidate: string | undefined;
  if (yearly.length === 2 && yearly.length === active.length && yearly[0].to !== yearly[1].to) {
    // Standard time is the STANDARD observance's offset (or the smaller one when the labels do not tell).
    const labelled = yearly.find((o) => o.kind === 'standard');
    const std =
      labelled !== undefined && yearly.some((o) => o.kind === 'daylight')
        ? labelled
        : yearly[0].to < yearly[1].to
          ? yearly[0]
          : yearly[1];
    const dst = std === yearly[0] ? yearly[1] : yearly[0];
    // Both rules must be in force over the compared span; earlier onsets of theirs are fine.
    if (std.start >= spanEnd || dst.start >= spanEnd) return undefined;
    const startDate = posixDate(dst.rule!, dst.start);
    const endDate = posixDate(std.rule!, std.start);
    if (startDate === undefined || endDate === undefined) return undefined;
    // DTSTART is read in TZOFFSETFROM, POSIX's rule time in the offset before the change (standard time before
    // DST begins, DST before it ends): the same when the VTIMEZONE is consistent, corrected when it is not.
    const timeOf = (o: Observance, before: number) =>
      o.start - Math.floor(o.start / MS_PER_DAY) * MS_PER_DAY - o.from + before;
    const startTime = timeOf(dst, std.to);
    const endTime = timeOf(std, dst.to);
    const rulePart = (date: string, time: number) =>
      time === 2 * MS_PER_HOUR ? date : `${date}/${clock(time)}`;
    const dstPart =
      dst.to === std.to + MS_PER_HOUR ? offsetName(dst.to) : `${offsetName(dst.to)}${clock(-dst.to)}`;
    candidate = `${zonePart(std.to)}${dstPart},${rulePart(startDate, startTime)},${rulePart(endDate, endTime)}`;
  } else {
    // No change from the events' first day on: the offset of that day, which every later onset keeps.
    const offset = expected.offsets[0];
    if (active.some((o) => o.to !== offset)) return undefined;
    candidate = zonePart(offset);
  }
  let rules;
  try {
    rules = zoneRules(candidate);
  } catch {
    // A rule POSIX can write but the service refuses (e.g. changes less than two days apart).
    return undefined;
  }
  const agrees = expected.walls.every(
    (wall, i) => rules.offsetAt(wall - expected.offsets[i]) === expected.offsets[i],
  );
  return agrees ? candidate : undefined;
}
