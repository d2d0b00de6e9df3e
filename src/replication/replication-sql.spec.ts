import { describe, expect, it } from '@jest/globals';
import { readInstant, readNumber, toPostgres } from './replication-sql.js';

describe('replication SQL helpers', () => {
  it('numbers placeholders for PostgreSQL in order', () => {
    expect(toPostgres('SELECT ? AS a, ? AS b WHERE x = ?')).toBe('SELECT $1 AS a, $2 AS b WHERE x = $3');
  });

  it.each([
    ['2026-11-22 10:15:03.250', '2026-11-22T10:15:03.250Z'],
    ['2026-11-22 10:15:03', '2026-11-22T10:15:03.000Z'],
    ['2026-11-22 10:15:03.5', '2026-11-22T10:15:03.500Z'],
    ['2026-11-22T10:15:03.250+01:00', '2026-11-22T09:15:03.250Z'],
  ])('reads the instant %s as UTC', (text, expected) => {
    expect(readInstant(text)?.toISOString()).toBe(expected);
  });

  it('passes Dates through, reads epoch milliseconds and rejects what is not an instant', () => {
    const now = new Date();
    expect(readInstant(now)).toBe(now);
    expect(readInstant(1_795_000_000_123)?.toISOString()).toBe('2026-11-18T11:06:40.123Z');
    expect(readInstant(null)).toBeNull();
    expect(readInstant('yesterday')).toBeNull();
    expect(readInstant(Number.NaN)).toBeNull();
    expect(readInstant({})).toBeNull();
  });

  it('reads bigint text as a number', () => {
    expect(readNumber('9007199254740991')).toBe(Number.MAX_SAFE_INTEGER);
    expect(readNumber(7)).toBe(7);
    expect(readNumber(null)).toBeNull();
    expect(readNumber('x')).toBeNull();
  });
});
