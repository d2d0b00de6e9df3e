// ISO 8601 / RFC 3339 date-time text as the API receives it, mapped onto RFC 5545 §3.3.5 DATE-TIME forms:
// with `Z` or an offset it is an instant (form #2, UTC, generalised to any offset); without one it is a local
// wall time to be read in the item's zone (form #3, like `DTSTART;TZID=…`). Parsed by hand because Date.parse
// reads offset-less text in the machine's own time zone.
import {
  MS_PER_DAY,
  MS_PER_HOUR,
  MS_PER_MINUTE,
  MS_PER_SECOND,
  daysFromCivil,
  daysInMonth,
} from './calendar.js';

export type ParsedDateTime =
  | { readonly kind: 'instant'; readonly ms: number }
  | { readonly kind: 'wall'; readonly ms: number }
  | { readonly kind: 'date'; readonly days: number };

const EXTENDED =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?([Zz]|[+-]\d{2}(?::?\d{2})?)?)?$/;
const BASIC =
  /^(\d{4})(\d{2})(\d{2})(?:[Tt](\d{2})(\d{2})(?:(\d{2})(?:[.,](\d{1,9}))?)?([Zz]|[+-]\d{2}(?:\d{2})?)?)?$/;

/** Parses ISO 8601 extended (`2025-03-09T02:30:00+01:00`) or basic (`20250309T023000Z`) text; undefined if invalid. */
export function parseDateTime(text: string): ParsedDateTime | undefined {
  const trimmed = text.trim();
  const m = EXTENDED.exec(trimmed) ?? BASIC.exec(trimmed);
  if (!m) return undefined;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  const days = daysFromCivil(year, month, day);
  if (m[4] === undefined) return { kind: 'date', days };
  const hour = Number(m[4]);
  const minute = Number(m[5]);
  const second = m[6] === undefined ? 0 : Number(m[6]);
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const millis = m[7] === undefined ? 0 : Math.floor(Number(`0.${m[7]}`) * 1000 + 1e-7);
  const wall =
    days * MS_PER_DAY + hour * MS_PER_HOUR + minute * MS_PER_MINUTE + second * MS_PER_SECOND + millis;
  const zone = m[8];
  if (zone === undefined) return { kind: 'wall', ms: wall };
  if (zone === 'Z' || zone === 'z') return { kind: 'instant', ms: wall };
  const sign = zone[0] === '-' ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  const offHours = Number(digits.slice(0, 2));
  const offMinutes = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
  if (offHours > 18 || offMinutes > 59) return undefined;
  return { kind: 'instant', ms: wall - sign * (offHours * MS_PER_HOUR + offMinutes * MS_PER_MINUTE) };
}
