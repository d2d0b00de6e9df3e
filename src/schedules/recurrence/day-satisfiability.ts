// RFC 5545 §3.3.10: whether the day-level BYxxx parts of a rule (BYMONTH, BYMONTHDAY, BYYEARDAY, BYWEEKNO, BYDAY)
// name any day at all. `BYMONTH=2;BYMONTHDAY=30` names none, whatever FREQ; at FREQ=SECONDLY a cursor took ~13 ms
// to find that out by walking days (2,000 such events in one import cost 26 s of a core). Decided once per distinct
// set of parts, on a few calendar years, before anything is expanded.
import { daysFromCivil } from './calendar.js';

/**
 * Whether the parts match a day of the calendar. Without week parts (BYDAY, BYWEEKNO) a day only depends on its
 * month, day of month and day of year, so a leap year and a common one decide it (731 days). With them, on the kind
 * of year too (its first weekday and length): 2001–2028 holds each of the 14 kinds (10,227 days), and the Gregorian
 * calendar has no others.
 */
export function someDayMatches(key: string, weekParts: boolean, matches: (day: number) => boolean): boolean {
  const known = decided.get(key);
  if (known !== undefined) return known;
  const [from, to] = weekParts ? [2001, 2029] : [2024, 2026];
  let found = false;
  for (let day = daysFromCivil(from, 1, 1), end = daysFromCivil(to, 1, 1); day < end && !found; day++) {
    found = matches(day);
  }
  if (decided.size >= MAX_DECIDED) decided.clear();
  decided.set(key, found);
  return found;
}

/** Distinct sets of day parts remembered (each a short string). */
const MAX_DECIDED = 1_000;
const decided = new Map<string, boolean>();
