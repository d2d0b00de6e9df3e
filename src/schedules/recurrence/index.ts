// Public surface of the recurrence engine (RFC 5545 recurrence sets for schedules). Framework-free.
export { RecurrenceError } from './recurrence-error.js';
export { compileSeries } from './series-compiler.js';
export type { ScheduleItemInput, RecurrenceInput, RecurrenceExceptionInput } from './series-compiler.js';
export type { CompiledSeries, Occurrence } from './compiled-series.js';
export { resolveTimeZone, zoneRules, type ZoneRules } from './time-zone.js';
export { isDayStart, isoDate, localDay } from './all-day.js';
