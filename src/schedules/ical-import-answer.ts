// The iCalendar import's answer, bounded in size: the 400 of a calendar refused as a whole, the items the
// DTO or the engine refused reported as skipped with their lines, `SkippedCounts` and the summary in `Message`.
import type { FieldError } from '../errors/api-error.js';
import type { IcalSkippedCount } from './dto/ical.dto.js';
import {
  describeProblem,
  type IcalProblem,
  type ImportedCalendar,
  withoutItems,
} from './ical/ical-import.js';
import { ScheduleError } from './schedules.errors.js';

/** Skipped components named in Message; all of them are in `Skipped`. */
const MAX_NAMED_IN_MESSAGE = 10;
/**
 * Skipped components listed one by one in the answer, and errors in a 400 (200,000 skipped components once
 * answered 28.7 MB, and an Idempotency-Key stored it); the rest are counted by kind.
 */
export const MAX_SKIPPED_LISTED = 100;
/** Component kinds counted apart in `SkippedCounts`; names are the caller's (X-FOO1, X-FOO2, …), so bounded too. */
const MAX_SKIPPED_KINDS = 20;

/** The 400 of a calendar refused as a whole: one field error per line named. */
export function invalidCalendar(problems: readonly IcalProblem[]): ScheduleError {
  return ScheduleError.invalid(
    problems.map((problem) => ({ Field: `line ${problem.line}`, Message: describeProblem(problem) })),
  );
}

/**
 * The calendar without the items the DTO or the engine refused (by index, their errors), each reported as skipped.
 * Refuses the import (400 naming the lines) when no item would remain.
 */
export function withoutRefusedItems(
  calendar: ImportedCalendar,
  refused: ReadonlyMap<number, readonly FieldError[]>,
): ImportedCalendar {
  if (refused.size >= calendar.ScheduleItems.length) {
    throw refusal(calendar, [...refused.values()].flat());
  }
  return withoutItems(
    calendar,
    new Map(
      [...refused].map(([index, errors]) => [
        index,
        atLines(errors, calendar)
          .map((mapped) => mapped.Message)
          .join('; '),
      ]),
    ),
  );
}

/** Nothing importable remains: the errors, then what was skipped before (400; the first MAX_SKIPPED_LISTED). */
function refusal(calendar: ImportedCalendar, errors: readonly FieldError[]): ScheduleError {
  const all = [
    ...atLines(errors.slice(0, MAX_SKIPPED_LISTED), calendar),
    ...calendar.skipped
      .slice(0, MAX_SKIPPED_LISTED)
      .map((entry) => ({ Field: `line ${entry.line}`, Message: entry.reason })),
  ];
  const total = errors.length + calendar.skipped.length;
  const listed = all.slice(0, MAX_SKIPPED_LISTED);
  if (total > listed.length) {
    listed.push({ Field: 'body', Message: `and ${total - listed.length} more problems of the same kinds` });
  }
  return ScheduleError.invalid(listed);
}

/** `SkippedCounts`: per component kind, most first; kinds past MAX_SKIPPED_KINDS together as `(other)`. */
export function countsByComponent(skipped: readonly { component: string }[]): IcalSkippedCount[] {
  const counts = new Map<string, number>();
  for (const { component } of skipped) {
    if (counts.has(component) || counts.size < MAX_SKIPPED_KINDS)
      counts.set(component, (counts.get(component) ?? 0) + 1);
    else counts.set('(other)', (counts.get('(other)') ?? 0) + 1);
  }
  return [...counts]
    .map(([Component, Count]) => ({ Component, Count }))
    .sort((a, b) => b.Count - a.Count || (a.Component < b.Component ? -1 : 1));
}

/** `Imported 3 events; skipped 2: line 37: VTODO: …; line 60: …`; null when nothing was skipped. */
export function summarise(calendar: ImportedCalendar): string | null {
  const skipped = calendar.skipped;
  if (skipped.length === 0) return null;
  const count = calendar.ScheduleItems.length;
  const named = skipped.slice(0, MAX_NAMED_IN_MESSAGE).map((entry) => entry.reason);
  const more =
    skipped.length > MAX_NAMED_IN_MESSAGE
      ? `; and ${skipped.length - MAX_NAMED_IN_MESSAGE} more (see Skipped)`
      : '';
  return `Imported ${count} event${count === 1 ? '' : 's'}; skipped ${skipped.length}: ${named.join('; ')}${more}`;
}

/** `ScheduleItems[0].Recurrence.Pattern` → `line 14`, the message naming the property and the field. */
function atLines(errors: readonly FieldError[], calendar: ImportedCalendar): FieldError[] {
  return errors.map((error) => {
    const at = calendar.lineOf(error.Field);
    if (at === undefined) return { Field: error.Field, Message: error.Message };
    return {
      Field: `line ${at.line}`,
      Message: `${describeProblem({ line: at.line, property: at.property, message: error.Message })} (${error.Field})`,
    };
  });
}
