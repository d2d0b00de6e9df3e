// Rules whose day parts name no day are known before any expansion, in microseconds.
import { describe, expect, it, jest } from '@jest/globals';
import { RuleCursor } from './rule-cursor.js';
import { compileSeries } from './series-compiler.js';

const YEAR_MS = 366 * 86_400_000;

function series(pattern: string) {
  return compileSeries({
    Start: '2026-01-05T09:00:00Z',
    End: '2026-01-05T09:15:00Z',
    StartTimeZone: 'UTC',
    Recurrence: { RecurrenceType: pattern.split(';')[0].slice(5), Pattern: pattern },
  });
}

/** What the write-time check asks: does the rule generate anything in the 400 years after DTSTART? */
function recurs(pattern: string): boolean {
  const compiled = series(pattern);
  return compiled.generatesBetween(compiled.first, compiled.first + 401 * YEAR_MS) !== false;
}

describe('day-level satisfiability', () => {
  it.each([
    ['FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30', false],
    ['FREQ=MINUTELY;BYMONTH=4;BYMONTHDAY=31', false],
    ['FREQ=HOURLY;BYMONTH=1;BYYEARDAY=200', false],
    ['FREQ=YEARLY;BYWEEKNO=1;BYMONTH=6', false],
    ['FREQ=YEARLY;BYMONTH=1;BYDAY=6MO', false],
    ['FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=29', true],
    ['FREQ=DAILY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO', true],
    ['FREQ=MONTHLY;BYMONTH=2;BYDAY=5FR', true],
    ['FREQ=YEARLY;BYDAY=53MO', true],
    ['FREQ=YEARLY;BYWEEKNO=53;BYDAY=TH', true],
  ])('%s recurs: %s', (pattern, expected) => {
    expect(recurs(pattern)).toBe(expected);
  });

  it('decides 2,000 never-matching SECONDLY rules before any expansion: at most one period generated each', () => {
    const compiled = Array.from({ length: 2_000 }, () => series('FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30'));
    // Work is counted, not timed: `generate` is the cursor's step that expands one FREQ period (one second here),
    // so walking the 400 years would take billions of them. The time per rule is bench/worst-inputs.mjs's.
    const periods = jest.spyOn(RuleCursor.prototype as unknown as { generate(): void }, 'generate');
    try {
      for (const one of compiled)
        expect(one.generatesBetween(one.first, one.first + 401 * YEAR_MS)).toBe(false);
      expect(periods.mock.calls.length).toBeLessThanOrEqual(compiled.length);
    } finally {
      periods.mockRestore();
    }
  });
});
