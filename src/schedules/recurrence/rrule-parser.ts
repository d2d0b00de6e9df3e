// RFC 5545 §3.3.10 RECUR value: syntax and per-part value ranges (parseRRule), and the rules that depend on FREQ
// (validateRuleForFrequency: BYWEEKNO only with YEARLY, BYYEARDAY not with DAILY/WEEKLY/MONTHLY, BYMONTHDAY not
// with WEEKLY, numeric BYDAY only with MONTHLY/YEARLY and not with YEARLY+BYWEEKNO, BYSETPOS only with another
// BYxxx part). Rule-part names and values are matched case-insensitively, an `RRULE:` prefix is allowed.
import { WEEKDAY_CODES } from './calendar.js';
import { type ParsedDateTime, parseDateTime } from './iso-date-time.js';
import { RecurrenceError } from './recurrence-error.js';

/** The most occurrences a COUNT may ask for (the same bound as the interface's EndCount). */
export const MAX_COUNT = 1_000_000;

export const FREQUENCIES = [
  'SECONDLY',
  'MINUTELY',
  'HOURLY',
  'DAILY',
  'WEEKLY',
  'MONTHLY',
  'YEARLY',
] as const;
export type Frequency = (typeof FREQUENCIES)[number];

/** A BYDAY entry: weekday Monday = 0 … Sunday = 6, ordinal 0 when absent ("every"). */
export interface WeekdayNum {
  readonly weekday: number;
  readonly ordinal: number;
}

export interface RRuleParts {
  readonly freq?: Frequency;
  readonly interval?: number;
  readonly count?: number;
  readonly until?: ParsedDateTime;
  readonly bySecond?: readonly number[];
  readonly byMinute?: readonly number[];
  readonly byHour?: readonly number[];
  readonly byDay?: readonly WeekdayNum[];
  readonly byMonthDay?: readonly number[];
  readonly byYearDay?: readonly number[];
  readonly byWeekNo?: readonly number[];
  readonly byMonth?: readonly number[];
  readonly bySetPos?: readonly number[];
  readonly wkst?: number;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

const WEEKDAY_NUM = /^([+-]?)(\d{1,2})?(MO|TU|WE|TH|FR|SA|SU)$/;

function parseIntStrict(text: string): number | undefined {
  return /^[+-]?\d{1,9}$/.test(text) ? Number(text) : undefined;
}

function intList(
  field: string,
  name: string,
  value: string,
  min: number,
  max: number,
  allowNegative: boolean,
): number[] {
  const out: number[] = [];
  for (const item of value.split(',')) {
    const n = parseIntStrict(item.trim());
    const abs = n === undefined ? NaN : Math.abs(n);
    if (n === undefined || abs < min || abs > max || (n < 0 && !allowNegative) || (n === 0 && min > 0)) {
      const range = allowNegative ? `±${min}…${max}` : `${min}…${max}`;
      throw new RecurrenceError(field, `${name} value "${item}" is not an integer in ${range}`);
    }
    if (!out.includes(n)) out.push(n);
  }
  return out;
}

function weekdayCode(field: string, name: string, text: string): number {
  const i = (WEEKDAY_CODES as readonly string[]).indexOf(text.trim().toUpperCase());
  if (i < 0)
    throw new RecurrenceError(field, `${name} value "${text}" is not one of MO, TU, WE, TH, FR, SA, SU`);
  return i;
}

/** Parses an RRULE value (`FREQ=MONTHLY;BYDAY=-1FR`); throws RecurrenceError naming `field` on any syntax error. */
export function parseRRule(text: string, field: string): RRuleParts {
  let body = text.trim();
  if (/^RRULE:/i.test(body)) body = body.slice(6);
  if (body === '') throw new RecurrenceError(field, 'the rule is empty');
  const parts: Mutable<RRuleParts> = {};
  const seen = new Set<string>();
  for (const raw of body.split(';')) {
    if (raw.trim() === '') continue;
    const eq = raw.indexOf('=');
    if (eq <= 0) throw new RecurrenceError(field, `"${raw}" is not NAME=VALUE`);
    const name = raw.slice(0, eq).trim().toUpperCase();
    const value = raw.slice(eq + 1).trim();
    if (seen.has(name)) throw new RecurrenceError(field, `${name} occurs more than once`);
    seen.add(name);
    if (value === '') throw new RecurrenceError(field, `${name} has no value`);
    switch (name) {
      case 'FREQ': {
        const freq = FREQUENCIES.find((f) => f === value.toUpperCase());
        if (!freq)
          throw new RecurrenceError(field, `FREQ "${value}" is not one of ${FREQUENCIES.join(', ')}`);
        parts.freq = freq;
        break;
      }
      case 'INTERVAL': {
        const n = parseIntStrict(value);
        if (n === undefined || n < 1)
          throw new RecurrenceError(field, `INTERVAL "${value}" is not a positive integer`);
        parts.interval = n;
        break;
      }
      case 'COUNT': {
        const n = parseIntStrict(value);
        if (n === undefined || n < 1)
          throw new RecurrenceError(field, `COUNT "${value}" is not a positive integer`);
        // Like EndCount: a COUNT series is counted from DTSTART, so its length bounds what a query can cost.
        if (n > MAX_COUNT)
          throw new RecurrenceError(field, `COUNT ${value} is more than ${MAX_COUNT.toLocaleString('en')}`);
        parts.count = n;
        break;
      }
      case 'UNTIL': {
        const until = parseDateTime(value);
        if (!until) throw new RecurrenceError(field, `UNTIL "${value}" is not a date or date-time`);
        parts.until = until;
        break;
      }
      case 'BYSECOND':
        parts.bySecond = intList(field, name, value, 0, 60, false);
        break;
      case 'BYMINUTE':
        parts.byMinute = intList(field, name, value, 0, 59, false);
        break;
      case 'BYHOUR':
        parts.byHour = intList(field, name, value, 0, 23, false);
        break;
      case 'BYMONTHDAY':
        parts.byMonthDay = intList(field, name, value, 1, 31, true);
        break;
      case 'BYYEARDAY':
        parts.byYearDay = intList(field, name, value, 1, 366, true);
        break;
      case 'BYWEEKNO':
        parts.byWeekNo = intList(field, name, value, 1, 53, true);
        break;
      case 'BYMONTH':
        parts.byMonth = intList(field, name, value, 1, 12, false);
        break;
      case 'BYSETPOS':
        parts.bySetPos = intList(field, name, value, 1, 366, true);
        break;
      case 'WKST':
        parts.wkst = weekdayCode(field, name, value);
        break;
      case 'BYDAY': {
        const days: WeekdayNum[] = [];
        for (const item of value.split(',')) {
          const m = WEEKDAY_NUM.exec(item.trim().toUpperCase());
          const ordinal = m?.[2] === undefined ? 0 : Number(m[2]) * (m[1] === '-' ? -1 : 1);
          if (
            !m ||
            (m[2] !== undefined && (ordinal === 0 || Math.abs(ordinal) > 53)) ||
            (m[1] !== '' && !m[2])
          ) {
            throw new RecurrenceError(
              field,
              `BYDAY value "${item}" is not a weekday with an optional ordinal ±1…53`,
            );
          }
          const weekday = weekdayCode(field, name, m[3]);
          if (!days.some((d) => d.weekday === weekday && d.ordinal === ordinal))
            days.push({ weekday, ordinal });
        }
        parts.byDay = days;
        break;
      }
      default:
        // RFC 5545 lets x-names through for private use; anything else is more likely a typo than an extension.
        if (!name.startsWith('X-')) throw new RecurrenceError(field, `${name} is not a recurrence rule part`);
    }
  }
  if (parts.count !== undefined && parts.until !== undefined) {
    throw new RecurrenceError(field, 'COUNT and UNTIL must not both be given');
  }
  return parts;
}

/** Checks the FREQ-dependent rules of RFC 5545 §3.3.10 once FREQ is known (it may come from RecurrenceType). */
export function validateRuleForFrequency(parts: RRuleParts, freq: Frequency, field: string): void {
  if (parts.byWeekNo && freq !== 'YEARLY') {
    throw new RecurrenceError(field, 'BYWEEKNO is only allowed with FREQ=YEARLY');
  }
  if (parts.byYearDay && (freq === 'DAILY' || freq === 'WEEKLY' || freq === 'MONTHLY')) {
    throw new RecurrenceError(field, `BYYEARDAY is not allowed with FREQ=${freq}`);
  }
  if (parts.byMonthDay && freq === 'WEEKLY') {
    throw new RecurrenceError(field, 'BYMONTHDAY is not allowed with FREQ=WEEKLY');
  }
  const numbered = parts.byDay?.some((d) => d.ordinal !== 0) ?? false;
  if (numbered && freq !== 'MONTHLY' && freq !== 'YEARLY') {
    throw new RecurrenceError(
      field,
      `BYDAY with an ordinal (e.g. -1FR) is only allowed with FREQ=MONTHLY or YEARLY`,
    );
  }
  if (numbered && freq === 'YEARLY' && parts.byWeekNo) {
    throw new RecurrenceError(field, 'BYDAY with an ordinal is not allowed together with BYWEEKNO');
  }
  if (parts.bySetPos) {
    const other =
      parts.bySecond ??
      parts.byMinute ??
      parts.byHour ??
      parts.byDay ??
      parts.byMonthDay ??
      parts.byYearDay ??
      parts.byWeekNo ??
      parts.byMonth;
    if (!other)
      throw new RecurrenceError(field, 'BYSETPOS must be used together with another BYxxx rule part');
  }
}
