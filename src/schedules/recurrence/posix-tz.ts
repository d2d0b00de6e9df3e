// POSIX TZ strings (IEEE Std 1003.1, XBD §8.3 "TZ"; RFC 8536 §3.3 with its extension of the rule time to
// -167..167 hours, §3.3.1): `std offset [dst [offset] ,start[/time],end[/time]]`, e.g. `EST5EDT,M3.2.0,M11.1.0` or
// `<-0330>3:30<-0230>,M10.1.0/0,M2.3.0/0`. The service uses them for zones no IANA id names (an imported VTIMEZONE
// with rules of its own): a string describes the zone completely, needs no storage and reads the same everywhere.
// The parser is strict. Refused on purpose:
//   - a dst name without a rule (POSIX leaves the rule implementation-defined);
//   - an unquoted UTC/GMT/UT/UCT name with a non-zero offset (`UTC+01`): POSIX reads its sign inverted (UTC-1),
//     while people writing it mean UTC+1 (write `Etc/GMT-1` or `<+01>-1`);
//   - a rule whose offsets would change twice within two days (the engine resolves wall times assuming changes
//     are at least a day apart, as in all of tzdata's rules).
import {
  MS_PER_DAY,
  MS_PER_HOUR,
  MS_PER_SECOND,
  daysFromCivil,
  daysInMonth,
  isLeapYear,
  weekdayOfDays,
} from './calendar.js';

/** The day a rule names: `Jn` (1..365, 29 February never counted), `n` (0..365, counted), `Mm.w.d`. */
export type PosixDate =
  | { readonly kind: 'julian1'; readonly day: number }
  | { readonly kind: 'julian0'; readonly day: number }
  | { readonly kind: 'month'; readonly month: number; readonly week: number; readonly weekday: number };

export interface PosixRule {
  readonly date: PosixDate;
  /** Local wall time of day of the change (ms), in the offset before it; -167 h … 167 h. */
  readonly time: number;
}

export interface PosixTz {
  readonly stdName: string;
  /** UTC offset of standard time (ms, local minus UTC: the sign POSIX writes inverted). */
  readonly stdOffset: number;
  readonly dst?: {
    readonly name: string;
    readonly offset: number;
    readonly start: PosixRule;
    readonly end: PosixRule;
  };
}

/** One change of offset: from `at` (UTC ms) on, `to` is in effect. */
export interface PosixTransition {
  readonly at: number;
  readonly to: number;
}

const UTC_NAMES = new Set(['UTC', 'GMT', 'UT', 'UCT']);
const DEFAULT_TIME = 2 * MS_PER_HOUR;
/** Weekday patterns of the Gregorian calendar repeat every 400 years (146,097 days, a multiple of 7). */
const CYCLE_YEARS = 400;

/** Parses a POSIX TZ string; undefined when it is not one (or one the service refuses, see above). */
export function parsePosixTz(text: string): PosixTz | undefined {
  const reader = new Reader(text);
  const stdName = reader.name();
  if (stdName === undefined) return undefined;
  const stdOffset = reader.offset();
  if (stdOffset === undefined) return undefined;
  if (stdOffset !== 0 && !stdName.quoted && UTC_NAMES.has(stdName.text.toUpperCase())) return undefined;
  if (reader.done()) return { stdName: stdName.text, stdOffset };
  const dstName = reader.name();
  if (dstName === undefined) return undefined;
  let dstOffset = stdOffset + MS_PER_HOUR;
  if (!reader.peek(',')) {
    const explicit = reader.offset();
    if (explicit === undefined) return undefined;
    dstOffset = explicit;
  }
  if (!reader.take(',')) return undefined;
  const start = reader.rule();
  if (start === undefined || !reader.take(',')) return undefined;
  const end = reader.rule();
  if (end === undefined || !reader.done()) return undefined;
  const tz: PosixTz = {
    stdName: stdName.text,
    stdOffset,
    dst: { name: dstName.text, offset: dstOffset, start, end },
  };
  return changesFarEnoughApart(tz) ? tz : undefined;
}

class Reader {
  private at = 0;

  constructor(private readonly text: string) {}

  done(): boolean {
    return this.at === this.text.length;
  }

  peek(char: string): boolean {
    return this.text[this.at] === char;
  }

  take(char: string): boolean {
    if (!this.peek(char)) return false;
    this.at++;
    return true;
  }

  /** `<+0330>` (letters, digits, + and -) or `EST` (letters), at least three characters either way. */
  name(): { text: string; quoted: boolean } | undefined {
    const rest = this.text.slice(this.at);
    const match = /^<([A-Za-z0-9+-]{3,})>/.exec(rest) ?? /^([A-Za-z]{3,})/.exec(rest);
    if (match === null) return undefined;
    this.at += match[0].length;
    return { text: match[1], quoted: match[0].startsWith('<') };
  }

  /** `[+|-]hh[:mm[:ss]]`, hh ≤ 24, as a UTC offset (POSIX's sign inverted: `5` is UTC-5). */
  offset(): number | undefined {
    const value = this.clock(24);
    return value === undefined ? undefined : -value;
  }

  /** `Jn`, `n` or `Mm.w.d`, then an optional `/time` (RFC 8536: -167…167 hours). */
  rule(): PosixRule | undefined {
    const rest = this.text.slice(this.at);
    let date: PosixDate;
    let match: RegExpExecArray | null;
    if ((match = /^J(\d{1,3})/.exec(rest)) !== null) {
      const day = Number(match[1]);
      if (day < 1 || day > 365) return undefined;
      date = { kind: 'julian1', day };
    } else if ((match = /^M(\d{1,2})\.(\d)\.(\d)/.exec(rest)) !== null) {
      const [month, week, weekday] = [Number(match[1]), Number(match[2]), Number(match[3])];
      if (month < 1 || month > 12 || week < 1 || week > 5 || weekday > 6) return undefined;
      date = { kind: 'month', month, week, weekday };
    } else if ((match = /^(\d{1,3})/.exec(rest)) !== null) {
      const day = Number(match[1]);
      if (day > 365) return undefined;
      date = { kind: 'julian0', day };
    } else return undefined;
    this.at += match[0].length;
    if (!this.take('/')) return { date, time: DEFAULT_TIME };
    const time = this.clock(167);
    return time === undefined ? undefined : { date, time };
  }

  /** `[+|-]h[h[h]][:mm[:ss]]` in ms, hours at most `maxHours`. */
  private clock(maxHours: number): number | undefined {
    const match = /^([+-]?)(\d{1,3})(?::(\d{2})(?::(\d{2}))?)?/.exec(this.text.slice(this.at));
    if (match === null) return undefined;
    const hours = Number(match[2]);
    const minutes = match[3] === undefined ? 0 : Number(match[3]);
    const seconds = match[4] === undefined ? 0 : Number(match[4]);
    if (hours > maxHours || minutes > 59 || seconds > 59) return undefined;
    // Two digits at most for an offset's hours (POSIX hh); three for RFC 8536's rule times.
    if (maxHours < 100 && match[2].length > 2) return undefined;
    this.at += match[0].length;
    const ms = ((hours * 60 + minutes) * 60 + seconds) * MS_PER_SECOND;
    return match[1] === '-' ? -ms : ms;
  }
}

/** Days since 1970-01-01 of the day a rule names in `year`. */
function dayOf(date: PosixDate, year: number): number {
  const jan1 = daysFromCivil(year, 1, 1);
  switch (date.kind) {
    case 'julian0':
      return jan1 + date.day;
    case 'julian1':
      // 29 February is never counted: from day 60 (1 March) on, a leap year's days are one later.
      return jan1 + date.day - 1 + (date.day >= 60 && isLeapYear(year) ? 1 : 0);
    case 'month': {
      const first = daysFromCivil(year, date.month, 1);
      // POSIX weekdays start at Sunday (0); calendar.ts counts from Monday (0).
      const weekday = (date.weekday + 6) % 7;
      const firstMatch = first + ((weekday - weekdayOfDays(first) + 7) % 7);
      const nth = firstMatch + (date.week - 1) * 7;
      // Week 5 is "the last such day", which is the fourth in months with four of it.
      return nth >= first + daysInMonth(year, date.month) ? nth - 7 : nth;
    }
  }
}

/**
 * The changes the rule makes for local year `year`, in order (the start of DST is read in standard time, its end
 * in DST, as POSIX says: "in current local time"). Offsets equal to each other make no change.
 */
function changesOfYear(tz: PosixTz, year: number): { at: number; to: number; year: number; order: number }[] {
  const dst = tz.dst;
  if (dst === undefined || dst.offset === tz.stdOffset) return [];
  const start = dayOf(dst.start.date, year) * MS_PER_DAY + dst.start.time - tz.stdOffset;
  const end = dayOf(dst.end.date, year) * MS_PER_DAY + dst.end.time - dst.offset;
  return [
    { at: start, to: dst.offset, year, order: 0 },
    { at: end, to: tz.stdOffset, year, order: 1 },
  ];
}

/**
 * The effective transitions the rule makes for local years `fromYear`..`toYear`, in order, and the offset in effect
 * before the first of them. Changes at one instant count as their net effect (RFC 8536's "DST all year"
 * `EST5EDT4,0/0,J365/25` ends one year's DST at the instant the next year's begins: no change), and a change to
 * the offset already in effect is none.
 */
export function posixTransitions(
  tz: PosixTz,
  fromYear: number,
  toYear: number,
): { before: number; transitions: PosixTransition[] } {
  const changes = [];
  for (let year = fromYear; year <= toYear; year++) changes.push(...changesOfYear(tz, year));
  // Equal instants: the earlier year's change first, then within a year the start before the end.
  changes.sort((a, b) => a.at - b.at || a.year - b.year || a.order - b.order);
  if (changes.length === 0) return { before: tz.stdOffset, transitions: [] };
  // The changes alternate: before the first start of DST it is standard time, before the first end it is DST.
  const before = changes[0].order === 0 ? tz.stdOffset : tz.dst!.offset;
  const transitions: PosixTransition[] = [];
  let state = before;
  for (const change of changes) {
    const last = transitions[transitions.length - 1] as PosixTransition | undefined;
    if (last !== undefined && last.at === change.at) {
      const prior = transitions.length >= 2 ? transitions[transitions.length - 2].to : before;
      transitions.pop();
      if (change.to !== prior) transitions.push({ at: change.at, to: change.to });
    } else if (change.to !== state) transitions.push({ at: change.at, to: change.to });
    state = change.to;
  }
  return { before, transitions };
}

/** Whether every change of offset lies at least two days after the previous one, over a full 400-year cycle. */
function changesFarEnoughApart(tz: PosixTz): boolean {
  const { transitions } = posixTransitions(tz, 1999, 2000 + CYCLE_YEARS);
  for (let i = 1; i < transitions.length; i++) {
    if (transitions[i].at - transitions[i - 1].at < 2 * MS_PER_DAY) return false;
  }
  return true;
}
