// Window queries over one schedule item's recurrence set (RFC 5545 §3.8.5.3, our DST rules): the RRULE's instances
// and the RDATEs, less the EXDATEs (compared before Offset, as DTSTART-like instants), then Offset and Duration
// applied per occurrence (RFC 5545 §3.3.6 nominal days), exceptions matched by original start instant (like
// RECURRENCE-ID, RFC 5545 §3.8.4.4), and overlap — not start-in-window — as the test. Queries jump to the window
// and stop at the first hit; a COUNT-limited rule counts from DTSTART only as far as queries need and keeps
// that progress, so each occurrence is counted at most once per compiled series.
import { type IsoDuration, addDuration, durationBounds } from './iso-duration.js';
import type { ExpansionRule } from './expansion-rule.js';
import { acquireCursor, releaseCursor, scanCandidates } from './rule-cursor.js';
import type { ZoneRules } from './time-zone.js';

/** One occurrence; all instants are epoch milliseconds (UTC). */
export interface Occurrence {
  readonly start: number;
  readonly end: number;
  /** The start the rule generated (Offset applied), which an exception's OriginalTime names. */
  readonly originalStart: number;
  readonly isMoved: boolean;
}

export interface CompiledSeries {
  /** Whether any occurrence overlaps [windowStart, windowEnd). The hot path: jumps to the window, stops at a hit. */
  hasOccurrenceIn(windowStart: number, windowEnd: number): boolean;
  /** Occurrences overlapping [windowStart, windowEnd), sorted by start, at most `limit` of them. */
  occurrencesIn(windowStart: number, windowEnd: number, limit: number): Occurrence[];
  /** Indexes (into Recurrence.Exceptions) of exceptions whose OriginalTime matches no occurrence. */
  readonly unmatchedExceptions: readonly number[];
  /**
   * For the write-time check that a rule can occur again (BYMONTH=2;BYMONTHDAY=30 never does): whether the rule
   * generates an instant in (after, before]; undefined when the check does not apply (no rule, COUNT=1, UNTIL).
   * Callers scan DTSTART + 400 years × INTERVAL (the Gregorian cycle) in slices, yielding between them.
   */
  generatesBetween(after: number, before: number): boolean | undefined;
  /**
   * True when the rule is known at compile time to generate nothing (its day or time parts name none), whatever its
   * UNTIL or COUNT; COUNT=1 and no rule are single occurrences by intent, so false for them.
   */
  readonly neverRecurs: boolean;
  /** DTSTART (epoch ms) and INTERVAL, for that check. */
  readonly first: number;
  readonly interval: number;
  /**
   * Counts up to `budget` more occurrences of a COUNT rule (resuming where queries left off); true once the last
   * one is known or there is nothing to count. Lets a caller count a long series in slices between which the
   * event loop runs, instead of inside one query.
   */
  countAhead(budget: number): boolean;
}

/** An exception after validation: a deletion, or a move with optional new start and/or end. */
export interface ExceptionSpec {
  readonly index: number;
  readonly originalTime: number;
  readonly isDeleted: boolean;
  readonly newStart: number | undefined;
  readonly newEnd: number | undefined;
}

export function overlaps(start: number, end: number, windowStart: number, windowEnd: number): boolean {
  if (start >= windowEnd) return false;
  return end > windowStart || (end === start && start >= windowStart);
}

interface ExceptionState {
  readonly moved: readonly Occurrence[];
  readonly unmatched: readonly number[];
}

/** RDATE instants (sorted, distinct) and EXDATE instants of a series, all before Offset. */
class SetDates {
  readonly extra: Float64Array;
  readonly excluded: ReadonlySet<number>;

  constructor(recurrenceDates: readonly number[], exceptionDates: readonly number[]) {
    this.extra = Float64Array.from(new Set(recurrenceDates)).sort();
    this.excluded = new Set(exceptionDates);
  }

  /** Index of the first RDATE instant ≥ `from` (binary search). */
  firstFrom(from: number): number {
    let low = 0;
    let high = this.extra.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.extra[middle] < from) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}

/**
 * The compiled form of one schedule item. Immutable from the outside; two lazily computed caches (COUNT progress
 * and the resolved exceptions) are filled on use and never change what a query answers.
 */
export class SeriesImpl implements CompiledSeries {
  private readonly offsetMin: number;
  private readonly offsetMax: number;
  private readonly durationMax: number;
  private readonly exceptionsByOriginal: ReadonlyMap<number, ExceptionSpec> | undefined;
  /** RDATE and EXDATE; undefined for most series, whose queries then take the path they took before. */
  private readonly dates: SetDates | undefined;
  private countEnd: number | undefined;
  /** COUNT progress: `counted` occurrences lie at or before `countedTo`. */
  private countedTo = -Infinity;
  private counted = 0;
  private exceptionState: ExceptionState | undefined;

  /** `rule` undefined means a single occurrence at `firstInstant`. */
  constructor(
    private readonly zone: ZoneRules,
    private readonly rule: ExpansionRule | undefined,
    private readonly firstInstant: number,
    private readonly offset: IsoDuration,
    private readonly duration: IsoDuration,
    private readonly exceptions: readonly ExceptionSpec[],
    recurrenceDates: readonly number[] = [],
    exceptionDates: readonly number[] = [],
  ) {
    this.dates =
      recurrenceDates.length === 0 && exceptionDates.length === 0
        ? undefined
        : new SetDates(recurrenceDates, exceptionDates);
    const offsetBounds = durationBounds(offset);
    this.offsetMin = offsetBounds.min;
    this.offsetMax = offsetBounds.max;
    this.durationMax = durationBounds(duration).max;
    this.exceptionsByOriginal =
      exceptions.length === 0 ? undefined : new Map(exceptions.map((e) => [e.originalTime, e]));
  }

  get first(): number {
    return this.firstInstant;
  }

  get interval(): number {
    return this.rule?.interval ?? 1;
  }

  get neverRecurs(): boolean {
    const rule = this.rule;
    return rule !== undefined && rule.count !== 1 && rule.neverMatches;
  }

  generatesBetween(after: number, before: number): boolean | undefined {
    const rule = this.rule;
    if (!rule || rule.count === 1 || rule.untilInstant !== Infinity) return undefined;
    const cursor = acquireCursor();
    try {
      cursor.start(rule, after + 1, before);
      return cursor.next() !== Infinity;
    } finally {
      releaseCursor(cursor);
    }
  }

  countAhead(budget: number): boolean {
    const rule = this.rule;
    if (!rule || rule.count === 0 || this.countEnd !== undefined || this.countedTo === Infinity) return true;
    const cursor = acquireCursor();
    try {
      cursor.start(rule, this.countedTo === -Infinity ? -Infinity : this.countedTo + 1, Infinity);
      for (let i = 0; i < budget; i++) {
        const g = cursor.next();
        if (g === Infinity) {
          this.countedTo = Infinity;
          return true;
        }
        this.counted++;
        this.countedTo = g;
        if (this.counted === rule.count) {
          this.countEnd = g;
          return true;
        }
      }
      return false;
    } finally {
      releaseCursor(cursor);
    }
  }

  get unmatchedExceptions(): readonly number[] {
    return this.resolveExceptions().unmatched;
  }

  hasOccurrenceIn(windowStart: number, windowEnd: number): boolean {
    if (!(windowEnd > windowStart)) return false;
    if (this.exceptionsByOriginal) {
      for (const moved of this.resolveExceptions().moved) {
        if (overlaps(moved.start, moved.end, windowStart, windowEnd)) return true;
      }
    }
    const from = windowStart - this.durationMax - this.offsetMax;
    const to = windowEnd - this.offsetMin;
    if (this.dates) return this.hasOccurrenceWithDates(this.dates, from, to, windowStart, windowEnd);
    if (!this.rule) return this.regularOverlaps(this.firstInstant, windowStart, windowEnd);
    const limit = this.scanLimit(to);
    const quick = scanCandidates(this.rule, from, limit, (g) =>
      this.regularOverlaps(g, windowStart, windowEnd),
    );
    if (quick !== undefined) return quick;
    const cursor = acquireCursor();
    try {
      cursor.start(this.rule, from, limit);
      for (let g = cursor.next(); g <= to; g = cursor.next()) {
        if (this.regularOverlaps(g, windowStart, windowEnd)) return true;
      }
      return false;
    } finally {
      releaseCursor(cursor);
    }
  }

  /** hasOccurrenceIn for a series with RDATE/EXDATE: the same walk, EXDATEs skipped, then the RDATEs. */
  private hasOccurrenceWithDates(
    dates: SetDates,
    from: number,
    to: number,
    windowStart: number,
    windowEnd: number,
  ): boolean {
    const test = (g: number) => !dates.excluded.has(g) && this.regularOverlaps(g, windowStart, windowEnd);
    for (let i = dates.firstFrom(from); i < dates.extra.length && dates.extra[i] <= to; i++) {
      if (test(dates.extra[i])) return true;
    }
    if (!this.rule) return test(this.firstInstant);
    const cursor = acquireCursor();
    try {
      cursor.start(this.rule, from, this.scanLimit(to));
      for (let g = cursor.next(); g <= to; g = cursor.next()) if (test(g)) return true;
      return false;
    } finally {
      releaseCursor(cursor);
    }
  }

  occurrencesIn(windowStart: number, windowEnd: number, limit: number): Occurrence[] {
    const result: Occurrence[] = [];
    if (!(windowEnd > windowStart) || limit <= 0) return result;
    const from = windowStart - this.durationMax - this.offsetMax;
    const to = windowEnd - this.offsetMin;
    if (!this.rule) {
      this.collect(this.firstInstant, windowStart, windowEnd, result);
    } else {
      const cursor = acquireCursor();
      try {
        cursor.start(this.rule, from, this.scanLimit(to));
        let latestStart = -Infinity;
        for (let g = cursor.next(); g <= to; g = cursor.next()) {
          // Past `limit`, keep going only while a nominal-day Offset could still yield an earlier start.
          if (result.length >= limit && g + this.offsetMin >= latestStart) break;
          const occurrence = this.collect(g, windowStart, windowEnd, result);
          if (occurrence && occurrence.start > latestStart) latestStart = occurrence.start;
        }
      } finally {
        releaseCursor(cursor);
      }
    }
    const dates = this.dates;
    if (dates) {
      for (let i = dates.firstFrom(from); i < dates.extra.length && dates.extra[i] <= to; i++) {
        this.collect(dates.extra[i], windowStart, windowEnd, result);
      }
    }
    if (this.exceptionsByOriginal) {
      for (const moved of this.resolveExceptions().moved) {
        if (overlaps(moved.start, moved.end, windowStart, windowEnd)) result.push(moved);
      }
    }
    result.sort((a, b) => a.start - b.start || a.originalStart - b.originalStart);
    const unique = result.filter(
      (o, i) => i === 0 || o.isMoved || o.originalStart !== result[i - 1].originalStart,
    );
    return unique.length > limit ? unique.slice(0, limit) : unique;
  }

  /** Start of the occurrence generated at instant g (Offset applied). */
  private startOf(g: number): number {
    return this.offset.days === 0 ? g + this.offset.exactMs : addDuration(this.zone, g, this.offset);
  }

  private endOf(start: number): number {
    return this.duration.days === 0
      ? start + this.duration.exactMs
      : addDuration(this.zone, start, this.duration);
  }

  private regularOverlaps(g: number, windowStart: number, windowEnd: number): boolean {
    const start = this.startOf(g);
    if (!overlaps(start, this.endOf(start), windowStart, windowEnd)) return false;
    return !this.exceptionsByOriginal?.has(start);
  }

  private collect(
    g: number,
    windowStart: number,
    windowEnd: number,
    into: Occurrence[],
  ): Occurrence | undefined {
    if (this.dates?.excluded.has(g)) return undefined;
    const start = this.startOf(g);
    const end = this.endOf(start);
    if (!overlaps(start, end, windowStart, windowEnd) || this.exceptionsByOriginal?.has(start))
      return undefined;
    const occurrence: Occurrence = { start, end, originalStart: start, isMoved: false };
    into.push(occurrence);
    return occurrence;
  }

  /**
   * The last generated instant worth scanning to: `to`, capped by the COUNT-th occurrence. COUNT needs the
   * occurrences from DTSTART counted, so the count is walked once, only as far as a query needs it (up to its
   * `to`, or to the COUNT-th occurrence, whichever comes first), and the progress is kept: later queries resume
   * it, and once the COUNT-th instant is known COUNT costs nothing more.
   */
  private scanLimit(to: number): number {
    const rule = this.rule;
    if (!rule || rule.count === 0) return to;
    if (this.countEnd !== undefined) return Math.min(to, this.countEnd);
    if (to <= this.countedTo) return to;
    const cursor = acquireCursor();
    try {
      cursor.start(rule, this.countedTo === -Infinity ? -Infinity : this.countedTo + 1, to);
      for (let g = cursor.next(); g !== Infinity; g = cursor.next()) {
        this.counted++;
        if (this.counted === rule.count) {
          this.countEnd = g;
          return Math.min(to, g);
        }
      }
      this.countedTo = to;
      return to;
    } finally {
      releaseCursor(cursor);
    }
  }

  /** Whether `start` (Offset applied) is the start of an original occurrence; returns its end if so. */
  private originalEnd(start: number): number | undefined {
    const from = start - this.offsetMax;
    const to = start - this.offsetMin;
    const dates = this.dates;
    const generates = (g: number) => this.startOf(g) === start && !dates?.excluded.has(g);
    if (dates) {
      for (let i = dates.firstFrom(from); i < dates.extra.length && dates.extra[i] <= to; i++) {
        if (generates(dates.extra[i])) return this.endOf(start);
      }
    }
    const rule = this.rule;
    if (!rule) return generates(this.firstInstant) ? this.endOf(start) : undefined;
    const cursor = acquireCursor();
    try {
      cursor.start(rule, from, this.scanLimit(to));
      for (let g = cursor.next(); g <= to; g = cursor.next()) {
        if (generates(g)) return this.endOf(start);
      }
      return undefined;
    } finally {
      releaseCursor(cursor);
    }
  }

  private resolveExceptions(): ExceptionState {
    if (this.exceptionState) return this.exceptionState;
    const moved: Occurrence[] = [];
    const unmatched: number[] = [];
    for (const e of this.exceptions) {
      const originalEnd = this.originalEnd(e.originalTime);
      if (originalEnd === undefined) {
        unmatched.push(e.index);
        continue;
      }
      if (e.isDeleted) continue;
      const start = e.newStart ?? e.originalTime;
      // Only a new start given: the occurrence keeps its length.
      const end = e.newEnd ?? start + (originalEnd - e.originalTime);
      moved.push({ start, end: Math.max(end, start), originalStart: e.originalTime, isMoved: true });
    }
    moved.sort((a, b) => a.start - b.start);
    this.exceptionState = { moved, unmatched };
    return this.exceptionState;
  }
}
