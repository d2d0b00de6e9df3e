// Items → VEVENTs: one VEVENT per schedule item with its recurrence set, one per moved exception, and the span of
// each zone's use (for its VTIMEZONE). The calendar around them is written by ical-export.ts.
import type { compileSeries } from '../recurrence/series-compiler.js';
import { type IsoDuration, addDuration } from '../recurrence/iso-duration.js';
import { basicDate, localDay } from '../recurrence/all-day.js';
import { formatWall } from './vtimezone.js';
import { EMPTY_SET_RULE, type ExportItem, MAX_LISTED } from './ical-export-model.js';
import { type ItemFacts, type Timing, itemFacts, ruleTiming, setTiming } from './ical-export-timing.js';
import {
  ItemZone,
  type ZoneUse,
  floorSecond,
  formatDuration,
  momentOfText,
  text,
} from './ical-export-zone.js';
import { escapeText } from './ical-lines.js';

interface RecurrenceSet {
  readonly rdates: number[];
  readonly exdates: number[];
  readonly endOf: (instant: number) => number;
}

/** `SUMMARY:<Name>`, or nothing for an item without a Name. */
function summaryLines(item: ExportItem): string[] {
  const name = text(item.Name);
  return name === undefined ? [] : [`SUMMARY:${escapeText(name)}`];
}

/** The RDATEs and EXDATEs as written (Offset applied), without those that add or remove nothing. */
function recurrenceSet(facts: ItemFacts, timing: Timing): RecurrenceSet {
  const { rules, recurrence } = facts;
  const { offset, generates, rrule, unsynchronized, dtInstant, duration } = timing;
  const shift = (instant: number) => addDuration(rules, instant, offset);
  const rawRdates = (recurrence?.RecurrenceDates ?? []).map((t) => momentOfText(t, rules) ?? 0);
  // RDATEs the rule generates anyway are left out: the set is the same (§3.8.5.3), and ical.js lists such an
  // instance twice.
  const rdates = rawRdates.filter((instant) => !generates(instant)).map(shift);
  // Without an RRULE, DTSTART is still the first instance (§3.8.5.2), but ical.js expands only the RDATEs then;
  // and a DTSTART the rule does not match is dropped by ical.js and others. Repeating it as an RDATE changes
  // nothing per §3.8.5.3 (duplicates count once) and keeps those readers right.
  if ((rrule === undefined && rdates.length > 0) || unsynchronized) rdates.push(dtInstant);
  // EXDATEs that remove nothing are left out, as the engine ignores them: ical.js, meeting one, skips the
  // EXDATE after it too when that one names the very next occurrence.
  const rdateSet = new Set(rawRdates);
  const exdates = (recurrence?.ExceptionDates ?? [])
    .map((t) => momentOfText(t, rules) ?? 0)
    .filter((instant) => rdateSet.has(instant) || generates(instant))
    .map(shift);
  return { rdates, exdates, endOf: (instant) => addDuration(rules, instant, duration) };
}

export class CalendarBuilder {
  readonly events: string[] = [];
  readonly zones = new Map<string, ZoneUse>();
  /** The zones (UTC included) whose local days the all-day items' DATEs are. */
  readonly allDayZones = new Set<string>();

  constructor(private readonly dtstamp: string) {}

  /** `identity`: the UID and SEQUENCE lines of the item's VEVENTs (calendarSteps). */
  addItem(scheduleId: string, itemIndex: number, item: ExportItem, identity: readonly string[]): void {
    const facts = itemFacts(itemIndex, item);
    if (facts.allDay) this.allDayZones.add(facts.zone.tzid ?? 'UTC');
    const timing = facts.hasRule
      ? ruleTiming(facts, scheduleId, (duration) =>
          this.addListed(scheduleId, item, identity, facts.series, facts.zone, duration),
        )
      : setTiming(facts);
    if (timing === undefined) return;
    const set = recurrenceSet(facts, timing);
    const use = this.zoneUse(facts.zone, timing.dtInstant);
    const summary = summaryLines(item);
    const overrides = this.overrideLines(facts, timing, set, use, identity, summary, scheduleId);
    this.cover(use, timing, set);
    this.events.push(...this.masterLines(facts, timing, set, identity, summary, scheduleId), ...overrides);
    this.adoptTimed(facts.zone, use);
  }

  /** The VEVENTs of the exceptions that move an occurrence (RECURRENCE-ID); deleted occurrences join the EXDATEs. */
  private overrideLines(
    facts: ItemFacts,
    timing: Timing,
    set: RecurrenceSet,
    use: ZoneUse,
    identity: readonly string[],
    summary: readonly string[],
    scheduleId: string,
  ): string[] {
    const { zone, rules, recurrence, series } = facts;
    const unmatched = new Set(series.unmatchedExceptions);
    const endOf = (instant: number) => addDuration(rules, instant, timing.duration);
    const lines: string[] = [];
    for (const [index, exception] of (recurrence?.Exceptions ?? []).entries()) {
      if (unmatched.has(index)) continue;
      const original = momentOfText(exception.OriginalTime, rules);
      if (original === undefined) continue;
      if (exception.IsDeleted === true) {
        set.exdates.push(original);
        continue;
      }
      const newStart =
        momentOfText(exception.NewStartTime, rules) ?? momentOfText(exception.NewStart, rules) ?? original;
      const newEnd =
        momentOfText(exception.NewEndTime, rules) ??
        momentOfText(exception.NewEnd, rules) ??
        newStart + (endOf(original) - original);
      this.widen(use, Math.min(original, newStart), newEnd);
      lines.push(
        'BEGIN:VEVENT',
        ...identity,
        `DTSTAMP:${this.dtstamp}`,
        zone.property('RECURRENCE-ID', original),
        zone.span(newStart, newEnd).property('DTSTART', newStart),
        ...(newEnd > newStart ? [zone.span(newStart, newEnd).property('DTEND', newEnd)] : []),
        ...summary,
        `X-PLATFORM-SCHEDULE-ID:${scheduleId}`,
        'END:VEVENT',
      );
    }
    return lines;
  }

  /** Widens the zone's use to every instant the VEVENT names, and to the rule's end (or for ever). */
  private cover(use: ZoneUse, timing: Timing, set: RecurrenceSet): void {
    const { rrule, until, dtInstant } = timing;
    for (const instant of [...set.rdates, ...set.exdates]) this.widen(use, instant, instant);
    if (rrule === undefined || (!/COUNT=/.test(rrule) && until === undefined)) {
      if (rrule !== undefined) use.to = Infinity;
    } else if (until !== undefined) {
      this.widen(use, until, until);
    } else {
      // COUNT: the last counted instant is not known without expanding; cover what the listing would reach.
      use.to = Infinity;
    }
    this.widen(use, dtInstant, set.endOf(dtInstant));
    for (const rdate of set.rdates) this.widen(use, rdate, set.endOf(rdate));
  }

  /** The item's own VEVENT: DTSTART, its end, SUMMARY, RRULE, RDATEs and EXDATEs. */
  private masterLines(
    facts: ItemFacts,
    timing: Timing,
    set: RecurrenceSet,
    identity: readonly string[],
    summary: readonly string[],
    scheduleId: string,
  ): string[] {
    const { zone, allDay } = facts;
    const { rrule, dtInstant, dtWall } = timing;
    return [
      'BEGIN:VEVENT',
      ...identity,
      `DTSTAMP:${this.dtstamp}`,
      allDay
        ? zone.property('DTSTART', dtInstant)
        : zone.tzid === undefined
          ? `DTSTART:${formatWall(floorSecond(dtInstant))}Z`
          : zone.wallProperty('DTSTART', dtWall),
      ...this.endLines(zone, dtInstant, timing.duration),
      ...summary,
      ...(rrule !== undefined
        ? [`RRULE:${rrule}`]
        : set.rdates.length === 0 && set.exdates.length > 0
          ? [EMPTY_SET_RULE]
          : []),
      ...zone.listProperties('RDATE', set.rdates),
      ...zone.listProperties('EXDATE', set.exdates),
      `X-PLATFORM-SCHEDULE-ID:${scheduleId}`,
      'END:VEVENT',
    ];
  }

  /**
   * A finite series as DTSTART + RDATEs of its occurrence starts (deleted ones left out, moved ones as
   * RECURRENCE-ID overrides), for an Offset the rule cannot absorb. False when it has more than MAX_LISTED.
   */
  private addListed(
    scheduleId: string,
    item: ExportItem,
    identity: readonly string[],
    series: ReturnType<typeof compileSeries>,
    zone: ItemZone,
    duration: IsoDuration,
  ): boolean {
    const occurrences = series.occurrencesIn(-8.64e15, 8.64e15, MAX_LISTED + 1);
    if (occurrences.length > MAX_LISTED) return false;
    const starts = occurrences.map((o) => o.originalStart).sort((a, b) => a - b);
    // Every occurrence deleted: DTSTART is written and excluded, an empty set (§3.8.5.1).
    const first = starts[0] ?? series.first;
    const use = this.zoneUse(zone, first);
    const summary = summaryLines(item);
    const overrides: string[] = [];
    for (const o of occurrences) {
      this.widen(use, Math.min(o.start, o.originalStart), Math.max(o.end, o.originalStart));
      if (!o.isMoved) continue;
      overrides.push(
        'BEGIN:VEVENT',
        ...identity,
        `DTSTAMP:${this.dtstamp}`,
        zone.property('RECURRENCE-ID', o.originalStart),
        zone.span(o.start, o.end).property('DTSTART', o.start),
        ...(o.end > o.start ? [zone.span(o.start, o.end).property('DTEND', o.end)] : []),
        ...summary,
        `X-PLATFORM-SCHEDULE-ID:${scheduleId}`,
        'END:VEVENT',
      );
    }
    this.events.push(
      'BEGIN:VEVENT',
      ...identity,
      `DTSTAMP:${this.dtstamp}`,
      zone.property('DTSTART', first),
      ...this.endLines(zone, first, duration),
      ...summary,
      // DTSTART repeated as an RDATE, as for any event without RRULE (ical.js expands only the RDATEs then).
      ...zone.listProperties('RDATE', starts.length > 1 ? starts : []),
      ...(starts.length === 0 ? [EMPTY_SET_RULE, ...zone.listProperties('EXDATE', [first])] : []),
      `X-PLATFORM-SCHEDULE-ID:${scheduleId}`,
      'END:VEVENT',
      ...overrides,
    );
    this.adoptTimed(zone, use);
    return true;
  }

  /**
   * An all-day item needs no VTIMEZONE for its DATEs; one with an exception moved to a time of day wrote that
   * one as a TZID date-time, and its zone's VTIMEZONE then covers the item's instants.
   */
  private adoptTimed(zone: ItemZone, use: ZoneUse): void {
    if (!zone.allDay || !zone.wroteTimed || zone.tzid === undefined) return;
    const registered = this.zoneUse(new ItemZone(zone.tzid, zone.rules), use.from);
    this.widen(registered, use.from, use.to);
  }

  /** DTEND for an exact duration (the same exact length for every occurrence, §3.8.5.3), DURATION for days. */
  private endLines(zone: ItemZone, dtInstant: number, duration: IsoDuration): string[] {
    if (zone.allDay && duration.exactMs === 0 && duration.days > 0) {
      // Whole days from a DATE: DTEND;VALUE=DATE, exclusive (§3.6.1), the same number of days for every instance.
      return [`DTEND;VALUE=DATE:${basicDate(localDay(zone.rules, dtInstant) + duration.days)}`];
    }
    if (duration.days === 0 && duration.exactMs <= 0) return [];
    if (duration.days !== 0) return [`DURATION:${formatDuration(duration)}`];
    return [zone.property('DTEND', dtInstant + duration.exactMs)];
  }

  private zoneUse(zone: ItemZone, instant: number): ZoneUse {
    // An all-day item's DATEs need no VTIMEZONE (adoptTimed registers one if it wrote a date-time).
    if (zone.tzid === undefined || zone.allDay) return { rules: zone.rules, from: instant, to: instant };
    let use = this.zones.get(zone.tzid);
    if (!use) {
      use = { rules: zone.rules, from: instant, to: instant };
      this.zones.set(zone.tzid, use);
    }
    return use;
  }

  private widen(use: ZoneUse, from: number, to: number): void {
    if (from < use.from) use.from = from;
    if (to > use.to) use.to = to;
  }
}
