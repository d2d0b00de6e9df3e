// Time-zone offsets for expansion in local wall time (RFC 5545 §3.3.5 "date with local time and time zone
// reference", §3.8.5.3): a wall time inside a DST gap is shifted forward by the gap, an ambiguous wall time takes
// its first instant. Offsets come from ICU tzdata through Intl.DateTimeFormat, but Intl is only used to build a
// lazily filled per-zone table of transitions (probed per UTC year, bisected to the second), so the expansion hot
// path never calls Intl and never depends on the machine's own time zone.
import { IANA_ALIAS_MAP, WINDOWS_TO_IANA_MAP } from 'windows-iana';
import { MS_PER_DAY, MS_PER_SECOND, daysFromCivil } from './calendar.js';
import { type PosixTz, parsePosixTz, posixTransitions } from './posix-tz.js';

/** Years a zone table can describe; RFC 5545 DATE values have four-digit years. */
export const MIN_YEAR = 1;
export const MAX_YEAR = 9999;

let knownIanaNames: Map<string, string> | undefined;
let windowsNames: Map<string, string> | undefined;

function ianaNameTable(): Map<string, string> {
  if (!knownIanaNames) {
    knownIanaNames = new Map();
    const add = (name: string): void => {
      knownIanaNames?.set(name.toLowerCase(), name);
    };
    for (const name of Intl.supportedValuesOf('timeZone')) add(name);
    for (const entry of IANA_ALIAS_MAP) for (const name of entry.alias) add(name);
    for (const entry of WINDOWS_TO_IANA_MAP) for (const name of entry.iana) add(name);
    add('UTC');
  }
  return knownIanaNames;
}

/**
 * CLDR keeps the old spelling of zones IANA renamed (tzdata's `backward` file); a calendar client expects the
 * current name (`India Standard Time` → `Asia/Kolkata`, not `Asia/Calcutta`). The renames among CLDR's primary
 * zones of Windows ids.
 */
const IANA_RENAMED: Readonly<Record<string, string>> = {
  'Asia/Calcutta': 'Asia/Kolkata',
  'Asia/Katmandu': 'Asia/Kathmandu',
  'Asia/Rangoon': 'Asia/Yangon',
  'Europe/Kiev': 'Europe/Kyiv',
  'America/Buenos_Aires': 'America/Argentina/Buenos_Aires',
  'America/Indianapolis': 'America/Indiana/Indianapolis',
  'America/Godthab': 'America/Nuuk',
};

function windowsNameTable(): Map<string, string> {
  if (!windowsNames) {
    windowsNames = new Map();
    // Territory "001" is CLDR's primary zone for a Windows id, the one Windows itself treats as the reference.
    for (const entry of WINDOWS_TO_IANA_MAP) {
      if (entry.territory === '001' && entry.iana.length > 0) {
        const primary = entry.iana[0];
        const renamed = IANA_RENAMED[primary];
        windowsNames.set(
          entry.windowsName.toLowerCase(),
          renamed !== undefined && intlAccepts(renamed) !== undefined ? renamed : primary,
        );
      }
    }
  }
  return windowsNames;
}

/**
 * What a zone id means is the service's decision, not the runtime's: ICU grows with Node. Two differences are
 * pinned here so that every runtime answers alike:
 * - Offset ids (`+05:00`, `-0330`, `+05`): ECMA-402 lets Node 24's Intl accept them, Node 20's refuses them. They
 *   are refused everywhere: `StartTimeZone` names a zone with rules (IANA, Windows, or a POSIX TZ string, which can
 *   spell a fixed offset as `<+05>-5`), a fixed offset has the IANA name `Etc/GMT-5`, and refusing keeps what
 *   clients were answered before (a stored `+05:00` would be unreadable on an older runtime).
 * - tzdata 2024b made the four POSIX-style US zones links; Node 20's ICU reports their targets, Node 24's keeps
 *   the link's own name. The targets are used everywhere (same offsets, the name a calendar client expects).
 */
const OFFSET_ZONE = /^[+\-\u2212]\d/;
const LEGACY_LINK_TARGETS: Readonly<Record<string, string>> = {
  EST5EDT: 'America/New_York',
  CST6CDT: 'America/Chicago',
  MST7MDT: 'America/Denver',
  PST8PDT: 'America/Los_Angeles',
};

function intlAccepts(id: string): string | undefined {
  if (OFFSET_ZONE.test(id.trim())) return undefined;
  try {
    const canonical = new Intl.DateTimeFormat('en-US', { timeZone: id }).resolvedOptions().timeZone;
    return LEGACY_LINK_TARGETS[canonical] ?? canonical;
  } catch {
    return undefined;
  }
}

/**
 * Maps an IANA id (any letter case) or a Windows zone id (`W. Europe Standard Time`, as .NET sends it) to an IANA
 * id that ICU knows. Known IANA names keep their own spelling (`asia/kolkata` → `Asia/Kolkata`); Windows ids map
 * to CLDR's primary zone for territory 001. Anything else that is a POSIX TZ string (posix-tz.ts:
 * `<-0330>3:30<-0230>,M10.1.0/0,M2.3.0/0`, the form an imported VTIMEZONE without IANA zone is stored in) is its
 * own id, trimmed. Returns undefined for anything else.
 */
export function resolveTimeZone(id: string): string | undefined {
  if (resolved.has(id)) return resolved.get(id);
  const result = resolveUncached(id);
  // Ids come from stored schedules, so the set is small; the cap only guards against a flood of junk ids.
  if (resolved.size < 10_000) resolved.set(id, result);
  return result;
}

const resolved = new Map<string, string | undefined>();

function resolveUncached(id: string): string | undefined {
  const trimmed = id.trim();
  if (trimmed === '') return undefined;
  const lower = trimmed.toLowerCase();
  const known = ianaNameTable().get(lower);
  if (known !== undefined && intlAccepts(known) !== undefined) return known;
  const fromWindows = windowsNameTable().get(lower);
  if (fromWindows !== undefined && intlAccepts(fromWindows) !== undefined) return fromWindows;
  // Names ICU knows but the tables above do not (new zones, legacy links such as "EST5EDT").
  if (intlAccepts(trimmed) !== undefined) return trimmed;
  return parsePosixTz(trimmed) === undefined ? undefined : trimmed;
}

/** Transitions of one UTC year: offsets[0] is in effect at the start of the year, offsets[i + 1] from trans[i]. */
interface YearTable {
  readonly start: number;
  readonly end: number;
  readonly trans: readonly number[];
  readonly offsets: readonly number[];
}

function yearStartMs(year: number): number {
  return daysFromCivil(year, 1, 1) * MS_PER_DAY;
}

const WALL_FORMAT = /^(\d+)\/(\d+)\/(\d+) (AD|BC), (\d+):(\d+):(\d+)$/;
const MIN_MS = yearStartMs(MIN_YEAR) - MS_PER_DAY;
const MAX_MS = yearStartMs(MAX_YEAR + 1) + MS_PER_DAY;

/** UTC offsets of one zone, answered from a lazily built transition table. */
export class ZoneRules {
  private readonly years = new Map<number, YearTable>();
  private formatter: Intl.DateTimeFormat | undefined;
  // One-entry cache of the last segment looked up: consecutive queries of an expansion hit the same segment.
  private segStart = 0;
  private segEnd = 0;
  private segOffset = 0;
  // Queries of one workload mostly stay within a year, so the year's table is cached as well.
  private lastTable: YearTable | undefined;

  constructor(
    readonly id: string,
    private readonly fixedOffset: number | undefined,
  ) {}

  /** Offset (ms, local minus UTC) in effect at the instant `utcMs`. */
  offsetAt(utcMs: number): number {
    if (this.fixedOffset !== undefined) return this.fixedOffset;
    if (utcMs >= this.segStart && utcMs < this.segEnd) return this.segOffset;
    return this.lookUp(utcMs);
  }

  /** Local wall time (ms since 1970-01-01T00:00 wall) of an instant. */
  wallOf(utcMs: number): number {
    return utcMs + this.offsetAt(utcMs);
  }

  /**
   * Instant of a wall time: a wall time in a gap is shifted forward by the gap (read with the offset before it),
   * an ambiguous one takes the earlier instant (RFC 5545 §3.3.5).
   */
  instantOf(wallMs: number): number {
    return this.resolveWall(wallMs, false);
  }

  /**
   * The earliest instant whose wall time is at or after `wallMs`: like instantOf, except that a wall time in a
   * gap answers the transition instant. Expansion uses it as a lower bound for everything it will still emit.
   */
  earliestInstantFrom(wallMs: number): number {
    return this.resolveWall(wallMs, true);
  }

  /** The smallest offset in effect within a day of `utcMs` (used to find the first wall time worth expanding). */
  minOffsetNear(utcMs: number): number {
    if (this.fixedOffset !== undefined) return this.fixedOffset;
    if (utcMs - MS_PER_DAY >= this.segStart && utcMs + MS_PER_DAY < this.segEnd) return this.segOffset;
    return Math.min(
      this.offsetAt(utcMs - MS_PER_DAY),
      this.offsetAt(utcMs),
      this.offsetAt(utcMs + MS_PER_DAY),
    );
  }

  /** The largest offset in effect within a day of `utcMs`. */
  maxOffsetNear(utcMs: number): number {
    if (this.fixedOffset !== undefined) return this.fixedOffset;
    if (utcMs - MS_PER_DAY >= this.segStart && utcMs + MS_PER_DAY < this.segEnd) return this.segOffset;
    return Math.max(
      this.offsetAt(utcMs - MS_PER_DAY),
      this.offsetAt(utcMs),
      this.offsetAt(utcMs + MS_PER_DAY),
    );
  }

  private resolveWall(wallMs: number, gapToTransition: boolean): number {
    if (this.fixedOffset !== undefined) return wallMs - this.fixedOffset;
    // Fast path: the cached segment covers a day either side, so no transition can be involved.
    if (wallMs - MS_PER_DAY >= this.segStart && wallMs + MS_PER_DAY < this.segEnd)
      return wallMs - this.segOffset;
    // Offsets a day before and after bracket every candidate; equal means no transition nearby (the usual case).
    const before = this.offsetAt(wallMs - MS_PER_DAY);
    const after = this.offsetAt(wallMs + MS_PER_DAY);
    if (before === after) return wallMs - before;
    const first = wallMs - before;
    const second = wallMs - after;
    const firstValid = this.offsetAt(first) === before;
    const secondValid = this.offsetAt(second) === after;
    if (firstValid && secondValid) return Math.min(first, second);
    if (firstValid) return first;
    if (secondValid) return second;
    // In the gap: `second` lies before the transition and `first` after it.
    return gapToTransition ? this.nextTransitionAfter(second) : first;
  }

  private nextTransitionAfter(utcMs: number): number {
    for (let year = this.yearOf(utcMs); year <= MAX_YEAR; year++) {
      const table = this.table(year);
      for (const t of table.trans) if (t > utcMs) return t;
    }
    return MAX_MS;
  }

  private lookUp(utcMs: number): number {
    // NaN would never leave the year search; every caller passes parsed, finite-or-infinite instants.
    if (Number.isNaN(utcMs)) throw new RangeError('offsetAt(NaN)');
    const clamped = Math.min(Math.max(utcMs, MIN_MS + MS_PER_DAY), MAX_MS - MS_PER_DAY);
    let table = this.lastTable;
    if (!table || clamped < table.start || clamped >= table.end) {
      table = this.table(this.yearOf(clamped));
      this.lastTable = table;
    }
    let i = 0;
    while (i < table.trans.length && table.trans[i] <= clamped) i++;
    this.segStart = i === 0 ? table.start : table.trans[i - 1];
    this.segEnd = i < table.trans.length ? table.trans[i] : table.end;
    this.segOffset = table.offsets[i];
    if (clamped !== utcMs) {
      // Out of the table's range: answer the edge offset without caching a segment that does not contain utcMs.
      this.segEnd = this.segStart;
    }
    return table.offsets[i];
  }

  private yearOf(utcMs: number): number {
    let year = Math.floor(utcMs / 31_556_952_000) + 1970;
    while (yearStartMs(year) > utcMs) year--;
    while (yearStartMs(year + 1) <= utcMs) year++;
    return Math.min(Math.max(year, MIN_YEAR - 1), MAX_YEAR + 1);
  }

  private table(year: number): YearTable {
    const cached = this.years.get(year);
    if (cached) return cached;
    const built = this.buildYear(year);
    this.years.set(year, built);
    return built;
  }

  /** The year's transitions; ICU's by default, a subclass may compute them. */
  protected buildYear(year: number): YearTable {
    const start = yearStartMs(year);
    const end = yearStartMs(year + 1);
    const trans: number[] = [];
    const offsets: number[] = [this.probe(start)];
    // Daily probes find every transition that is at least a day away from the next one (all of tzdata's
    // modern rules); bisection then pins it to the second.
    let previousAt = start;
    let previous = offsets[0];
    for (let at = start + MS_PER_DAY; ; at += MS_PER_DAY) {
      const probeAt = Math.min(at, end - MS_PER_SECOND);
      const offset = this.probe(probeAt);
      if (offset !== previous) {
        let lo = previousAt;
        let hi = probeAt;
        while (hi - lo > MS_PER_SECOND) {
          const mid = lo + Math.floor((hi - lo) / 2 / MS_PER_SECOND) * MS_PER_SECOND;
          if (this.probe(mid) === previous) lo = mid;
          else hi = mid;
        }
        trans.push(hi);
        offsets.push(offset);
        previous = offset;
      }
      previousAt = probeAt;
      if (probeAt >= end - MS_PER_SECOND) break;
    }
    return { start, end, trans, offsets };
  }

  /** Offset at an instant straight from ICU (slow; only used to fill the table). */
  private probe(utcMs: number): number {
    this.formatter ??= new Intl.DateTimeFormat('en-US', {
      timeZone: this.id,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    const at = Math.floor(utcMs / MS_PER_SECOND) * MS_PER_SECOND;
    const match = WALL_FORMAT.exec(this.formatter.format(at));
    if (!match) throw new Error(`Unexpected ICU output for time zone ${this.id}`);
    const yearOfEra = Number(match[3]);
    const year = match[4] === 'BC' ? 1 - yearOfEra : yearOfEra;
    const wall =
      daysFromCivil(year, Number(match[1]), Number(match[2])) * MS_PER_DAY +
      ((Number(match[5]) * 60 + Number(match[6])) * 60 + Number(match[7])) * MS_PER_SECOND;
    return wall - at;
  }
}

/**
 * A zone given by a POSIX TZ string: the year tables are computed from its rule instead of probed from ICU, so
 * lookups take the same (cached) path as for IANA zones. A string without DST is a fixed offset.
 */
class PosixZoneRules extends ZoneRules {
  constructor(
    id: string,
    private readonly tz: PosixTz,
  ) {
    super(id, tz.dst === undefined || tz.dst.offset === tz.stdOffset ? tz.stdOffset : undefined);
  }

  protected override buildYear(year: number): YearTable {
    const start = yearStartMs(year);
    const end = yearStartMs(year + 1);
    // Local years either side too: a change near New Year (or a rule time of up to ±167 h) crosses the UTC year.
    const { before, transitions } = posixTransitions(this.tz, year - 2, year + 2);
    let initial = before;
    const trans: number[] = [];
    const offsets: number[] = [];
    for (const t of transitions) {
      if (t.at <= start) initial = t.to;
      else if (t.at < end) {
        trans.push(t.at);
        offsets.push(t.to);
      }
    }
    return { start, end, trans, offsets: [initial, ...offsets] };
  }
}

const zones = new Map<string, ZoneRules>();
const MAX_POSIX_ZONES = 10_000;
let posixZones = 0;

/** Shared, lazily filled offset table of a zone id already accepted by resolveTimeZone. */
export function zoneRules(ianaId: string): ZoneRules {
  let zone = zones.get(ianaId);
  if (!zone) {
    const canonical = intlAccepts(ianaId);
    if (canonical === undefined) {
      const tz = parsePosixTz(ianaId.trim());
      if (tz === undefined) throw new RangeError(`Unknown time zone ${ianaId}`);
      zone = new PosixZoneRules(ianaId.trim(), tz);
      // Any client may name new POSIX zones; past the cap they are built per use instead of kept.
      if (posixZones++ < MAX_POSIX_ZONES) zones.set(ianaId, zone);
      return zone;
    }
    zone = zones.get(canonical);
    if (!zone) {
      zone = new ZoneRules(canonical, canonical === 'UTC' ? 0 : undefined);
      zones.set(canonical, zone);
    }
    zones.set(ianaId, zone);
  }
  return zone;
}
