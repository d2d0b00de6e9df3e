// The import's items stage: one series (a VEVENT master and its overrides) becomes one schedule item; each field
// is noted with the line it came from so the DTO's and the engine's errors can name the line.
import { MS_PER_DAY, daysFromCivil, daysInMonth } from '../recurrence/calendar.js';
import { parseDuration } from '../recurrence/iso-duration.js';
import { zoneRules } from '../recurrence/time-zone.js';
import { paramOf, textOf, type IcalComponent, type IcalProperty } from './ical-content.js';
import {
  refuse,
  type IcalProblem,
  type ImportedException,
  type ImportedItem,
  type ImportedRecurrence,
  type ImportReport,
  type LineRef,
} from './ical-import-report.js';
import type { SeriesCollector } from './ical-import-series.js';
import { formatIn, formatWall, type IcalTime, type TimeReader, type Timing } from './ical-import-times.js';

/** The DTO's limit on Exceptions, RecurrenceDates and ExceptionDates per item. */
const MAX_LIST = 1_001;
const FREQUENCIES = ['SECONDLY', 'MINUTELY', 'HOURLY', 'DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY'];

export class ItemBuilder {
  /** Notes of the item being built, kept only if it is built. */
  pendingLines = new Map<string, LineRef>();

  constructor(
    private readonly report: ImportReport,
    private readonly times: TimeReader,
    private readonly series: SeriesCollector,
  ) {}

  note(field: string, at: IcalProperty | IcalComponent): void {
    this.pendingLines.set(field, { line: at.line, property: at.name });
  }

  buildItem(
    index: number,
    event: IcalComponent,
    uid: string,
    overrides: IcalComponent[],
    orphan: boolean,
  ): ImportedItem {
    const path = `ScheduleItems[${index}]`;
    this.note(path, event);
    const props = propertiesByName(event);
    for (const name of ['DTSTART', 'DTEND', 'DURATION', 'RRULE', 'STATUS']) {
      const list = props.get(name) ?? [];
      if (list.length > 1) {
        refuse(
          list[1],
          name === 'RRULE'
            ? `more than one RRULE in a VEVENT (first at line ${list[0].line}) cannot be represented; a schedule ` +
                'item has one rule (merge them or split the event)'
            : `appears more than once in this VEVENT (first at line ${list[0].line})`,
        );
      }
    }
    const exrule = props.get('EXRULE')?.[0];
    if (exrule !== undefined) {
      refuse(
        exrule,
        'EXRULE (deprecated by RFC 5545) cannot be represented; list the removed starts as EXDATE',
      );
    }
    const status = props.get('STATUS')?.[0];
    if (status !== undefined && status.raw.trim().toUpperCase() === 'CANCELLED') {
      refuse(status, 'a cancelled event (STATUS:CANCELLED) has no occurrences to schedule');
    }
    if (orphan) {
      const range = props.get('RECURRENCE-ID')?.[0];
      if (range !== undefined) this.refuseRange(range);
    }

    const timing = this.timingOf(event, props, uid);
    const zone = timing.zone;
    const summary = props.get('SUMMARY')?.[0];
    if (summary !== undefined) this.note(`${path}.Name`, summary);
    this.note(`${path}.Start`, timing.startProperty);
    this.note(`${path}.StartTimeZone`, timing.startProperty);
    this.note(`${path}.Recurrence.StartTime`, timing.startProperty);
    this.note(`${path}.End`, timing.endProperty ?? timing.startProperty);
    this.note(`${path}.Recurrence.Duration`, timing.endProperty ?? timing.startProperty);

    const recurrence: ImportedRecurrence = {};
    const rrule = props.get('RRULE')?.[0];
    if (rrule !== undefined) {
      this.note(`${path}.Recurrence`, rrule);
      this.note(`${path}.Recurrence.Pattern`, rrule);
      for (const simple of ['RecurrenceType', 'Interval', 'EndCount', 'EndTime']) {
        this.note(`${path}.Recurrence.${simple}`, rrule);
      }
      const written = rrule.raw.trim();
      // §3.3.10 wants UNTIL in DTSTART's value type; lenient readers take a date UNTIL on a timed series as that
      // whole day (ical.js, node-ical, Google), so it becomes the last second of that day in the series' zone.
      const pattern = timing.start.kind === 'date' ? written : untilAtEndOfDay(written, timing.zone);
      recurrence.Pattern = pattern;
      const freq = /(?:^|;)FREQ=([A-Z]+)/i.exec(pattern)?.[1]?.toUpperCase();
      if (freq !== undefined && FREQUENCIES.includes(freq)) {
        recurrence.RecurrenceType = freq.charAt(0) + freq.slice(1).toLowerCase();
      }
      recurrence.Interval = /(?:^|;)INTERVAL=(\d{1,9})(?:;|$)/i.exec(pattern)?.[1] ?? '1';
    }
    const periods: PeriodOfItsOwn[] = [];
    const recurrenceDates = this.dateList(path, 'RecurrenceDates', props.get('RDATE') ?? [], timing, periods);
    if (recurrenceDates.length > 0) recurrence.RecurrenceDates = recurrenceDates;
    const exceptionDates = this.dateList(path, 'ExceptionDates', props.get('EXDATE') ?? [], timing);
    if (exceptionDates.length > 0) recurrence.ExceptionDates = exceptionDates;
    const exceptions: ImportedException[] = [];
    if (overrides.length > 0) {
      // The DTO names the list when it is too long: point at the first override over its 1,000.
      this.note(`${path}.Recurrence.Exceptions`, overrides[Math.min(overrides.length, MAX_LIST) - 1]);
    }
    for (const override of this.series.latestVersions(overrides, timing, uid)) {
      // A broken override is skipped alone; the series and its other overrides are imported.
      const exception = this.report.skipOnRefusal(override, uid, () =>
        this.exceptionOf(path, exceptions.length, override, timing, uid),
      );
      if (exception !== undefined && exception !== null) exceptions.push(exception);
    }
    this.periodExceptions(path, periods, exceptions, timing, uid);
    if (exceptions.length > 0) recurrence.Exceptions = exceptions;
    const recurs = rrule !== undefined || recurrenceDates.length > 0;
    if (recurs && timing.durationText !== undefined) recurrence.Duration = timing.durationText;
    const wall = timing.start.wallMs;
    if (recurs && timing.start.kind !== 'utc' && zoneRules(zone).wallOf(timing.startInstant) !== wall) {
      // DTSTART in a DST gap: the rule keeps its clock reading for the other occurrences (RFC 5545 §3.3.10).
      recurrence.StartTime = formatWall(wall);
    }
    return {
      Name: summary === undefined ? null : this.nameOf(props.get('SUMMARY')!, uid),
      Start: formatIn(timing.startInstant, zone),
      End: formatIn(timing.endInstant, zone),
      StartTimeZone: zone,
      // A DATE event is stored all-day (whole local days of the floating zone); one whose DTEND is its DTSTART
      // lasts no day and stays a zero-length item at midnight.
      ...(timing.start.kind === 'date' && timing.endInstant > timing.startInstant
        ? { AllDay: true as const }
        : {}),
      Recurrence: Object.keys(recurrence).length === 0 ? null : recurrence,
    };
  }

  /**
   * The first SUMMARY as the item's Name; one over the DTO's limit is cut with `…` (lenient readers show it whole, so the
   * event is kept) and the cut is reported.
   */
  private nameOf(summaries: IcalProperty[], uid: string): string {
    const [summary, ...repeated] = summaries;
    // A second SUMMARY (lenient readers show one of them) is left out and reported; the first is the Name.
    for (const extra of repeated) {
      this.report.skipLine(uid, {
        line: extra.line,
        property: extra.name,
        message: `appears more than once in this VEVENT (first at line ${summary.line}): left out, the first is the Name`,
      });
    }
    const text = textOf(summary);
    if (text.length <= MAX_NAME) return text;
    this.report.skipLine(uid, {
      line: summary.line,
      property: summary.name,
      message:
        `${text.length} characters, over the ${MAX_NAME} a Name may have: cut to ${MAX_NAME} (ending in …); ` +
        'the event is imported',
    });
    return cutTo(text, MAX_NAME);
  }

  /**
   * Start, end, zone and (for recurring items) the per-occurrence duration of a VEVENT. A DTEND read leniently is
   * reported under `uid` (the event is kept).
   */
  timingOf(event: IcalComponent, props: Map<string, IcalProperty[]>, uid: string): Timing {
    const startProperty = props.get('DTSTART')?.[0];
    if (startProperty === undefined) refuse(event, 'a VEVENT without DTSTART');
    const start = this.times.singleTime(startProperty);
    const zone =
      start.kind === 'zoned' ? start.zone! : start.kind === 'utc' ? 'UTC' : this.times.floatingZone(start);
    const startInstant = this.times.instantOf(start);
    const endProperty = props.get('DTEND')?.[0];
    const durationProperty = props.get('DURATION')?.[0];
    if (endProperty !== undefined && durationProperty !== undefined) {
      refuse(durationProperty, `a VEVENT may have DTEND (line ${endProperty.line}) or DURATION, not both`);
    }
    const { endInstant, durationText, note } = this.endOf(
      start,
      startInstant,
      zone,
      endProperty,
      durationProperty,
    );
    if (note !== undefined) this.report.skipLine(uid, note);
    return {
      start,
      startInstant,
      startProperty,
      zone,
      endInstant,
      endProperty: endProperty ?? durationProperty,
      durationText,
    };
  }

  endOf(
    start: IcalTime,
    startInstant: number,
    zone: string,
    endProperty: IcalProperty | undefined,
    durationProperty: IcalProperty | undefined,
  ): { endInstant: number; durationText: string | undefined; note?: IcalProblem } {
    const allDay = start.kind === 'date';
    if (endProperty !== undefined) {
      const end = this.times.singleTime(endProperty);
      if (allDay && end.kind !== 'date') return this.dateTimeEndOfDate(start, zone, end, endProperty);
      if (start.kind === 'zoned' && end.kind === 'floating')
        return this.floatingEndOfZoned(zone, startInstant, end, endProperty);
      if (end.kind === 'date' && !allDay) refuse(endProperty, 'must be a date-time like DTSTART, not a date');
      const endInstant = this.times.instantOf(end);
      if (endInstant < startInstant) refuse(endProperty, 'is before DTSTART');
      // All-day events last whole days, also across a DST change.
      const durationText = allDay ? `P${Math.round((end.wallMs - start.wallMs) / MS_PER_DAY)}D` : undefined;
      return { endInstant, durationText };
    }
    if (durationProperty !== undefined) {
      const text = durationProperty.raw.trim();
      const parsed = parseDuration(text);
      if (!parsed.ok) refuse(durationProperty, parsed.reason);
      if (parsed.value.days < 0 || parsed.value.exactMs < 0) refuse(durationProperty, 'must not be negative');
      let { days, exactMs } = parsed.value;
      let durationText = text.toUpperCase();
      if (allDay && exactMs !== 0) {
        // Google exports all-day events with `DURATION:PT86400S`: a multiple of 24 hours on a date is whole days.
        if (exactMs % MS_PER_DAY !== 0) {
          refuse(
            durationProperty,
            'must be whole days or weeks (P1D, P1W) when DTSTART is a date (RFC 5545 §3.8.2.5: dur-day or dur-week)',
          );
        }
        days += exactMs / MS_PER_DAY;
        exactMs = 0;
        durationText = `P${days}D`;
      }
      const rules = zoneRules(zone);
      const endInstant = rules.instantOf(rules.wallOf(startInstant) + days * MS_PER_DAY) + exactMs;
      return { endInstant, durationText };
    }
    // RFC 5545 §3.6.1: no DTEND and no DURATION is one day for a date, no time at all for a date-time.
    if (allDay) {
      const rules = zoneRules(zone);
      return { endInstant: rules.instantOf(start.wallMs + MS_PER_DAY), durationText: 'P1D' };
    }
    return { endInstant: startInstant, durationText: undefined };
  }

  /**
   * A floating DTEND beside a DTSTART with TZID (Mozilla Calendar 1.x wrote `DTSTART;TZID=…:…T090000` and
   * `DTEND:…T100000`). Read in the floating zone it could end before it starts; its writer meant the wall time in
   * DTSTART's zone, so it is read there and the reading is reported.
   */
  private floatingEndOfZoned(
    zone: string,
    startInstant: number,
    end: IcalTime,
    endProperty: IcalProperty,
  ): { endInstant: number; durationText: undefined; note: IcalProblem } {
    const endInstant = zoneRules(zone).instantOf(end.wallMs);
    if (endInstant < startInstant) refuse(endProperty, `is before DTSTART (both read in ${zone})`);
    return {
      endInstant,
      durationText: undefined,
      note: {
        line: endProperty.line,
        property: endProperty.name,
        message:
          `a floating time beside a DTSTART with TZID (RFC 5545 §3.3.5 reads it in no zone): read as ` +
          `${formatWall(end.wallMs).replace('T', ' ')} in DTSTART's zone ${zone}; the event is imported`,
      },
    };
  }

  /**
   * An all-day DTSTART with a date-time DTEND (`DTEND:20020106T235900Z` in Mozilla's holiday feeds). RFC 5545
   * §3.8.2.2 asks for the same value type; ical.js, Google and Apple show such an event all-day. It is read as
   * ending with the day its date-time falls on, as written (midnight ends the day before it), and reported.
   */
  private dateTimeEndOfDate(
    start: IcalTime,
    zone: string,
    end: IcalTime,
    endProperty: IcalProperty,
  ): { endInstant: number; durationText: string; note: IcalProblem } {
    const endWall = Math.ceil(end.wallMs / MS_PER_DAY) * MS_PER_DAY;
    if (end.wallMs < start.wallMs) refuse(endProperty, 'is before DTSTART');
    const date = new Date(endWall).toISOString().slice(0, 10).replaceAll('-', '');
    return {
      endInstant: zoneRules(zone).instantOf(endWall),
      durationText: `P${Math.round((endWall - start.wallMs) / MS_PER_DAY)}D`,
      note: {
        line: endProperty.line,
        property: endProperty.name,
        message:
          `a date-time where DTSTART is a date (RFC 5545 §3.8.2.2: the same value type): read as ` +
          `DTEND;VALUE=DATE:${date}, the end of the day it falls on; the event is imported all-day`,
      },
    };
  }

  /** RDATE or EXDATE lines (several lines, comma lists) as entries of the series, each noted with its line. */
  dateList(
    path: string,
    field: 'RecurrenceDates' | 'ExceptionDates',
    properties: IcalProperty[],
    timing: Timing,
    periods?: PeriodOfItsOwn[],
  ): string[] {
    const entries: string[] = [];
    for (const property of properties) {
      if (property.type === 'period' && periods !== undefined) {
        // `RDATE;VALUE=PERIOD` (Lotus Notes writes every instance so): each period's start is an occurrence; one
        // of another length than the item's is kept for `buildItem` to give it its own end.
        if (entries.length === 0) this.note(`${path}.Recurrence.${field}`, property);
        for (const { start, endInstant } of this.times.periodsOf(property)) {
          this.note(`${path}.Recurrence.${field}[${entries.length}]`, property);
          if (entries.length + 1 === MAX_LIST) this.note(`${path}.Recurrence.${field}`, property);
          const instant = this.times.seriesInstant(start, property, timing);
          entries.push(formatIn(instant, timing.zone));
          const length = endInstant - this.times.instantOf(start);
          if (length !== timing.endInstant - timing.startInstant) periods.push({ instant, length, property });
        }
        continue;
      }
      if (property.type === 'period') {
        refuse(
          property,
          'VALUE=PERIOD cannot be represented: every occurrence of an item lasts the item’s duration; ' +
            'give start times only',
        );
      }
      if (entries.length === 0) this.note(`${path}.Recurrence.${field}`, property);
      // The line's first entry only (lineOf finds the others from it): a note per value cost more than the value.
      this.note(`${path}.Recurrence.${field}[${entries.length}]`, property);
      for (const time of this.times.timesOf(property)) {
        if (entries.length + 1 === MAX_LIST) this.note(`${path}.Recurrence.${field}`, property);
        entries.push(formatIn(this.times.seriesInstant(time, property, timing), timing.zone));
      }
    }
    return entries;
  }

  /**
   * RDATE periods of another length than the item's: on a timed item each keeps its length as an exception that
   * gives that occurrence its own end (unless an override already changes it); on an all-day item the date is an
   * occurrence of the item's days and the period's length is reported as not kept.
   */
  private periodExceptions(
    path: string,
    periods: readonly PeriodOfItsOwn[],
    exceptions: ImportedException[],
    timing: Timing,
    uid: string,
  ): void {
    const changed = new Set(exceptions.map((exception) => exception.OriginalTime));
    for (const { instant, length, property } of periods) {
      const original = formatIn(instant, timing.zone);
      if (changed.has(original)) continue;
      changed.add(original);
      if (timing.start.kind === 'date') {
        this.report.skipLine(uid, {
          line: property.line,
          property: property.name,
          message:
            `the period starting ${original} lasts ${length / 60_000} minutes; on an all-day event it is read as ` +
            'that date, lasting the event’s days',
        });
        continue;
      }
      this.noteException(
        `${path}.Recurrence.Exceptions[${exceptions.length}]`,
        property,
        property,
        property,
        property,
      );
      exceptions.push({
        OriginalTime: original,
        NewStartTime: original,
        NewEndTime: formatIn(instant + length, timing.zone),
      });
    }
  }

  /** A RECURRENCE-ID override as an exception; null when it changes neither start nor end. */
  exceptionOf(
    path: string,
    index: number,
    override: IcalComponent,
    timing: Timing,
    uid: string,
  ): ImportedException | null {
    const props = propertiesByName(override);
    const recurrenceId = props.get('RECURRENCE-ID')![0];
    this.refuseRange(recurrenceId);
    for (const name of ['RRULE', 'RDATE', 'EXDATE', 'EXRULE']) {
      const line = props.get(name)?.[0];
      if (line !== undefined) {
        refuse(
          line,
          `an override (RECURRENCE-ID, line ${recurrenceId.line}) with its own ${name} cannot be represented; ` +
            'only the series (the VEVENT without RECURRENCE-ID) may recur',
        );
      }
    }
    const original = this.times.seriesInstant(this.times.singleTime(recurrenceId), recurrenceId, timing);
    const at = `${path}.Recurrence.Exceptions[${index}]`;
    const status = props.get('STATUS')?.[0];
    if (status !== undefined && status.raw.trim().toUpperCase() === 'CANCELLED') {
      this.noteException(at, override, recurrenceId, status, status);
      return { OriginalTime: formatIn(original, timing.zone), IsDeleted: true };
    }
    const overrideTiming = this.timingOf(override, props, uid);
    if (
      overrideTiming.startInstant === original &&
      overrideTiming.endInstant - overrideTiming.startInstant === timing.endInstant - timing.startInstant
    ) {
      return null;
    }
    this.noteException(
      at,
      override,
      recurrenceId,
      overrideTiming.startProperty,
      overrideTiming.endProperty ?? overrideTiming.startProperty,
    );
    return {
      OriginalTime: formatIn(original, timing.zone),
      NewStartTime: formatIn(overrideTiming.startInstant, timing.zone),
      NewEndTime: formatIn(overrideTiming.endInstant, timing.zone),
    };
  }

  noteException(
    at: string,
    override: IcalComponent | IcalProperty,
    recurrenceId: IcalProperty,
    start: IcalProperty,
    end: IcalProperty,
  ): void {
    this.note(at, override);
    this.note(`${at}.OriginalTime`, recurrenceId);
    this.note(`${at}.IsDeleted`, start);
    this.note(`${at}.NewStartTime`, start);
    this.note(`${at}.NewStart`, start);
    this.note(`${at}.NewEndTime`, end);
    this.note(`${at}.NewEnd`, end);
  }

  refuseRange(recurrenceId: IcalProperty): void {
    const range = paramOf(recurrenceId, 'range');
    if (range !== undefined && range.toUpperCase() === 'THISANDFUTURE') {
      refuse(
        recurrenceId,
        'RANGE=THISANDFUTURE cannot be represented: an exception changes one occurrence; split the series ' +
          'into two events instead',
      );
    }
  }
}

/** An RDATE period whose length differs from the item's (ms), at its occurrence's start. */
interface PeriodOfItsOwn {
  readonly instant: number;
  readonly length: number;
  readonly property: IcalProperty;
}

/** The DTO's limit on Name (`ScheduleItemInput.Name`, `@MaxLength(500)`). */
const MAX_NAME = 500;

/** The text cut to at most `limit` UTF-16 units, `…` included, never inside a surrogate pair. */
function cutTo(text: string, limit: number): string {
  let cut = limit - 1;
  const last = text.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut--;
  return `${text.slice(0, cut)}…`;
}

const DATE_UNTIL = /(^|;)UNTIL=(\d{4})(\d{2})(\d{2})(?=;|$)/i;

/** `UNTIL=20260110` → `UNTIL=20260110T225959Z` (in Europe/Berlin): the end of that local day, in UTC. */
function untilAtEndOfDay(pattern: string, zone: string): string {
  return pattern.replace(DATE_UNTIL, (whole, lead: string, year: string, month: string, day: string) => {
    // An impossible date stays as written, for the engine to name.
    if (Number(year) < 1 || Number(month) < 1 || Number(month) > 12 || Number(day) < 1) return whole;
    if (Number(day) > daysInMonth(Number(year), Number(month))) return whole;
    const nextMidnight = (daysFromCivil(Number(year), Number(month), Number(day)) + 1) * MS_PER_DAY;
    const last = zoneRules(zone).instantOf(nextMidnight) - 1000;
    return `${lead}UNTIL=${new Date(last).toISOString().slice(0, 19).replace(/[-:]/g, '')}Z`;
  });
}

function propertiesByName(component: IcalComponent): Map<string, IcalProperty[]> {
  const byName = new Map<string, IcalProperty[]>();
  for (const property of component.properties) {
    const list = byName.get(property.name);
    if (list === undefined) byName.set(property.name, [property]);
    else list.push(property);
  }
  return byName;
}
