// Proleptic Gregorian calendar arithmetic on plain integers (days since 1970-01-01), as RFC 5545 §3.3.4/§3.3.10
// need it: month days, year days, weekdays and the week numbering of BYWEEKNO. Integers instead of Date objects
// keep the expansion hot path free of allocations and independent of the machine's time zone.

export const MS_PER_SECOND = 1000;
export const MS_PER_MINUTE = 60_000;
export const MS_PER_HOUR = 3_600_000;
export const MS_PER_DAY = 86_400_000;

/** Weekday numbers used throughout: Monday = 0 … Sunday = 6 (RFC 5545 order MO..SU). */
export const WEEKDAY_CODES = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'] as const;

export function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

export function daysInMonth(year: number, month: number): number {
  return month === 2 && isLeapYear(year) ? 29 : MONTH_DAYS[month - 1];
}

export function daysInYear(year: number): number {
  return isLeapYear(year) ? 366 : 365;
}

/** Days since 1970-01-01 of a civil date (month 1–12); H. Hinnant's days_from_civil. */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const mp = (month + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** Civil date of a day number, packed as year * 10000 + month * 100 + day to avoid allocating. */
export function civilFromDays(days: number): number {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  return year * 10000 + month * 100 + day;
}

export function packedYear(packed: number): number {
  return Math.floor(packed / 10000);
}
export function packedMonth(packed: number): number {
  return Math.floor(packed / 100) % 100;
}
export function packedDay(packed: number): number {
  return packed % 100;
}

/** Monday = 0 … Sunday = 6; 1970-01-01 was a Thursday. */
export function weekdayOfDays(days: number): number {
  return (((days + 3) % 7) + 7) % 7;
}

/**
 * First day of week 1 of `year` under RFC 5545 §3.3.10 BYWEEKNO: weeks start on `wkst` and week 1 is the first
 * week holding at least four days of the year.
 */
export function firstDayOfWeekOne(year: number, wkst: number): number {
  const jan1 = daysFromCivil(year, 1, 1);
  const weekStart = jan1 - ((weekdayOfDays(jan1) - wkst + 7) % 7);
  // The week containing Jan 1 is week 1 iff at least 4 of its days fall in the new year.
  return jan1 - weekStart <= 3 ? weekStart : weekStart + 7;
}

/** Week number of a day within its week-numbering year, packed as weekNo * 100 + weeksInThatWeekYear. */
export function weekNumberOf(days: number, wkst: number): number {
  const year = packedYear(civilFromDays(days));
  let weekYear = year;
  let start = firstDayOfWeekOne(year, wkst);
  if (days < start) {
    weekYear = year - 1;
    start = firstDayOfWeekOne(weekYear, wkst);
  } else {
    const nextStart = firstDayOfWeekOne(year + 1, wkst);
    if (days >= nextStart) {
      weekYear = year + 1;
      start = nextStart;
    }
  }
  const weeks = (firstDayOfWeekOne(weekYear + 1, wkst) - firstDayOfWeekOne(weekYear, wkst)) / 7;
  return (Math.floor((days - start) / 7) + 1) * 100 + weeks;
}

/** Floor division that is correct for negative numerators. */
export function floorDiv(a: number, b: number): number {
  return Math.floor(a / b);
}

/** Non-negative remainder. */
export function mod(a: number, b: number): number {
  const r = a % b;
  return r < 0 ? r + b : r;
}
