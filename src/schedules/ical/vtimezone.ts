// RFC 5545 §3.6.5 VTIMEZONE generated from the engine's own time zone data (ZoneRules, i.e. ICU tzdata through
// Intl), so an exported calendar's offsets agree with the occurrences the service computes. Transitions are found
// by daily probes of ZoneRules.offsetAt, bisected to the second. The zone's current rule ("last Sunday of March at
// 02:00") is recognised from the years up to RULE_CHECK_UNTIL and written as a yearly RRULE (§3.3.10), so the
// component covers every later year; earlier transitions back to the export's first year are written as RDATEs.
import {
  MS_PER_DAY,
  MS_PER_SECOND,
  WEEKDAY_CODES,
  civilFromDays,
  daysFromCivil,
  daysInMonth,
  packedDay,
  packedMonth,
  packedYear,
  weekdayOfDays,
} from '../recurrence/calendar.js';
import type { ZoneRules } from '../recurrence/time-zone.js';

/** One change of a zone's UTC offset (ms, local minus UTC) at the instant `at`. */
export interface ZoneTransition {
  readonly at: number;
  readonly from: number;
  readonly to: number;
}

/** Years checked for a stable yearly rule; ICU applies the zone's final rule unchanged after its data ends. */
const RULE_CHECK_UNTIL = 2045;
/** Later years spot-checked against the recognised rule. */
const RULE_SPOT_CHECKS = [2050, 2063, 2077, 2099, 2150];
/** When a zone has no stable rule (e.g. Africa/Casablanca), explicit transitions run at least this far. */
const EXPLICIT_UNTIL = 2100;

const yearStart = (year: number): number => daysFromCivil(year, 1, 1) * MS_PER_DAY;

export function yearOfInstant(ms: number): number {
  return packedYear(civilFromDays(Math.floor(ms / MS_PER_DAY)));
}

/** Transitions in [fromMs, toMs), found by daily probes and bisected to the second. */
export function zoneTransitions(zone: ZoneRules, fromMs: number, toMs: number): ZoneTransition[] {
  const out: ZoneTransition[] = [];
  let previousAt = fromMs;
  let previous = zone.offsetAt(fromMs);
  for (let at = fromMs + MS_PER_DAY; previousAt < toMs; at += MS_PER_DAY) {
    const probeAt = Math.min(at, toMs);
    const offset = zone.offsetAt(probeAt);
    if (offset !== previous) {
      let lo = previousAt;
      let hi = probeAt;
      while (hi - lo > MS_PER_SECOND) {
        const mid = lo + Math.floor((hi - lo) / 2 / MS_PER_SECOND) * MS_PER_SECOND;
        if (zone.offsetAt(mid) === previous) lo = mid;
        else hi = mid;
      }
      if (hi < toMs) out.push({ at: hi, from: previous, to: offset });
      previous = offset;
    }
    previousAt = probeAt;
  }
  return out;
}

/** How a yearly transition picks its day in the month (the BYxxx parts of its RRULE). */
type DayRule =
  | { readonly kind: 'nth'; readonly n: number; readonly weekday: number }
  | { readonly kind: 'last'; readonly weekday: number }
  | { readonly kind: 'onOrAfter'; readonly day: number; readonly weekday: number }
  | { readonly kind: 'fixed'; readonly day: number };

interface YearlyTransition {
  readonly month: number;
  /** Local wall time of day (before the change) in ms. */
  readonly timeOfDay: number;
  readonly from: number;
  readonly to: number;
  readonly rule: DayRule;
}

interface ZoneAnalysis {
  /** First year from which `yearly` describes every transition (Infinity when the zone has no such rule). */
  readonly ruleFrom: number;
  /** The zone's yearly transitions from ruleFrom on; [] when the offset stays fixed from ruleFrom. */
  readonly yearly: readonly YearlyTransition[];
  /** The earliest year the analysis looked at. */
  readonly searchedFrom: number;
}

function dayOfRule(rule: DayRule, year: number, month: number): number | undefined {
  const first = daysFromCivil(year, month, 1);
  const length = daysInMonth(year, month);
  switch (rule.kind) {
    case 'fixed':
      return rule.day <= length ? first + rule.day - 1 : undefined;
    case 'nth': {
      const firstMatch = first + ((rule.weekday - weekdayOfDays(first) + 7) % 7);
      return firstMatch + (rule.n - 1) * 7;
    }
    case 'last': {
      const last = first + length - 1;
      return last - ((weekdayOfDays(last) - rule.weekday + 7) % 7);
    }
    case 'onOrAfter': {
      const from = first + rule.day - 1;
      return from + ((rule.weekday - weekdayOfDays(from) + 7) % 7);
    }
  }
}

/** Every DayRule that puts a transition on `days` (days since 1970) of its month. */
function candidateRules(days: number): DayRule[] {
  const civil = civilFromDays(days);
  const year = packedYear(civil);
  const month = packedMonth(civil);
  const day = packedDay(civil);
  const weekday = weekdayOfDays(days);
  const rules: DayRule[] = [{ kind: 'fixed', day }];
  if (day <= 28) rules.push({ kind: 'nth', n: Math.ceil(day / 7), weekday });
  if (day + 7 > daysInMonth(year, month)) rules.push({ kind: 'last', weekday });
  // "Sunday on or after the 8th" style (tzdata's Sun>=8); the 7-day range must fit in every year's month.
  for (let from = Math.max(1, day - 6); from <= day; from++) {
    if (from + 6 <= (month === 2 ? 28 : daysInMonth(2001, month))) {
      rules.push({ kind: 'onOrAfter', day: from, weekday });
    }
  }
  return rules;
}

const sameRule = (a: DayRule, b: DayRule): boolean => JSON.stringify(a) === JSON.stringify(b);

interface TransitionShape {
  readonly month: number;
  readonly timeOfDay: number;
  readonly from: number;
  readonly to: number;
  readonly days: number;
}

function shapeOf(t: ZoneTransition): TransitionShape {
  const wall = t.at + t.from;
  const days = Math.floor(wall / MS_PER_DAY);
  return {
    month: packedMonth(civilFromDays(days)),
    timeOfDay: wall - days * MS_PER_DAY,
    from: t.from,
    to: t.to,
    days,
  };
}

function predicted(y: YearlyTransition, year: number): number | undefined {
  const day = dayOfRule(y.rule, year, y.month);
  return day === undefined ? undefined : day * MS_PER_DAY + y.timeOfDay - y.from;
}

function yearMatches(zone: ZoneRules, yearly: readonly YearlyTransition[], year: number): boolean {
  const actual = zoneTransitions(zone, yearStart(year), yearStart(year + 1));
  if (actual.length !== yearly.length) return false;
  const expected = yearly.map((y) => predicted(y, year)).sort((a, b) => (a ?? 0) - (b ?? 0));
  return actual.every((t, i) => expected[i] === t.at);
}

const analyses = new Map<string, ZoneAnalysis>();

/**
 * The zone's stable yearly rule: walks back from RULE_CHECK_UNTIL while each year's transitions keep the same
 * months, times, offsets and a day rule common to all those years; later years are spot-checked. Looks no earlier
 * than `notBefore` (the caller's first year), so a zone costs only the years an export needs.
 */
function analyse(zone: ZoneRules, notBefore: number): ZoneAnalysis {
  const cached = analyses.get(zone.id);
  // A cached answer holds unless its walk was cut short by a later first year than this caller's.
  if (cached && (cached.searchedFrom <= notBefore || cached.ruleFrom > cached.searchedFrom)) return cached;
  const last = zoneTransitions(zone, yearStart(RULE_CHECK_UNTIL), yearStart(RULE_CHECK_UNTIL + 1)).map(
    shapeOf,
  );
  const lowest = Math.max(notBefore, 1);
  const unstable: ZoneAnalysis = { ruleFrom: Infinity, yearly: [], searchedFrom: lowest };
  let candidates = last.map((s) => candidateRules(s.days));
  let from = RULE_CHECK_UNTIL;
  for (let year = RULE_CHECK_UNTIL - 1; year >= lowest; year--) {
    const shapes = zoneTransitions(zone, yearStart(year), yearStart(year + 1)).map(shapeOf);
    if (shapes.length !== last.length) break;
    const same = shapes.every(
      (s, i) =>
        s.month === last[i].month &&
        s.timeOfDay === last[i].timeOfDay &&
        s.from === last[i].from &&
        s.to === last[i].to,
    );
    if (!same) break;
    const narrowed = candidates.map((list, i) => {
      const here = candidateRules(shapes[i].days);
      return list.filter((rule) => here.some((other) => sameRule(rule, other)));
    });
    if (narrowed.some((list) => list.length === 0)) break;
    candidates = narrowed;
    from = year;
  }
  if (last.length > 0 && candidates.some((list) => list.length === 0)) return remember(zone, unstable);
  // Prefer the forms calendar clients know best: nth/last weekday, then "weekday on or after", then a fixed day.
  const order = { nth: 0, last: 1, onOrAfter: 2, fixed: 3 } as const;
  const yearly = last.map((s, i) => ({
    month: s.month,
    timeOfDay: s.timeOfDay,
    from: s.from,
    to: s.to,
    rule: [...candidates[i]].sort((a, b) => order[a.kind] - order[b.kind])[0],
  }));
  for (const year of RULE_SPOT_CHECKS) {
    if (!yearMatches(zone, yearly, year)) return remember(zone, unstable);
  }
  return remember(zone, { ruleFrom: from, yearly, searchedFrom: lowest });
}

function remember(zone: ZoneRules, analysis: ZoneAnalysis): ZoneAnalysis {
  analyses.set(zone.id, analysis);
  return analysis;
}

/**
 * `;TZID=Europe/Berlin`, quoted when the id holds a character a bare parameter value cannot (RFC 5545 §3.1 and
 * §3.2: `:` `;` `,`, as a POSIX TZ string does: `;TZID="<-0330>3:30<-0230>,M10.1.0/0,M2.3.0/0"`). Zone ids never
 * contain a double quote.
 */
export function tzidParameter(tzid: string): string {
  return /[:;,]/.test(tzid) ? `;TZID="${tzid}"` : `;TZID=${tzid}`;
}

/** The VTIMEZONE's `TZID` property: TEXT, so `,` `;` `\` are escaped (RFC 5545 §3.3.11, §3.8.3.1). */
export function tzidProperty(tzid: string): string {
  return `TZID:${tzid.replace(/[\\;,]/g, (char) => `\\${char}`)}`;
}

/** `+0100`, `-0430`, `+005328` (RFC 5545 §3.3.14 UTC-OFFSET). */
export function formatUtcOffset(ms: number): string {
  const sign = ms < 0 ? '-' : '+';
  const total = Math.round(Math.abs(ms) / MS_PER_SECOND);
  const hh = String(Math.floor(total / 3600)).padStart(2, '0');
  const mm = String(Math.floor((total % 3600) / 60)).padStart(2, '0');
  const ss = total % 60;
  return `${sign}${hh}${mm}${ss === 0 ? '' : String(ss).padStart(2, '0')}`;
}

/** A wall time (ms since 1970-01-01T00:00 wall) as RFC 5545 DATE-TIME form #1/#3 text: `20260329T020000`. */
export function formatWall(wallMs: number): string {
  const days = Math.floor(wallMs / MS_PER_DAY);
  const civil = civilFromDays(days);
  const seconds = Math.floor((wallMs - days * MS_PER_DAY) / MS_PER_SECOND);
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return (
    `${pad(packedYear(civil), 4)}${pad(packedMonth(civil))}${pad(packedDay(civil))}T` +
    `${pad(Math.floor(seconds / 3600))}${pad(Math.floor((seconds % 3600) / 60))}${pad(seconds % 60)}`
  );
}

function byParts(y: YearlyTransition): string {
  const rule = y.rule;
  switch (rule.kind) {
    case 'fixed':
      return `BYMONTH=${y.month};BYMONTHDAY=${rule.day}`;
    case 'nth':
      return `BYMONTH=${y.month};BYDAY=${rule.n}${WEEKDAY_CODES[rule.weekday]}`;
    case 'last':
      return `BYMONTH=${y.month};BYDAY=-1${WEEKDAY_CODES[rule.weekday]}`;
    case 'onOrAfter': {
      const days = Array.from({ length: 7 }, (_, i) => rule.day + i).join(',');
      return `BYMONTH=${y.month};BYMONTHDAY=${days};BYDAY=${WEEKDAY_CODES[rule.weekday]}`;
    }
  }
}

const generated = new Map<string, readonly string[]>();

/**
 * Unfolded content lines of a VTIMEZONE for `zone` that is exact from the start of the year before `fromMs`'s
 * year onwards (through `toMs` at least; for all later years too when the zone has a stable rule).
 */
export function vtimezoneLines(zone: ZoneRules, fromMs: number, toMs: number): readonly string[] {
  const firstYear = Math.max(1, yearOfInstant(fromMs) - 1);
  const analysis = analyse(zone, firstYear);
  const explicitUntil =
    analysis.ruleFrom !== Infinity
      ? Math.max(firstYear, analysis.ruleFrom)
      : Math.max(EXPLICIT_UNTIL, Number.isFinite(toMs) ? yearOfInstant(toMs) + 2 : 0);
  const key = `${zone.id}\u0000${firstYear}\u0000${explicitUntil}`;
  const cached = generated.get(key);
  if (cached) return cached;

  const startMs = yearStart(firstYear);
  const explicit = zoneTransitions(zone, startMs, yearStart(explicitUntil));
  const ruleYear = Math.max(firstYear, analysis.ruleFrom);
  const ruled = analysis.ruleFrom === Infinity ? [] : analysis.yearly;
  const allOffsets = [zone.offsetAt(startMs), ...explicit.map((t) => t.to), ...ruled.map((y) => y.to)];
  // The smaller offset of a pair is standard time; only the label depends on it.
  const standard = ruled.length > 0 ? Math.min(...ruled.map((y) => y.to)) : Math.min(...allOffsets);
  const kind = (offset: number) => (offset > standard ? 'DAYLIGHT' : 'STANDARD');

  const lines = ['BEGIN:VTIMEZONE', tzidProperty(zone.id)];
  const observance = (to: number, from: number, dtstart: string, extra: readonly string[]) => {
    lines.push(
      `BEGIN:${kind(to)}`,
      `DTSTART:${dtstart}`,
      ...extra,
      `TZOFFSETFROM:${formatUtcOffset(from)}`,
      `TZOFFSETTO:${formatUtcOffset(to)}`,
      `END:${kind(to)}`,
    );
  };
  // The offset in effect when the component starts, so times before the first transition are defined.
  const initial = zone.offsetAt(startMs);
  observance(initial, initial, formatWall(startMs + initial), []);
  const groups = new Map<string, ZoneTransition[]>();
  for (const t of explicit) {
    if (ruled.length > 0 && t.at >= yearStart(ruleYear)) break;
    const groupKey = `${t.from}/${t.to}`;
    const list = groups.get(groupKey) ?? [];
    list.push(t);
    groups.set(groupKey, list);
  }
  for (const list of groups.values()) {
    // DTSTART is the first onset (RFC 5545 §3.6.5); it is repeated as an RDATE because ical.js, given RDATEs
    // and no RRULE, reads only the RDATEs.
    const rdates = list.map((t) => `RDATE:${formatWall(t.at + t.from)}`);
    observance(list[0].to, list[0].from, formatWall(list[0].at + list[0].from), rdates);
  }
  for (const y of ruled) {
    const at = predicted(y, ruleYear);
    if (at === undefined) continue;
    observance(y.to, y.from, formatWall(at + y.from), [`RRULE:FREQ=YEARLY;${byParts(y)}`]);
  }
  lines.push('END:VTIMEZONE');
  if (generated.size > 1_000) generated.clear();
  generated.set(key, lines);
  return lines;
}
