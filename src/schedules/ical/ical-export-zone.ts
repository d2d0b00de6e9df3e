// Values of the iCalendar export: the item's text fields read as the engine reads them, durations, and how one
// item's instants are written (ItemZone: TZID, UTC or all-day DATEs).
import { MS_PER_SECOND } from '../recurrence/calendar.js';
import { momentOf } from '../recurrence/series-compiler.js';
import { parseDateTime } from '../recurrence/iso-date-time.js';
import { type IsoDuration, parseDuration } from '../recurrence/iso-duration.js';
import { type ZoneRules } from '../recurrence/time-zone.js';
import { basicDate, isDayStart, localDay } from '../recurrence/all-day.js';
import { formatWall, tzidParameter } from './vtimezone.js';

export function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

export function momentOfText(value: unknown, zone: ZoneRules): number | undefined {
  const t = text(value);
  const parsed = t === undefined ? undefined : parseDateTime(t);
  return parsed === undefined ? undefined : momentOf(parsed, zone);
}

export function durationOf(value: unknown): IsoDuration | undefined {
  const t = text(value);
  if (t === undefined) return undefined;
  const parsed = parseDuration(t);
  return parsed.ok ? parsed.value : undefined;
}

export const floorSecond = (ms: number): number => Math.floor(ms / MS_PER_SECOND) * MS_PER_SECOND;

/** `P1DT2H30M` (§3.3.6) for a non-negative duration. */
export function formatDuration(d: IsoDuration): string {
  const seconds = Math.floor(d.exactMs / MS_PER_SECOND);
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  const time = `${h ? `${h}H` : ''}${m ? `${m}M` : ''}${s ? `${s}S` : ''}`;
  if (d.days === 0) return `PT${time || '0S'}`;
  return `P${d.days}D${time ? `T${time}` : ''}`;
}

/**
 * How the instants of one item are written: in its zone (TZID) or, for items without a zone, in UTC. For an all-day
 * item, day starts are written as DATEs (`;VALUE=DATE:20260105`, §3.3.4), other instants (an exception moved to a
 * time of day) as date-times; `wroteTimed` then says the zone's VTIMEZONE is needed.
 */
export class ItemZone {
  wroteTimed = false;

  constructor(
    readonly tzid: string | undefined,
    readonly rules: ZoneRules,
    readonly allDay = false,
  ) {}

  /**
   * The writer of one occurrence's DTSTART and DTEND, which must have one value type (§3.6.1): this one for a timed
   * item or whole days; for an all-day item's occurrence moved to a time of day, a date-time writer (whose zone
   * this one's VTIMEZONE then has to describe).
   */
  span(start: number, end: number): ItemZone {
    if (!this.allDay) return this;
    if (end > start && isDayStart(this.rules, start) && isDayStart(this.rules, end)) return this;
    this.wroteTimed = true;
    return new ItemZone(this.tzid, this.rules);
  }

  /** `;TZID=Europe/Berlin:20260105T090000` or `:20260105T080000Z`; `name` prefixes it. */
  property(name: string, instant: number): string {
    const [params, value] = this.value(instant);
    return `${name}${params}:${value}`;
  }

  /** [parameters, value] of one DATE-TIME. An instant whose wall time does not name it alone is written in UTC. */
  value(instant: number): [string, string] {
    const at = floorSecond(instant);
    if (this.allDay && isDayStart(this.rules, at))
      return [';VALUE=DATE', basicDate(localDay(this.rules, at))];
    if (this.allDay) this.wroteTimed = true;
    if (this.tzid === undefined) return ['', `${formatWall(at)}Z`];
    const wall = this.rules.wallOf(at);
    if (this.rules.instantOf(wall) !== at) return ['', `${formatWall(at)}Z`];
    return [tzidParameter(this.tzid), formatWall(wall)];
  }

  /** A wall time as DTSTART (kept as given, even inside a DST gap: the rule repeats that clock reading). */
  wallProperty(name: string, wall: number): string {
    if (this.tzid === undefined) return `${name}:${formatWall(wall)}Z`;
    return `${name}${tzidParameter(this.tzid)}:${formatWall(wall)}`;
  }

  /** RDATE/EXDATE: one property per form (TZID or UTC), values comma-separated. */
  listProperties(name: string, instants: readonly number[]): string[] {
    const byParams = new Map<string, string[]>();
    for (const instant of [...new Set(instants.map(floorSecond))].sort((a, b) => a - b)) {
      const [params, value] = this.value(instant);
      const list = byParams.get(params) ?? [];
      list.push(value);
      byParams.set(params, list);
    }
    return [...byParams].map(([params, values]) => `${name}${params}:${values.join(',')}`);
  }
}

/** The instants a zone's VTIMEZONE must cover. */
export interface ZoneUse {
  readonly rules: ZoneRules;
  from: number;
  to: number;
}
