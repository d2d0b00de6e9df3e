// Operation 1 and the occurrence listing: answers come from cached compiled series, which jump straight
// to the window and stop at the first overlapping occurrence.
import { Injectable } from '@nestjs/common';
import { TimeSlicer } from '../common/time-slicer.js';
import type { FieldError } from '../errors/api-error.js';
import type { RequestContext } from '../logging/request-context.js';
import type { HasOccurrencesGroupedRequest, OccurrenceDto, OccurrencesQuery } from './dto/occurrence.dto.js';
import { ScheduleError, ScheduleErrorCode } from './schedules.errors.js';
import { MS_PER_DAY } from './recurrence/calendar.js';
import { isDayStart, isoDate, localDay } from './recurrence/index.js';
import { parseDateTime } from './recurrence/iso-date-time.js';
import { SeriesCache, type CompiledItem } from './series-cache.js';

const MAX_IDS = 50_000;
/** Requests with more distinct ids than this yield the event loop between their phases. */
const YIELD_AFTER_IDS = 5_000;
const MAX_OCCURRENCES = 10_000;

export interface GroupedAnswer {
  groups: Record<string, boolean>;
  unknownIds: string[];
}

export interface OccurrenceListing {
  occurrences: OccurrenceDto[];
  unknownIds: string[];
}

@Injectable()
export class OccurrencesService {
  constructor(private readonly cache: SeriesCache) {}

  async hasOccurrencesGrouped(
    request: HasOccurrencesGroupedRequest,
    ctx: RequestContext,
  ): Promise<GroupedAnswer> {
    const errors: FieldError[] = [];
    const [start, end] = window(request.Start, request.End, errors);
    const seen = new Set<string>();
    let total = 0;
    request.Groups.forEach((group, index) => {
      if (seen.has(group.Key))
        errors.push({
          Field: `Groups[${index}].Key`,
          Message: `Key "${group.Key}" is used by an earlier group`,
        });
      seen.add(group.Key);
      total += group.ScheduleIds?.length ?? 0;
    });
    if (total > MAX_IDS)
      errors.push({
        Field: 'Groups',
        Message: `Groups must not hold more than ${MAX_IDS} schedule ids in all (got ${total})`,
      });
    if (errors.length > 0) throw ScheduleError.invalid(errors);

    // All groups' ids lower-cased in one list, each group a stretch of it. No per-request Map or Set of ids:
    // building one costs ~0.5 µs an entry, more than evaluating a cached rule (~0.3 µs); an id named twice is
    // simply evaluated twice (bounded by the 50,000 ids a request may name).
    const ids: string[] = [];
    const ends: number[] = [];
    for (const group of request.Groups) {
      for (const id of group.ScheduleIds ?? []) ids.push(id.toLowerCase());
      ends.push(ids.length);
    }
    // Validating a body of up to 50,000 ids took one long turn already: give the loop one before more. From here
    // on one slicer bounds every stretch: the cache's lookups, its loads and the evaluation.
    const slicer = new TimeSlicer();
    if (ids.length > YIELD_AFTER_IDS) await slicer.yield();
    const compiled = await this.cache.getMany(ids, ctx, slicer);
    // A null-prototype object: group keys such as "__proto__" are plain keys here.
    const groups = Object.create(null) as Record<string, boolean>;
    // Evaluated in slices: the loop gets a turn whenever the slice is spent (checked every 1,000 ids).
    let unknownCount = 0;
    for (const [index, group] of request.Groups.entries()) {
      let answer = false;
      for (let at = index === 0 ? 0 : ends[index - 1]; at < ends[index]; at++) {
        const items = compiled[at];
        if (items === undefined) unknownCount++;
        else if (!answer && anyOverlap(items, start, end)) answer = true;
        if (at % 1_000 === 999) await slicer.pause();
      }
      groups[group.Key] = answer;
    }
    return {
      groups,
      // Named as sent (the rare path: only when some id has no schedule).
      unknownIds:
        unknownCount === 0
          ? []
          : unknown(
              request.Groups.flatMap((group) => group.ScheduleIds ?? []),
              ids,
              compiled,
            ),
    };
  }

  async list(query: OccurrencesQuery, ctx: RequestContext): Promise<OccurrenceListing> {
    const errors: FieldError[] = [];
    const [start, end] = window(query.Start, query.End, errors);
    if (errors.length > 0) throw ScheduleError.invalid(errors);
    const ids = [...new Set(query.ScheduleIds.map((id) => id.toLowerCase()))];
    const compiled = await this.cache.getMany(ids, ctx);
    const occurrences: OccurrenceDto[] = [];
    for (const [index, id] of ids.entries()) {
      for (const item of compiled[index] ?? []) {
        const zone = item.allDayZone;
        for (const occurrence of item.series.occurrencesIn(start, end, MAX_OCCURRENCES + 1)) {
          const listed: OccurrenceDto = {
            ScheduleId: id,
            ScheduleItemId: item.itemId,
            Start: new Date(occurrence.start).toISOString(),
            End: new Date(occurrence.end).toISOString(),
            IsMoved: occurrence.isMoved,
            AllDay: false,
          };
          // An occurrence of an all-day item is all-day unless an exception moved it to a time of day.
          if (
            zone !== undefined &&
            occurrence.end > occurrence.start &&
            isDayStart(zone, occurrence.start) &&
            isDayStart(zone, occurrence.end)
          ) {
            listed.AllDay = true;
            listed.Date = isoDate(localDay(zone, occurrence.start));
            listed.EndDate = isoDate(localDay(zone, occurrence.end));
          }
          occurrences.push(listed);
        }
        if (occurrences.length > MAX_OCCURRENCES) {
          throw new ScheduleError(
            ScheduleErrorCode.TooManyOccurrences,
            `More than ${MAX_OCCURRENCES} occurrences overlap the window; ask for a smaller window.`,
            [
              {
                Field: 'End',
                Message: `the window holds more than ${MAX_OCCURRENCES} occurrences; choose an earlier End`,
              },
            ],
          );
        }
      }
    }
    occurrences.sort((a, b) =>
      a.Start < b.Start ? -1 : a.Start > b.Start ? 1 : a.ScheduleId.localeCompare(b.ScheduleId),
    );
    return {
      occurrences,
      unknownIds: unknown(query.ScheduleIds, ids, compiled),
    };
  }
}

function anyOverlap(items: readonly CompiledItem[], start: number, end: number): boolean {
  for (const item of items) if (item.series.hasOccurrenceIn(start, end)) return true;
  return false;
}

/** The ids as sent (`sent`) whose lower-case form (`lowered[i]`) found no schedule (`compiled[i]`), once each. */
function unknown(
  sent: readonly string[],
  lowered: readonly string[],
  compiled: ReadonlyArray<readonly CompiledItem[] | undefined>,
): string[] {
  const missing = new Set<string>();
  lowered.forEach((id, index) => {
    if (compiled[index] === undefined) missing.add(id);
  });
  return [...new Set(sent.filter((id) => missing.has(id.toLowerCase())))];
}

/** Start/End as instants; a date-time without offset is read as UTC (documented). End must be after Start. */
function window(startText: string, endText: string, errors: FieldError[]): [number, number] {
  // The parser schedules are written with: strict calendar dates (2025-02-30 is refused, as on POST /Schedule,
  // where Date.parse would read March 2); a date or a time without offset is UTC.
  const instant = (text: string, field: string): number => {
    const parsed = parseDateTime(text);
    if (parsed === undefined) {
      errors.push({ Field: field, Message: `${field} must be an ISO 8601 date-time` });
      return Number.NaN;
    }
    return parsed.kind === 'date' ? parsed.days * MS_PER_DAY : parsed.ms;
  };
  const start = instant(startText, 'Start');
  const end = instant(endText, 'End');
  if (!Number.isNaN(start) && !Number.isNaN(end) && end <= start) {
    errors.push({ Field: 'End', Message: 'End must be later than Start' });
  }
  return [start, end];
}
