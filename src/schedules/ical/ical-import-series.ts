// The import's series stage: VEVENTs grouped per UID into series (a master and its overrides), versions of one
// component reduced to the newest (RFC 5546 §2.1.4), the others reported as skipped.
import { paramOf, type IcalComponent } from './ical-content.js';
import { Refusal, type ImportReport } from './ical-import-report.js';
import type { TimeReader, Timing } from './ical-import-times.js';
import {
  compareVersions,
  derivedUid,
  isVersionOf,
  scheduleIdOf,
  sequenceOf,
  uidOf,
  writtenStart,
} from './ical-versions.js';

export interface EventEntry {
  event: IcalComponent;
  uid: string;
  key: string;
  overrides: IcalComponent[];
  orphan: boolean;
  /** One of several series with this UID: its key names its start too (the import normalises it once read). */
  shared: boolean;
  /** The schedule id this service's export wrote on it (`X-PLATFORM-SCHEDULE-ID`). */
  scheduleId: string | undefined;
}

export class SeriesCollector {
  constructor(
    private readonly report: ImportReport,
    private readonly times: TimeReader,
  ) {}

  /**
   * The events to build, in the order each first appears: per UID its masters (VEVENTs without RECURRENCE-ID) with
   * the overrides, or — when the file has no master for the UID (an invitation to some instances only) — each
   * override as an event of its own. Versions of one component are reduced to the winner (`newer`); the others are
   * reported as skipped. Two masters with one UID are versions of each other when their SEQUENCE differs (a revision,
   * RFC 5546 §2.1.4) or when their DTSTART is the same (a copy or an edit that did not move it); otherwise they are
   * different events that a feed gave one UID, and each is imported (overrides go with the master of the schedule
   * whose id the export wrote on both, else with the first); see `isVersionOf`.
   */
  entriesOf(events: IcalComponent[]): EventEntry[] {
    const groups = new Map<string, { masters: IcalComponent[]; overrides: Map<string, IcalComponent> }>();
    for (const event of events) {
      const uid = uidOf(event) ?? derivedUid(event);
      let group = groups.get(uid);
      if (group === undefined) {
        group = { masters: [], overrides: new Map() };
        groups.set(uid, group);
      }
      const recurrenceId = event.properties.find((property) => property.name === 'RECURRENCE-ID');
      if (recurrenceId !== undefined) {
        // Overrides of two exported schedules that share a UID may name one occurrence: the schedule id keeps them apart.
        const key = `${scheduleIdOf(event) ?? ''}|${paramOf(recurrenceId, 'tzid') ?? ''}|${recurrenceId.raw.trim().toUpperCase()}`;
        const other = group.overrides.get(key);
        group.overrides.set(key, other === undefined ? event : this.newerOf(other, event, uid));
        continue;
      }
      const at = group.masters.findIndex((master) => isVersionOf(master, event));
      if (at >= 0) {
        group.masters[at] = this.newerOf(group.masters[at], event, uid);
        continue;
      }
      const parallel = group.masters.find(
        (master) => writtenStart(master) === writtenStart(event) && scheduleIdOf(master) === undefined,
      );
      if (parallel !== undefined) {
        this.report.skipLine(uid, {
          line: event.line,
          property: event.name,
          message:
            `shares its UID and DTSTART with the VEVENT at line ${parallel.line} (same SEQUENCE and DTSTAMP) but ` +
            'has another SUMMARY or LOCATION: a parallel event, imported as a series of its own',
        });
      }
      group.masters.push(event);
    }
    const entries: EventEntry[] = [];
    for (const [uid, group] of groups) {
      const overrides = [...group.overrides.values()].sort((a, b) => a.line - b.line);
      const several = group.masters.length > 1 || (group.masters.length === 0 && overrides.length > 1);
      const keyOf = (event: IcalComponent, property: string): string => {
        if (!several) return uid;
        const start = event.properties.find((candidate) => candidate.name === property);
        return start === undefined
          ? `${uid}\n${event.line}`
          : `${uid}\n${paramOf(start, 'tzid') ?? ''}|${start.raw.trim().toUpperCase()}`;
      };
      if (group.masters.length === 0) {
        for (const event of overrides) {
          entries.push({
            event,
            uid,
            key: keyOf(event, 'RECURRENCE-ID'),
            overrides: [],
            orphan: true,
            shared: several,
            scheduleId: scheduleIdOf(event),
          });
        }
        continue;
      }
      // Overrides go with the master of their schedule (the export writes its id on both), else with the first.
      const ids = group.masters.map(scheduleIdOf);
      const ownerOf = (override: IcalComponent): number => {
        const id = scheduleIdOf(override);
        const at = id === undefined ? -1 : ids.indexOf(id);
        return at < 0 ? 0 : at;
      };
      group.masters.forEach((event, index) =>
        entries.push({
          event,
          uid,
          key: keyOf(event, 'DTSTART'),
          overrides: overrides.filter((override) => ownerOf(override) === index),
          orphan: false,
          shared: several,
          scheduleId: ids[index],
        }),
      );
    }
    return entries.sort((a, b) => a.event.line - b.event.line);
  }

  /** The newer of two versions of one component (the later in the file on a tie); the other is reported. */
  newerOf(earlier: IcalComponent, later: IcalComponent, uid: string): IcalComponent {
    const [older, newer] = compareVersions(earlier, later) > 0 ? [later, earlier] : [earlier, later];
    this.report.skip(older, uid, {
      line: older.line,
      property: older.name,
      message:
        `an older version (SEQUENCE ${sequenceOf(older)}) of the ${newer.name} at line ${newer.line} ` +
        `(SEQUENCE ${sequenceOf(newer)}), which replaces it`,
    });
    return newer;
  }

  /**
   * Overrides of one occurrence written differently (`RECURRENCE-ID:20260107T080000Z` and
   * `RECURRENCE-ID;TZID=Europe/Berlin:20260107T090000`) are versions too: the newest is kept, the others reported.
   * Overrides whose RECURRENCE-ID cannot be read are kept, so building them reports why.
   */
  latestVersions(overrides: IcalComponent[], timing: Timing, uid: string): IcalComponent[] {
    const chosen = new Map<number, IcalComponent>();
    const unread = new Set<IcalComponent>();
    for (const override of overrides) {
      const recurrenceId = override.properties.find((property) => property.name === 'RECURRENCE-ID')!;
      let original: number;
      try {
        original = this.times.seriesInstant(this.times.singleTime(recurrenceId), recurrenceId, timing);
      } catch (error) {
        if (!(error instanceof Refusal)) throw error;
        unread.add(override);
        continue;
      }
      const other = chosen.get(original);
      chosen.set(original, other === undefined ? override : this.newerOf(other, override, uid));
    }
    const kept = new Set(chosen.values());
    return overrides.filter((override) => kept.has(override) || unread.has(override));
  }
}
