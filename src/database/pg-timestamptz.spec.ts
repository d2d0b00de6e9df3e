import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import pg from 'pg';
import { parseTimestamptz, pgTypes, readTimestamptz } from './pg-timestamptz.js';

const pgParse = pg.types.getTypeParser(1184, 'text') as (text: string) => unknown;
const pad = (value: number, width: number) => String(value).padStart(width, '0');

/** timestamptz as PostgreSQL prints it with DateStyle ISO: fraction without trailing zeros, offset ±HH[:MM[:SS]]. */
const printed = fc
  .record({
    year: fc.integer({ min: 1, max: 9999 }),
    month: fc.integer({ min: 1, max: 12 }),
    day: fc.integer({ min: 1, max: 28 }),
    hour: fc.integer({ min: 0, max: 23 }),
    minute: fc.integer({ min: 0, max: 59 }),
    second: fc.integer({ min: 0, max: 59 }),
    micros: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 999_999 })),
    offsetSeconds: fc.oneof(
      fc.constant(0),
      fc.integer({ min: -15, max: 15 }).map((hours) => hours * 3600),
      fc.integer({ min: -15 * 3600, max: 15 * 3600 }),
    ),
    bc: fc.oneof({ arbitrary: fc.constant(false), weight: 19 }, { arbitrary: fc.constant(true), weight: 1 }),
  })
  .map(({ year, month, day, hour, minute, second, micros, offsetSeconds, bc }) => {
    const fraction = micros === 0 ? '' : `.${pad(micros, 6)}`.replace(/0+$/, '');
    const size = Math.abs(offsetSeconds);
    let offset = `${offsetSeconds < 0 ? '-' : '+'}${pad(Math.floor(size / 3600), 2)}`;
    if (size % 3600 !== 0) offset += `:${pad(Math.floor((size % 3600) / 60), 2)}`;
    if (size % 60 !== 0) offset += `:${pad(size % 60, 2)}`;
    return `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)} ${pad(hour, 2)}:${pad(minute, 2)}:${pad(second, 2)}${fraction}${offset}${bc ? ' BC' : ''}`;
  });

const same = (text: string) => {
  const ours = parseTimestamptz(text);
  const theirs = pgParse(text);
  return ours instanceof Date && theirs instanceof Date
    ? ours.getTime() === theirs.getTime() || (Number.isNaN(ours.getTime()) && Number.isNaN(theirs.getTime()))
    : ours === theirs;
};

describe('parseTimestamptz', () => {
  it('reads what PostgreSQL prints exactly as pg does', () => {
    fc.assert(
      fc.property(printed, (text) => same(text)),
      { numRuns: 5_000 },
    );
  });

  it('reads the common shape itself (four-digit year, not BC), without pg’s parser', () => {
    fc.assert(
      fc.property(
        printed.filter((text) => !text.endsWith(' BC') && !text.startsWith('0')),
        (text) => {
          const ours = readTimestamptz(text);
          const theirs = pgParse(text);
          return ours instanceof Date && theirs instanceof Date && ours.getTime() === theirs.getTime();
        },
      ),
      { numRuns: 2_000 },
    );
    expect(readTimestamptz('0099-03-01 12:00:00+00')).toBeUndefined();
    expect(readTimestamptz('infinity')).toBeUndefined();
  });

  it.each([
    '2026-01-01 00:00:00+00',
    '2026-11-27 13:53:20.123456+00',
    '2026-11-27 13:53:20.5+05:30',
    '1900-01-01 00:00:00-00:09:21',
    '0099-03-01 12:00:00+00',
    '2026-01-01 00:00:00+00 BC',
    'infinity',
    '-infinity',
    '12026-01-01 00:00:00+00',
    '2026-01-01 00:00:00',
    '2026-01-01',
  ])('agrees with pg on %s', (text) => {
    expect(same(text)).toBe(true);
  });

  it('is what the pg types option hands out for timestamptz text, and pg’s own parser otherwise', () => {
    expect(pgTypes.getTypeParser(1184, 'text')).toBe(parseTimestamptz);
    expect(pgTypes.getTypeParser(1184)).toBe(parseTimestamptz);
    expect(pgTypes.getTypeParser(3802, 'text')).toBe(pg.types.getTypeParser(3802, 'text'));
    expect(pgTypes.getTypeParser(1184, 'binary')).toBe(pg.types.getTypeParser(1184, 'binary'));
  });
});
