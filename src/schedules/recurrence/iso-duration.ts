// ISO 8601 durations with RFC 5545 §3.3.6 semantics: weeks and days are nominal (added in local wall time, so P1D
// spans 23 or 25 hours across a DST change), hours, minutes and seconds are exact. Years and months are refused
// because RFC 5545 DURATION has none and their length is ambiguous.
import { MS_PER_DAY, MS_PER_HOUR, MS_PER_MINUTE, MS_PER_SECOND } from './calendar.js';
import type { ZoneRules } from './time-zone.js';

export interface IsoDuration {
  /** Signed nominal days (weeks included). */
  readonly days: number;
  /** Signed exact milliseconds. */
  readonly exactMs: number;
}

export const ZERO_DURATION: IsoDuration = { days: 0, exactMs: 0 };

const DURATION =
  /^([+-])?P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)(?:[.,](\d{1,9}))?S)?)?$/i;

export type DurationParse =
  { readonly ok: true; readonly value: IsoDuration } | { readonly ok: false; readonly reason: string };

export function parseDuration(text: string): DurationParse {
  const trimmed = text.trim();
  const m = DURATION.exec(trimmed);
  // "P" alone, or a "T" with nothing after it, matches the pattern but is not a duration.
  if (!m || /^[+-]?P$/i.test(trimmed) || /T$/i.test(trimmed)) {
    return { ok: false, reason: `"${text}" is not an ISO 8601 duration such as PT30M, P1D or -PT15M` };
  }
  if (m[2] !== undefined || m[3] !== undefined) {
    return {
      ok: false,
      reason: `"${text}" uses years or months, which have no fixed length; use weeks, days or hours`,
    };
  }
  const sign = m[1] === '-' ? -1 : 1;
  const weeks = Number(m[4] ?? 0);
  const days = Number(m[5] ?? 0);
  const hours = Number(m[6] ?? 0);
  const minutes = Number(m[7] ?? 0);
  const seconds = Number(m[8] ?? 0);
  const millis = m[9] === undefined ? 0 : Math.floor(Number(`0.${m[9]}`) * 1000 + 1e-7);
  const totalDays = weeks * 7 + days;
  const exact = hours * MS_PER_HOUR + minutes * MS_PER_MINUTE + seconds * MS_PER_SECOND + millis;
  if (!Number.isSafeInteger(totalDays * MS_PER_DAY + exact) || totalDays > 3_660_000) {
    return { ok: false, reason: `"${text}" is too long` };
  }
  // Normalise -0 so that equal durations compare equal.
  return {
    ok: true,
    value: { days: totalDays === 0 ? 0 : sign * totalDays, exactMs: exact === 0 ? 0 : sign * exact },
  };
}

export function isZeroDuration(d: IsoDuration): boolean {
  return d.days === 0 && d.exactMs === 0;
}

/** Adds a duration to an instant: nominal days in the zone's wall time first, then the exact part. */
export function addDuration(zone: ZoneRules, instant: number, d: IsoDuration): number {
  if (d.days === 0) return instant + d.exactMs;
  return zone.instantOf(zone.wallOf(instant) + d.days * MS_PER_DAY) + d.exactMs;
}

/** Bounds of what addDuration can add, in ms, allowing for DST changes within the nominal days. */
export function durationBounds(d: IsoDuration): { readonly min: number; readonly max: number } {
  const nominal = d.days * MS_PER_DAY + d.exactMs;
  // A run of nominal days can gain or lose at most the zone's offset swing; 26 h covers every real zone
  // (Pacific/Apia skipped a whole day in 2011) with room to spare.
  const slack = d.days === 0 ? 0 : 26 * MS_PER_HOUR;
  return { min: nominal - slack, max: nominal + slack };
}
