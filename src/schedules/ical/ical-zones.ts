// RFC 5545 §3.2.19 (TZID) and §3.6.5 (VTIMEZONE) on import: every TZID of an imported calendar is turned into a
// zone id the engine knows — an IANA id wherever one fits, else a POSIX TZ string. In this order:
//   1. the VTIMEZONE's X-LIC-LOCATION (what Google, Thunderbird and libical write beside a TZID);
//   2. the TZID itself when it is an IANA or a Windows id (Outlook: "W. Europe Standard Time"), also inside a
//      vendor prefix or after a bare slash ("/mozilla.org/20050126_1/America/New_York", "/Europe/Stockholm"), or
//      a Windows display name ("(UTC-05:00) Eastern Time (US & Canada)", windows-display-names.ts); a known name
//      is trusted over the rules its VTIMEZONE spells out (old Outlook files carry pre-2007 US rules; tzdata knows
//      the real history);
//   3. otherwise ("Customized Time Zone", "GMT +0100 (Standard) / GMT +0200 (Daylight)") the IANA zone whose UTC
//      offsets agree with the VTIMEZONE's at local noon of every day around the events that use it (ical.js
//      computes the VTIMEZONE's offsets). Zones that are CLDR's primary zone of a Windows id are tried first, so a
//      US Eastern VTIMEZONE becomes America/New_York rather than America/Detroit; a VTIMEZONE without any change
//      in that span becomes the fixed Etc/GMT±h zone when its offset is whole hours.
//   3b. no IANA zone has its offsets: the VTIMEZONE's own rules as a POSIX TZ string (vtimezone-posix.ts:
//      `<-0330>3:30<-0230>,M10.1.0/0,M2.3.0/0`), when they are two yearly rules POSIX can write (or a fixed offset)
//      and do not change within the events' span; the service then stores that string as the zone id;
//   4. a name that is only an offset ("UTC+01", "GMT+05:30", "(UTC+01:00) <unknown places>"): a fixed zone,
//      Etc/GMT∓h for whole hours, else the zone (primary zones first) whose offset is that one, unchanged, over
//      the events' span (UTC+05:30 → Asia/Kolkata): the service stores IANA ids only.
// Nothing matches: undefined, and the importer skips the events that use it, naming the line.
import ICAL from 'ical.js';
import { WINDOWS_TO_IANA_MAP } from 'windows-iana';
import { MS_PER_DAY } from '../recurrence/calendar.js';
import { resolveTimeZone, zoneRules } from '../recurrence/time-zone.js';
import { drain } from './ical-content.js';
import { icalNoonOffsets, vtimezoneToPosix } from './vtimezone-posix.js';
import { WINDOWS_DISPLAY_NAMES } from './windows-display-names.js';

/** How far the offsets are compared at most: enough to see both DST changes of a few years' rules. */
const MAX_MATCH_SPAN_MS = 4 * 366 * MS_PER_DAY;
/** At least one year, so a VTIMEZONE's DST rule is seen even for a single event. */
const MIN_MATCH_SPAN_MS = 366 * MS_PER_DAY;
const NOON_MS = 12 * 3_600_000;

export type ZoneSource = 'x-lic-location' | 'name' | 'offsets' | 'vtimezone-rules' | 'fixed-offset';

export interface ResolvedZone {
  readonly zone: string;
  readonly source: ZoneSource;
}

/** An IANA id for a TZID, X-WR-TIMEZONE or X-LIC-LOCATION text, by name alone; undefined if it names none. */
export function zoneFromName(name: string): string | undefined {
  const text = name
    .trim()
    .replace(/^"(.*)"$/, '$1')
    .trim();
  if (text === '') return undefined;
  const direct = resolveTimeZone(text);
  if (direct !== undefined) return direct;
  // Vendor-prefixed ids ("/mozilla.org/20050126_1/Europe/Stockholm", "/Europe/Stockholm"): the IANA name is the
  // last one to three path segments.
  const parts = text.split('/').filter((part) => part !== '');
  for (let take = Math.min(3, parts.length); take >= 2; take--) {
    const candidate = resolveTimeZone(parts.slice(-take).join('/'));
    if (candidate !== undefined) return candidate;
  }
  if (parts.length === 1 && parts[0] !== text) {
    const single = resolveTimeZone(parts[0]);
    if (single !== undefined) return single;
  }
  return zoneFromDisplayName(text);
}

/** `(UTC+01:00) `, `(GMT-05:00) `, `(UTC) `: the prefix of a Windows display name. */
const DISPLAY_PREFIX = /^\((?:UTC|GMT)(?:\s*[+-]\s*\d{1,2}(?::?\d{2})?)?\)\s*/i;

let displayNames: { whole: Map<string, string>; cities: Map<string, string> } | undefined;

function displayNameTables(): { whole: Map<string, string>; cities: Map<string, string> } {
  if (displayNames === undefined) {
    const whole = new Map<string, string>();
    const cities = new Map<string, string>();
    for (const [display, zone] of Object.entries(WINDOWS_DISPLAY_NAMES)) {
      whole.set(normalise(display), zone);
      for (const city of display.split(',')) {
        const key = normalise(city);
        if (key !== '' && !cities.has(key)) cities.set(key, zone);
      }
    }
    displayNames = { whole, cities };
  }
  return displayNames;
}

function normalise(text: string): string {
  return text.trim().replace(/\s+/g, ' ').toLowerCase();
}

/**
 * A Windows display name, with or without its offset prefix. Outlook versions spell the lists differently
 * ("Athens, Bucharest, Istanbul" before 2016, "Amsterdam, Belgrade, Berlin, …" in some localised builds), so a name
 * not found whole is matched by its first place that the table knows (all places of one display name share one
 * zone's rules).
 */
export function zoneFromDisplayName(name: string): string | undefined {
  const text = name.replace(DISPLAY_PREFIX, '').replace(/[\s.…]*(?:\.\.\.|…)\s*$/, '');
  if (text.trim() === '') return undefined;
  const { whole, cities } = displayNameTables();
  const zone = whole.get(normalise(text)) ?? firstKnownCity(text, cities);
  return zone === undefined ? undefined : resolveTimeZone(zone);
}

function firstKnownCity(text: string, cities: Map<string, string>): string | undefined {
  if (!text.includes(',')) return undefined;
  for (const city of text.split(',')) {
    const zone = cities.get(normalise(city));
    if (zone !== undefined) return zone;
  }
  return undefined;
}

/**
 * The UTC offset (ms) a name spells alone: `UTC+01`, `UTC-0530`, `GMT+05:30`, `UTC+1`, or a display name's prefix
 * `(UTC+01:00) …`; undefined for anything else.
 */
export function offsetFromName(name: string): number | undefined {
  const text = name
    .trim()
    .replace(/^"(.*)"$/, '$1')
    .trim();
  const match =
    /^(?:UTC|GMT)\s*([+-])\s*(\d{1,2})(?::?(\d{2}))?$/i.exec(text) ??
    /^\((?:UTC|GMT)\s*([+-])\s*(\d{1,2})(?::?(\d{2}))?\)/i.exec(text);
  if (match === null) return undefined;
  const hours = Number(match[2]);
  const minutes = match[3] === undefined ? 0 : Number(match[3]);
  if (hours > 14 || minutes > 59) return undefined;
  return (match[1] === '-' ? -1 : 1) * (hours * 60 + minutes) * 60_000;
}

/**
 * A zone with this fixed offset around `[fromWallMs, toWallMs]`: Etc/GMT∓h for whole hours (POSIX signs), else the
 * zone whose offset is this one on every day of the span (e.g. Asia/Kolkata for +05:30).
 */
export function zoneForFixedOffset(
  offsetMs: number,
  fromWallMs: number,
  toWallMs: number,
): string | undefined {
  const fixed = fixedZone(offsetMs);
  if (fixed !== undefined) return fixed;
  const { walls } = spanDays(fromWallMs, toWallMs);
  return drain(
    matchWalls(
      walls,
      walls.map(() => offsetMs),
    ),
  );
}

function spanDays(
  fromWallMs: number,
  toWallMs: number,
): { firstDay: number; lastDay: number; walls: number[] } {
  const firstDay = Math.floor(fromWallMs / MS_PER_DAY);
  const lastDay = Math.floor(
    Math.min(Math.max(toWallMs, fromWallMs + MIN_MATCH_SPAN_MS), fromWallMs + MAX_MATCH_SPAN_MS) / MS_PER_DAY,
  );
  const walls: number[] = [];
  for (let day = firstDay; day <= lastDay; day++) walls.push(day * MS_PER_DAY + NOON_MS);
  return { firstDay, lastDay, walls };
}

/**
 * The IANA zone for a TZID defined by `vtimezone` (may be undefined when the calendar has no VTIMEZONE for it),
 * compared over the local wall times `[fromWallMs, toWallMs]` of the events that use it.
 */
export function resolveTzid(
  tzid: string,
  vtimezone: ICAL.Component | undefined,
  fromWallMs: number,
  toWallMs: number,
): ResolvedZone | undefined {
  const location = vtimezone?.getFirstPropertyValue('x-lic-location');
  if (typeof location === 'string') {
    const zone = zoneFromName(location);
    if (zone !== undefined) return { zone, source: 'x-lic-location' };
  }
  const named = zoneFromName(tzid);
  if (named !== undefined) return { zone: named, source: 'name' };
  if (vtimezone !== undefined) {
    const zone = zoneFromOffsets(vtimezone, fromWallMs, toWallMs);
    if (zone !== undefined) return { zone, source: 'offsets' };
    // No IANA zone has these offsets: the VTIMEZONE's own rules, as a POSIX TZ string (vtimezone-posix.ts). They
    // come before an offset spelled in the name: the VTIMEZONE defines its TZID (RFC 5545 §3.6.5), a name is a guess.
    const { firstDay, lastDay } = spanDays(fromWallMs, toWallMs);
    const posix = vtimezoneToPosix(vtimezone, firstDay, lastDay);
    if (posix !== undefined) return { zone: posix, source: 'vtimezone-rules' };
  }
  // Nothing better is named: an offset spelled in the name (Exchange's `UTC+01`) is a fixed zone.
  const offset = offsetFromName(tzid);
  if (offset === undefined) return undefined;
  const fixed = zoneForFixedOffset(offset, fromWallMs, toWallMs);
  return fixed === undefined ? undefined : { zone: fixed, source: 'fixed-offset' };
}

/** Results by VTIMEZONE text and span: the same Outlook zone arrives in every file a team exports. */
const offsetMatches = new Map<string, string | undefined>();
const MAX_CACHED = 1_000;

export function zoneFromOffsets(
  vtimezone: ICAL.Component,
  fromWallMs: number,
  toWallMs: number,
): string | undefined {
  return drain(zoneFromOffsetsSteps(vtimezone, fromWallMs, toWallMs));
}

/**
 * zoneFromOffsets as steps: the first match of a VTIMEZONE over a span reads up to 1,461 days through ical.js and
 * compares ~420 zones (~30 ms), so the import runs it ahead (it pauses every DAYS_PER_STEP days and
 * ZONES_PER_STEP zones); later calls for the same VTIMEZONE and span are answered from the cache.
 */
export function* zoneFromOffsetsSteps(
  vtimezone: ICAL.Component,
  fromWallMs: number,
  toWallMs: number,
): Generator<void, string | undefined> {
  const { firstDay, lastDay } = spanDays(fromWallMs, toWallMs);
  const key = `${firstDay}:${lastDay}:${vtimezone.toString()}`;
  if (offsetMatches.has(key)) return offsetMatches.get(key);
  const result = yield* matchOffsets(vtimezone, firstDay, lastDay);
  if (offsetMatches.size >= MAX_CACHED) offsetMatches.clear();
  offsetMatches.set(key, result);
  return result;
}

const ZONES_PER_STEP = 32;

function* matchOffsets(
  vtimezone: ICAL.Component,
  firstDay: number,
  lastDay: number,
): Generator<void, string | undefined> {
  // Up to 1,461 days read through ical.js (~10 ms), then a pause before the zones are compared.
  const noon = icalNoonOffsets(vtimezone, firstDay, lastDay);
  yield;
  if (noon === undefined || noon.walls.length === 0) return undefined;
  const { walls, offsets } = noon;
  if (offsets.every((offset) => offset === offsets[0])) {
    const fixed = fixedZone(offsets[0]);
    if (fixed !== undefined) return fixed;
  }
  return yield* matchWalls(walls, offsets);
}

/** The first zone (primary zones first) whose UTC offset at each local wall time is the given one. */
function* matchWalls(
  walls: readonly number[],
  offsets: readonly number[],
): Generator<void, string | undefined> {
  if (walls.length === 0) return undefined;
  // Four samples of the first year first: they rule out almost every zone before the full comparison, and touch
  // one year of each zone's offset table only (building a year for all ~420 zones costs ~300 ms once per process).
  const probes = [0, 91, 182, 273].map((day) => Math.min(day, walls.length - 1));
  // Outlook writes its custom VTIMEZONEs from Windows zone definitions, so the ~140 primary zones usually decide
  // it; the other ~280 zones (each costs an Intl formatter the first time) are tried only when none matches.
  const { primary, others } = candidateZones();
  let tried = 0;
  for (const candidate of [...primary, ...others]) {
    if (++tried % ZONES_PER_STEP === 0) yield;
    const rules = zoneRules(candidate);
    const agrees = (index: number): boolean =>
      rules.offsetAt(walls[index] - offsets[index]) === offsets[index];
    if (!probes.every(agrees)) continue;
    let all = true;
    for (let index = 0; index < walls.length && all; index++) all = agrees(index);
    if (all) return candidate;
  }
  return undefined;
}

/** Etc/GMT±h for a whole-hour offset (POSIX-style names: Etc/GMT-1 is UTC+1). */
function fixedZone(offsetMs: number): string | undefined {
  if (offsetMs === 0) return 'UTC';
  const hours = offsetMs / 3_600_000;
  if (!Number.isInteger(hours) || hours < -12 || hours > 14) return undefined;
  return resolveTimeZone(`Etc/GMT${hours > 0 ? '-' : '+'}${Math.abs(hours)}`);
}

let candidates: { primary: string[]; others: string[] } | undefined;

/** Every zone ICU knows: CLDR's primary zones of Windows ids (the usual choice among equal zones), then the rest. */
function candidateZones(): { primary: string[]; others: string[] } {
  if (candidates === undefined) {
    const primary = new Set<string>();
    for (const entry of WINDOWS_TO_IANA_MAP) {
      if (entry.territory !== '001') continue;
      // Through the Windows id: its primary zone under the current IANA name (Asia/Kolkata, not Asia/Calcutta).
      const zone = resolveTimeZone(entry.windowsName) ?? resolveTimeZone(entry.iana[0]);
      if (zone !== undefined && !zone.startsWith('Etc/')) primary.add(zone);
    }
    const others = Intl.supportedValuesOf('timeZone').filter((zone) => !primary.has(zone));
    candidates = { primary: [...primary], others };
  }
  return candidates;
}
