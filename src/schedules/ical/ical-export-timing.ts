// The export's first steps for one item: what it is (zone, all-day, length, rule or not) and when its VEVENT
// starts — DTSTART, the written RRULE and UNTIL, the recurrence's Duration and Offset, and which instants the rule
// generates (for RDATEs and EXDATEs that add or remove nothing). ical-export-builder.ts writes the lines.
import { allDayDuration, isDayStart } from '../recurrence/all-day.js';
import { buildExpansionRule, type ExpansionRule } from '../recurrence/expansion-rule.js';
import { parseDateTime } from '../recurrence/iso-date-time.js';
import { type IsoDuration, ZERO_DURATION, addDuration } from '../recurrence/iso-duration.js';
import { acquireCursor, releaseCursor } from '../recurrence/rule-cursor.js';
import { type Frequency, FREQUENCIES, parseRRule, type RRuleParts } from '../recurrence/rrule-parser.js';
import { compileSeries, momentOf } from '../recurrence/series-compiler.js';
import { resolveTimeZone, zoneRules, type ZoneRules } from '../recurrence/time-zone.js';
import { type ExportItem, IcalExportError, MAX_LISTED } from './ical-export-model.js';
import {
  type RuleSpec,
  countedEnd,
  formatRule,
  ruleGeneratesDtstart,
  sameRegularStarts,
  shiftRule,
  withYearlyDay,
} from './ical-export-rule.js';
import { ItemZone, durationOf, momentOfText, text } from './ical-export-zone.js';

const FREQ_ORDER: readonly Frequency[] = FREQUENCIES;

type Recurrence = NonNullable<ExportItem['Recurrence']>;

/** What an item is, before anything is written. */
export interface ItemFacts {
  /** `ScheduleItems[2]`: the field path errors name. */
  readonly at: string;
  readonly item: ExportItem;
  readonly series: ReturnType<typeof compileSeries>;
  readonly rules: ZoneRules;
  readonly zone: ItemZone;
  readonly allDay: boolean;
  readonly recurrence: Recurrence | undefined;
  readonly start: number;
  /** End − Start (whole days for all-day items). */
  readonly itemDuration: IsoDuration;
  readonly patternText: string | undefined;
  readonly typeText: string | undefined;
  readonly hasRule: boolean;
}

/** When the VEVENT starts and how its set is written. */
export interface Timing {
  readonly dtWall: number;
  readonly dtInstant: number;
  readonly duration: IsoDuration;
  readonly offset: IsoDuration;
  readonly rrule?: string;
  readonly until?: number;
  /** DTSTART is not an instance of the rule (or UNTIL is before it): written as an RDATE too. */
  readonly unsynchronized: boolean;
  /** Whether the rule (or, without one, DTSTART) generates this instant before Offset; COUNT applied. */
  readonly generates: (instant: number) => boolean;
}

export function itemFacts(itemIndex: number, item: ExportItem): ItemFacts {
  // Stored items were compiled on write; compiling again gives the unmatched exceptions (left out by the export).
  const series = compileSeries(item);
  const zoneText = text(item.StartTimeZone);
  const tzid = zoneText === undefined ? undefined : (resolveTimeZone(zoneText) ?? zoneText);
  const rules = zoneRules(tzid ?? 'UTC');
  const recurrence = item.Recurrence ?? undefined;
  const start = momentOfText(item.Start, rules) ?? 0;
  const end = momentOfText(item.End, rules);
  // Stored all-day items passed the checks of all-day.ts; the guard keeps an unchecked one timed.
  const allDay =
    item.AllDay === true &&
    end !== undefined &&
    end > start &&
    isDayStart(rules, start) &&
    isDayStart(rules, end);
  const itemDuration: IsoDuration =
    end === undefined
      ? ZERO_DURATION
      : allDay
        ? allDayDuration(rules, start, end)
        : { days: 0, exactMs: Math.max(0, end - start) };
  const patternText = text(recurrence?.Pattern);
  const typeText = text(recurrence?.RecurrenceType)?.trim().toUpperCase();
  return {
    at: `ScheduleItems[${itemIndex}]`,
    item,
    series,
    rules,
    zone: new ItemZone(rules.id === 'UTC' ? undefined : tzid, rules, allDay),
    allDay,
    recurrence,
    start,
    itemDuration,
    patternText,
    typeText,
    hasRule:
      recurrence !== undefined &&
      (patternText !== undefined || (typeText !== undefined && typeText !== 'NONE')),
  };
}

/**
 * DTSTART plus RDATEs is a set like any other: the engine gives every start the recurrence's Duration and Offset
 * (series-compiler.ts); a single occurrence keeps End − Start and no Offset.
 */
export function setTiming(facts: ItemFacts): Timing {
  const { recurrence, rules, start } = facts;
  const listsDates = recurrence !== undefined && (recurrence.RecurrenceDates ?? []).length > 0;
  const duration = listsDates ? (durationOf(recurrence.Duration) ?? facts.itemDuration) : facts.itemDuration;
  const offset = listsDates ? (durationOf(recurrence.Offset) ?? ZERO_DURATION) : ZERO_DURATION;
  const dtInstant = addDuration(rules, start, offset);
  return {
    dtWall: rules.wallOf(dtInstant),
    dtInstant,
    duration,
    offset,
    unsynchronized: false,
    generates: (instant) => instant === start,
  };
}

/**
 * The timing of an item with a rule. `tryListed` writes a finite series as its occurrences instead (true when it
 * did): for an Offset the rule cannot carry, or one whose hours span a DST change; then undefined.
 */
export function ruleTiming(
  facts: ItemFacts,
  scheduleId: string,
  tryListed: (duration: IsoDuration) => boolean,
): Timing | undefined {
  const { recurrence, rules, zone, at } = facts;
  const { rule, parts } = ruleSpecOf(facts);
  const { dtWall, dtInstant } = dtstartOf(recurrence!, rules, facts.start);
  const duration = durationOf(recurrence!.Duration) ?? facts.itemDuration;
  const offset = durationOf(recurrence!.Offset) ?? ZERO_DURATION;
  const finite = rule.count !== undefined || rule.until !== undefined;
  const shifted = shiftRule(rule, zone.tzid === undefined ? dtInstant : dtWall, offset);
  if (!shifted && finite && tryListed(duration)) return undefined;
  if (!shifted) {
    throw new IcalExportError(
      scheduleId,
      `${at}.Recurrence.Offset`,
      `${at}.Recurrence.Offset ${String(recurrence!.Offset)} cannot be written in iCalendar for the rule ` +
        `${formatRule(rule, rule.parts, rule.until)}: it moves occurrences across days the rule picks by ` +
        'date, or splits its times of day, and the series is unbounded or longer than ' +
        `${MAX_LISTED} occurrences (see docs/schedules.md, iCalendar export)`,
    );
  }
  const expansion = expansionOf(rule, parts, rules, dtWall, dtInstant);
  const { generates, lastCounted } = generatorOf(expansion, rule);
  // An UNTIL before DTSTART leaves DTSTART the only occurrence (docs/schedules.md), which ical.js and others drop
  // with the rule: it is written as an RDATE too, like a DTSTART the rule does not match.
  const endsBeforeStart = rule.until !== undefined && rule.until < dtInstant;
  const unsynchronized = endsBeforeStart || ruleGeneratesDtstart(expansion) === false;
  // DTSTART is then written as an RDATE too; readers that do not count it would count one more instance, so COUNT
  // becomes UNTIL at the COUNT-th instance, which every reader reads alike.
  const written =
    unsynchronized && rule.count !== undefined
      ? { ...rule, count: undefined, until: lastCounted(rule.count) }
      : rule;
  const until = written.until === undefined ? undefined : addDuration(rules, written.until, offset);
  const rrule = formatRule(
    written,
    withYearlyDay(rule.freq, shifted.parts, shifted.dtWall),
    until,
    facts.allDay ? rules : undefined,
  );
  if (
    offset.exactMs !== 0 &&
    zone.tzid !== undefined &&
    finite &&
    !sameRegularStarts(facts.item, zone.tzid, shifted.dtWall, rrule) &&
    tryListed(duration)
  ) {
    // The Offset's hours span a DST change for some occurrence, where a wall-time shift is an hour off: the finite
    // series was listed instead.
    return undefined;
  }
  const shiftedInstant = addDuration(rules, dtInstant, offset);
  return {
    dtWall: zone.tzid === undefined ? shiftedInstant : shifted.dtWall,
    dtInstant: shiftedInstant,
    duration,
    offset,
    rrule,
    until,
    unsynchronized,
    generates,
  };
}

/** The rule of the Pattern, or of RecurrenceType/Interval/EndCount/EndTime. */
function ruleSpecOf(facts: ItemFacts): { rule: RuleSpec; parts: RRuleParts } {
  const { recurrence, patternText, typeText, rules, at } = facts;
  const parts = patternText === undefined ? {} : parseRRule(patternText, 'Recurrence.Pattern');
  const freq = parts.freq ?? FREQ_ORDER.find((f) => f === typeText);
  if (freq === undefined) throw new Error(`${at}: no FREQ`);
  const intervalText = recurrence!.Interval;
  const interval =
    parts.interval ??
    (intervalText === undefined || intervalText === null || String(intervalText).trim() === ''
      ? 1
      : Number(intervalText));
  const endCount = Number(recurrence!.EndCount ?? 0) || undefined;
  const untilParsed =
    parts.until ?? (text(recurrence!.EndTime) ? parseDateTime(String(recurrence!.EndTime)) : undefined);
  const rule: RuleSpec = {
    freq,
    interval,
    count: parts.count ?? endCount,
    until: untilParsed === undefined ? undefined : momentOf(untilParsed, rules),
    parts,
  };
  return { rule, parts };
}

/** DTSTART of a rule: Recurrence.StartTime (a wall time, or an instant) or the item's Start. */
function dtstartOf(
  recurrence: Recurrence,
  rules: ZoneRules,
  start: number,
): { dtWall: number; dtInstant: number } {
  const startTime = text(recurrence.StartTime);
  const parsedStart = startTime === undefined ? undefined : parseDateTime(startTime);
  if (parsedStart?.kind === 'wall')
    return { dtWall: parsedStart.ms, dtInstant: rules.instantOf(parsedStart.ms) };
  const dtInstant = parsedStart?.kind === 'instant' ? parsedStart.ms : start;
  return { dtWall: rules.wallOf(dtInstant), dtInstant };
}

function expansionOf(
  rule: RuleSpec,
  parts: RRuleParts,
  rules: ZoneRules,
  dtWall: number,
  dtInstant: number,
): ExpansionRule {
  return buildExpansionRule(
    {
      freq: rule.freq,
      interval: rule.interval,
      count: rule.count ?? 0,
      untilInstant: rule.until ?? Infinity,
      wkst: parts.wkst ?? 0,
      bySecond: parts.bySecond,
      byMinute: parts.byMinute,
      byHour: parts.byHour,
      byDay: parts.byDay,
      byMonthDay: parts.byMonthDay,
      byYearDay: parts.byYearDay,
      byWeekNo: parts.byWeekNo,
      byMonth: parts.byMonth,
      bySetPos: parts.bySetPos,
    },
    rules,
    dtWall,
    dtInstant,
  );
}

/** Whether the rule generates an instant (COUNT applied), and the COUNT-th instance (computed once). */
function generatorOf(
  expansion: ExpansionRule,
  rule: RuleSpec,
): { generates: (instant: number) => boolean; lastCounted: (count: number) => number } {
  let countEnd: number | undefined;
  const lastCounted = (count: number) => (countEnd ??= countedEnd(expansion, count));
  const generates = (instant: number): boolean => {
    const cursor = acquireCursor();
    try {
      cursor.start(expansion, instant, instant);
      if (cursor.next() !== instant) return false;
    } finally {
      releaseCursor(cursor);
    }
    // Counting walks the rule from DTSTART, so it comes last.
    return rule.count === undefined || instant <= lastCounted(rule.count);
  };
  return { generates, lastCounted };
}
