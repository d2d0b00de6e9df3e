// A faster reader for PostgreSQL's `timestamptz` text output, for the pg driver's type parsers. pg's own
// (postgres-date) runs three regular expressions per value; a page of 100 SCIM users carries 200 timestamps, and
// that was ~0.15 ms of every page. The common shape (ISO DateStyle, four-digit year, offset ±HH[:MM[:SS]]) is read
// by position; anything else (BC, infinity, other years, other DateStyles) goes to pg's parser, so both always
// agree (src/database/pg-timestamptz.spec.ts compares them over generated values).
import pg from 'pg';

const TIMESTAMPTZ_OID = 1184;
const fallback = pg.types.getTypeParser(TIMESTAMPTZ_OID, 'text') as (text: string) => Date | number | null;

function digits(text: string, from: number, to: number): number {
  let value = 0;
  for (let i = from; i < to; i++) {
    const code = text.charCodeAt(i) - 48;
    if (code < 0 || code > 9) return Number.NaN;
    value = value * 10 + code;
  }
  return value;
}

/** `YYYY-MM-DD HH:MM:SS[.f…]±HH[:MM[:SS]]` → Date (pg's result for anything else). */
export function parseTimestamptz(text: string): Date | number | null {
  return readTimestamptz(text) ?? fallback(text);
}

/** The common shape read by position; undefined for anything else. */
export function readTimestamptz(text: string): Date | undefined {
  if (
    text.length < 22 ||
    text.charCodeAt(4) !== 45 || // -
    text.charCodeAt(7) !== 45 ||
    text.charCodeAt(10) !== 32 || // space
    text.charCodeAt(13) !== 58 || // :
    text.charCodeAt(16) !== 58 ||
    text.endsWith(' BC')
  ) {
    return undefined;
  }
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 7);
  const day = digits(text, 8, 10);
  const hour = digits(text, 11, 13);
  const minute = digits(text, 14, 16);
  const second = digits(text, 17, 19);
  let at = 19;
  let milliseconds = 0;
  if (text.charCodeAt(at) === 46) {
    // .f… : pg takes 1000 × the fraction and Date.UTC truncates it to whole milliseconds.
    let end = at + 1;
    while (end < text.length && text.charCodeAt(end) >= 48 && text.charCodeAt(end) <= 57) end++;
    if (end === at + 1) return undefined;
    milliseconds = 1000 * Number(text.slice(at, end));
    at = end;
  }
  const sign = text.charCodeAt(at);
  if (sign !== 43 && sign !== 45) return undefined; // + or -
  const rest = text.length - at - 1;
  if (rest !== 2 && rest !== 5 && rest !== 8) return undefined;
  /** The two digits after a ':' at `colon`. */
  const afterColon = (colon: number): number =>
    text.charCodeAt(colon) === 58 ? digits(text, colon + 1, colon + 3) : Number.NaN;
  const offsetHours = digits(text, at + 1, at + 3);
  const offsetMinutes = rest >= 5 ? afterColon(at + 3) : 0;
  const offsetSeconds = rest === 8 ? afterColon(at + 6) : 0;
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, milliseconds);
  const offset = (offsetHours * 3600 + offsetMinutes * 60 + offsetSeconds) * 1000;
  // Years below 1000 (Date.UTC reads 0–99 as 19xx) and anything unreadable: pg's parser.
  if (year < 1000 || Number.isNaN(utc) || Number.isNaN(offset)) return undefined;
  return new Date(sign === 43 ? utc - offset : utc + offset);
}

/** pg's `types` option: its own parsers, with timestamptz read by parseTimestamptz. */
export const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary'): unknown {
    if (oid === TIMESTAMPTZ_OID && format !== 'binary') return parseTimestamptz;
    return pg.types.getTypeParser(oid, format);
  },
};
