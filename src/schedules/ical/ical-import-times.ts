// Reading the import's DATE and DATE-TIME values (RFC 5545 §3.3.4, §3.3.5) and the zones they are in: TZIDs, their
// VTIMEZONEs (matched by name, location or offsets) and the floating zone.
import { MS_PER_DAY, daysFromCivil, daysInMonth } from '../recurrence/calendar.js';
import { parseDuration } from '../recurrence/iso-duration.js';
import { zoneRules } from '../recurrence/time-zone.js';
import { paramOf, textOf, type IcalComponent, type IcalProperty } from './ical-content.js';
import { refuse } from './ical-import-report.js';
import { resolveTzid, zoneFromName, zoneFromOffsetsSteps } from './ical-zones.js';
import { vtimezoneComponent } from './vtimezone-rdates.js';

/**
 * Unnamed VTIMEZONEs matched by their offsets per calendar: each match compares ~420 zones (~300 ms the first time a
 * year is seen), and real calendars have one or two such zones.
 */
export const MAX_OFFSET_MATCHES = 10;

/** A DATE or DATE-TIME value as written: its wall-clock reading (ms since 1970-01-01T00:00 wall) and its kind. */
export interface IcalTime {
  readonly kind: 'date' | 'utc' | 'zoned' | 'floating';
  readonly wallMs: number;
  /** IANA zone of a TZID value. */
  readonly zone?: string;
  /** Dates and floating times: the VCALENDAR of the body they are written in (its X-WR-TIMEZONE); 0 when absent. */
  readonly scope?: number;
}

// Google's birthday calendar writes `RDATE:20131210Z`: a date with a Z, read as that date.
export const DATE = /^(\d{4})(\d{2})(\d{2})Z?$/i;
export const DATE_TIME = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(Z?)$/i;

export interface Timing {
  start: IcalTime;
  startInstant: number;
  startProperty: IcalProperty;
  /** The item's zone: DTSTART's TZID, UTC for a UTC DTSTART, the floating zone for floating times and dates. */
  zone: string;
  endInstant: number;
  endProperty: IcalProperty | undefined;
  /** Recurrence.Duration for recurring items: DURATION as written, or whole days for all-day events. */
  durationText: string | undefined;
}

/** What one VCALENDAR of the body defines for its own values: its VTIMEZONEs and X-WR-TIMEZONE. */
interface CalendarScope {
  readonly calendar: IcalComponent;
  readonly vtimezones: Map<string, IcalComponent>;
  /** Wall-time span of the values using each TZID: the span its VTIMEZONE is compared over. */
  readonly tzidSpans: Map<string, { from: number; to: number }>;
  readonly tzidZones: Map<string, string>;
  floating?: string;
}

/**
 * The values of one body and their zones; resolved zones are kept for the calendar's other values. A body may hold
 * several VCALENDARs: a value is read with the VTIMEZONEs and X-WR-TIMEZONE of the one it is written in (found by
 * its line), so a TZID may mean different zones in two of them.
 */
export class TimeReader {
  private readonly scopes: CalendarScope[];
  private offsetMatches = 0;

  constructor(calendars: readonly IcalComponent[]) {
    this.scopes = calendars.map((calendar) => ({
      calendar,
      vtimezones: new Map(),
      tzidSpans: new Map(),
      tzidZones: new Map(),
    }));
  }

  /** The VTIMEZONE for a TZID of the VCALENDAR it is written in. */
  addVtimezone(tzid: string, vtimezone: IcalComponent): void {
    this.scopeOf(vtimezone.line).vtimezones.set(tzid, vtimezone);
  }

  /** Index of the VCALENDAR that holds `line`: the last one that begins before it. */
  private scopeIndex(line: number): number {
    let low = 0;
    let high = this.scopes.length - 1;
    while (low < high) {
      const middle = Math.ceil((low + high) / 2);
      if (this.scopes[middle].calendar.line <= line) low = middle;
      else high = middle - 1;
    }
    return low;
  }

  private scopeOf(line: number): CalendarScope {
    return this.scopes[this.scopeIndex(line)];
  }

  /**
   * Compares the VTIMEZONEs that name no known zone with every zone ahead of the events, in steps (the first match
   * of one is ~30 ms of work); zoneOf then finds the result in zoneFromOffsets' cache. At most MAX_OFFSET_MATCHES,
   * as zoneOf allows.
   */
  *matchUnnamedZones(): Generator<void, void> {
    let matched = 0;
    for (const { vtimezones, tzidSpans } of this.scopes) {
      for (const [tzid, span] of tzidSpans) {
        const vtimezone = vtimezones.get(tzid);
        if (vtimezone === undefined || zoneFromName(tzid) !== undefined) continue;
        const component = vtimezoneComponent(vtimezone);
        const location = component.getFirstPropertyValue('x-lic-location');
        if (typeof location === 'string' && zoneFromName(location) !== undefined) continue;
        if (++matched > MAX_OFFSET_MATCHES) return;
        yield* zoneFromOffsetsSteps(component, span.from, span.to);
      }
    }
  }

  noteTzidSpans(event: IcalComponent): void {
    const spans = this.scopeOf(event.line).tzidSpans;
    for (const property of event.properties) {
      const tzid = paramOf(property, 'tzid');
      if (tzid === undefined) continue;
      // A period (`start/end`) names two date-times.
      for (const token of property.raw.split(/[,/]/)) {
        const match = DATE_TIME.exec(token.trim());
        if (match === null) continue;
        const wall = wallOf(match);
        if (wall === undefined) continue;
        const span = spans.get(tzid);
        if (span === undefined) spans.set(tzid, { from: wall, to: wall });
        else {
          span.from = Math.min(span.from, wall);
          span.to = Math.max(span.to, wall);
        }
      }
    }
  }

  /**
   * The events to build, in the order each first appears: per UID its masters (VEVENTs without RECURRENCE-ID) with
   * the overrides, or — when the file has no master for the UID (an invitation to some instances only) — each
   * override as an event of its own. Versions of one component are reduced to the winner (`newer`); the others are
   * reported as skipped. Two masters with one UID are versions of each other when their SEQUENCE differs (a revision,
   * RFC 5546 §2.1.4) or when their DTSTART is the same (a copy or an edit that did not move it); otherwise they are
   * different events that a feed gave one UID, and each is imported (overrides go with the first of them).
   */

  /**
   * The instant a RECURRENCE-ID, RDATE or EXDATE names in a series. On an all-day series a date-time names its
   * calendar date (Exchange writes `RECURRENCE-ID;TZID=…:20200416T000000` on all-day series); on a timed series a
   * date names the occurrence on that date.
   */
  seriesInstant(time: IcalTime, property: IcalProperty, timing: Timing): number {
    if (timing.start.kind === 'date') {
      const wall = time.kind === 'utc' ? zoneRules(timing.zone).wallOf(time.wallMs) : time.wallMs;
      return zoneRules(timing.zone).instantOf(Math.floor(wall / MS_PER_DAY) * MS_PER_DAY);
    }
    if (time.kind === 'date') {
      // Outlook writes `EXDATE:20200116` in a timed series: the occurrence on that local date, i.e. the series'
      // time of day on that date in DTSTART's zone.
      const start = timing.start;
      const timeOfDay =
        (start.kind === 'utc' ? zoneRules(timing.zone).wallOf(timing.startInstant) : start.wallMs) %
        MS_PER_DAY;
      return zoneRules(timing.zone).instantOf(time.wallMs + timeOfDay);
    }
    return this.instantOf(time);
  }

  singleTime(property: IcalProperty): IcalTime {
    const times = this.timesOf(property);
    if (times.length !== 1) refuse(property, 'must have exactly one value');
    return times[0];
  }

  /**
   * The DATE or DATE-TIME values of a property (§3.3.4, §3.3.5), checked strictly except where every lenient reader
   * agrees on the meaning: a date without VALUE=DATE (`DTSTART:20041225`, `EXDATE:20200116`) is that date, and a
   * date-time under VALUE=DATE (`DTSTART;VALUE=DATE:20110804T120000`) is its date.
   */
  timesOf(property: IcalProperty): IcalTime[] {
    const isDate = property.type === 'date';
    if (!isDate && property.type !== 'date-time') {
      refuse(property, `VALUE=${property.type.toUpperCase()} is not a date or date-time`);
    }
    const times: IcalTime[] = [];
    for (const raw of property.raw.split(',')) times.push(this.timeOf(raw.trim(), property, isDate));
    return times;
  }

  /**
   * The periods of an `RDATE;VALUE=PERIOD` (§3.3.9: `start/end` or `start/duration`, start and end date-times): each
   * start, and its end as an instant (a duration is added in the start's zone, days as nominal days).
   */
  periodsOf(property: IcalProperty): Array<{ start: IcalTime; endInstant: number }> {
    const periods: Array<{ start: IcalTime; endInstant: number }> = [];
    for (const raw of property.raw.split(',')) {
      const token = raw.trim();
      const slash = token.indexOf('/');
      if (slash < 0) refuse(property, `"${token}" is not a period (start/end or start/duration)`);
      const start = this.timeOf(token.slice(0, slash), property, false);
      const startInstant = this.instantOf(start);
      const second = token.slice(slash + 1);
      let endInstant: number;
      if (/^[+-]?P/i.test(second)) {
        const parsed = parseDuration(second.toUpperCase());
        if (!parsed.ok) refuse(property, `"${token}": ${parsed.reason}`);
        const rules = zoneRules(
          start.kind === 'zoned' ? start.zone! : start.kind === 'utc' ? 'UTC' : this.floatingZone(start),
        );
        endInstant =
          rules.instantOf(rules.wallOf(startInstant) + parsed.value.days * MS_PER_DAY) + parsed.value.exactMs;
      } else {
        endInstant = this.instantOf(this.timeOf(second, property, false));
      }
      if (endInstant < startInstant) refuse(property, `"${token}": the period ends before it starts`);
      periods.push({ start, endInstant });
    }
    return periods;
  }

  /** One DATE or DATE-TIME token of a property (see `timesOf`). */
  private timeOf(token: string, property: IcalProperty, isDate: boolean): IcalTime {
    const tzid = paramOf(property, 'tzid');
    const scope = this.scopeIndex(property.line);
    const date = dateOf(token, isDate);
    if (date !== undefined) return { kind: 'date', wallMs: date, scope };
    const match = DATE_TIME.exec(token);
    const wall = match === null ? undefined : wallOf(match);
    if (wall === undefined) {
      refuse(
        property,
        isDate
          ? `"${token}" is not a date (YYYYMMDD)`
          : `"${token}" is not a date-time (YYYYMMDDTHHMMSS, Z for UTC)`,
      );
    }
    if (match![7] !== '' && tzid !== undefined) {
      refuse(
        property,
        `"${token}" is a UTC time and cannot carry TZID (RFC 5545 §3.2.19); drop the Z or the TZID`,
      );
    }
    if (match![7] !== '') return { kind: 'utc', wallMs: wall };
    if (tzid !== undefined) return { kind: 'zoned', wallMs: wall, zone: this.zoneOf(tzid, property) };
    return { kind: 'floating', wallMs: wall, scope };
  }

  instantOf(time: IcalTime): number {
    switch (time.kind) {
      case 'utc':
        return time.wallMs;
      case 'zoned':
        return zoneRules(time.zone!).instantOf(time.wallMs);
      case 'date':
      case 'floating':
        return zoneRules(this.floatingZone(time)).instantOf(time.wallMs);
    }
  }

  /**
   * Floating times and dates are read in the X-WR-TIMEZONE (what Google and Apple write) of the VCALENDAR that holds
   * them, else UTC.
   */
  floatingZone(time: IcalTime): string {
    const scope = this.scopes[time.scope ?? 0];
    if (scope.floating !== undefined) return scope.floating;
    const property = scope.calendar.properties.find((candidate) => candidate.name === 'X-WR-TIMEZONE');
    if (property === undefined) return (scope.floating = 'UTC');
    const name = textOf(property);
    const zone = zoneFromName(name);
    if (zone === undefined) refuse(property, `"${name}" is neither an IANA nor a Windows zone id`);
    return (scope.floating = zone);
  }

  zoneOf(tzid: string, property: IcalProperty): string {
    const { tzidZones, vtimezones, tzidSpans } = this.scopeOf(property.line);
    const known = tzidZones.get(tzid);
    if (known !== undefined) return known;
    const vtimezone = vtimezones.get(tzid);
    const span = tzidSpans.get(tzid) ?? { from: 0, to: 0 };
    if (
      vtimezone !== undefined &&
      zoneFromName(tzid) === undefined &&
      ++this.offsetMatches > MAX_OFFSET_MATCHES
    ) {
      refuse(
        property,
        `TZID "${tzid}": more than ${MAX_OFFSET_MATCHES} VTIMEZONEs without a known zone name in one calendar; ` +
          'name the zones with IANA ids (or X-LIC-LOCATION)',
      );
    }
    const resolved = resolveTzid(
      tzid,
      vtimezone === undefined ? undefined : vtimezoneComponent(vtimezone),
      span.from,
      span.to,
    );
    if (resolved === undefined) {
      refuse(
        property,
        vtimezone === undefined
          ? `TZID "${tzid}" is neither an IANA nor a Windows zone id, and the calendar has no VTIMEZONE for it`
          : `TZID "${tzid}": its VTIMEZONE (line ${vtimezone.line}) names no known zone, no IANA zone has ` +
              'its UTC offsets around these events, and its own rules are not two yearly rules a POSIX TZ string ' +
              "can hold (or they change within the events' span)",
      );
    }
    tzidZones.set(tzid, resolved.zone);
    return resolved.zone;
  }
}

/**
 * The date a value names: a DATE (`20041225`, with or without VALUE=DATE: ical.js, node-ical and Google read a bare
 * date as one) or, under VALUE=DATE, a date-time's date (`20110804T120000`, as node-ical reads it). Undefined for
 * date-times of DATE-TIME values and for impossible dates.
 */
function dateOf(token: string, valueIsDate: boolean): number | undefined {
  const date = DATE.exec(token);
  if (date !== null) return wallOf(date);
  const dateTime = valueIsDate ? DATE_TIME.exec(token) : null;
  if (dateTime === null) return undefined;
  const wall = wallOf(dateTime);
  return wall === undefined ? undefined : Math.floor(wall / MS_PER_DAY) * MS_PER_DAY;
}

/** Whether a DTSTART makes its event all-day: written as a date (see `dateOf`). */
export function writtenAsDate(property: IcalProperty): boolean {
  const token = property.raw.trim();
  return dateOf(token, property.type === 'date') !== undefined;
}

/** Wall ms of a DATE or DATE-TIME match, undefined when a field is out of range. */
export function wallOf(match: RegExpExecArray): number | undefined {
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  const hour = match[4] === undefined ? 0 : Number(match[4]);
  const minute = match[5] === undefined ? 0 : Number(match[5]);
  const second = match[6] === undefined ? 0 : Number(match[6]);
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  return daysFromCivil(year, month, day) * MS_PER_DAY + ((hour * 60 + minute) * 60 + second) * 1000;
}

export function formatWall(wallMs: number): string {
  return new Date(wallMs).toISOString().slice(0, 19);
}

/** `2026-01-05T09:00:00+01:00` in the zone (`…Z` in UTC): the instant, readable as the local time it was given as. */
export function formatIn(instant: number, zone: string): string {
  if (zone === 'UTC') return `${formatWall(instant)}Z`;
  const offset = zoneRules(zone).offsetAt(instant);
  // Local mean times of the 19th century have offsets with seconds, which ISO 8601 offsets cannot write.
  if (offset % 60_000 !== 0) return `${formatWall(instant)}Z`;
  const minutes = Math.abs(offset) / 60_000;
  const sign = offset < 0 ? '-' : '+';
  const hh = String(Math.floor(minutes / 60)).padStart(2, '0');
  const mm = String(minutes % 60).padStart(2, '0');
  return `${formatWall(instant + offset)}${sign}${hh}:${mm}`;
}
