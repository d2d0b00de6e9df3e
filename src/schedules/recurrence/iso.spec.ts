import { describe, expect, it } from '@jest/globals';
import { parseDateTime } from './iso-date-time.js';
import { addDuration, parseDuration } from './iso-duration.js';
import { zoneRules } from './time-zone.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe('parseDateTime (ISO 8601 / RFC 5545 §3.3.5 forms)', () => {
  it.each([
    ['2025-03-09T02:30:00Z', { kind: 'instant', ms: Date.UTC(2025, 2, 9, 2, 30) }],
    ['2025-03-09t02:30:00z', { kind: 'instant', ms: Date.UTC(2025, 2, 9, 2, 30) }],
    ['2025-03-09T02:30:00+01:00', { kind: 'instant', ms: Date.UTC(2025, 2, 9, 1, 30) }],
    ['2025-03-09T02:30:00-0530', { kind: 'instant', ms: Date.UTC(2025, 2, 9, 8, 0) }],
    ['2025-03-09T02:30+02', { kind: 'instant', ms: Date.UTC(2025, 2, 9, 0, 30) }],
    ['2025-03-09T02:30:00.1234567Z', { kind: 'instant', ms: Date.UTC(2025, 2, 9, 2, 30, 0, 123) }],
    ['2025-03-09 02:30:00', { kind: 'wall', ms: Date.UTC(2025, 2, 9, 2, 30) }],
    ['20250309T023000', { kind: 'wall', ms: Date.UTC(2025, 2, 9, 2, 30) }],
    ['20250309T023000Z', { kind: 'instant', ms: Date.UTC(2025, 2, 9, 2, 30) }],
    ['2024-02-29', { kind: 'date', days: Date.UTC(2024, 1, 29) / DAY }],
    ['0001-01-01T00:00:00Z', { kind: 'instant', ms: -62135596800000 }],
  ])('%s', (text, expected) => {
    expect(parseDateTime(text)).toEqual(expected);
  });

  it.each([
    '2025-02-29',
    '2025-13-01',
    '2025-01-01T24:00:00',
    '2025-01-01T12:60',
    '2025-01-01T12:00:60Z',
    '2025-01-01T12:00+19:00',
    'yesterday',
    '2025-1-1',
    '0000-01-01',
  ])('%j is rejected', (text) => {
    expect(parseDateTime(text)).toBeUndefined();
  });
});

describe('parseDuration (RFC 5545 §3.3.6: days and weeks nominal, the rest exact)', () => {
  it.each([
    ['PT30M', 0, 30 * 60_000],
    ['P1D', 1, 0],
    ['P2W', 14, 0],
    ['P1DT2H3M4S', 1, 2 * HOUR + 3 * 60_000 + 4_000],
    ['-PT15M', 0, -15 * 60_000],
    ['+PT1.5S', 0, 1_500],
    ['pt1h', 0, HOUR],
    ['PT0S', 0, 0],
  ])('%s', (text, days, exactMs) => {
    expect(parseDuration(text)).toEqual({ ok: true, value: { days, exactMs } });
  });

  it.each(['P', 'PT', 'P1Y', 'P1M', '1H', 'PT1H30', 'P1DT', '--PT1H', ''])('%j is rejected', (text) => {
    expect(parseDuration(text).ok).toBe(false);
  });

  it('adds nominal days in wall time and the exact part on top', () => {
    const berlin = zoneRules('Europe/Berlin');
    const start = Date.parse('2025-03-29T12:00:00+01:00');
    const parsed = parseDuration('P1DT1H');
    if (!parsed.ok) throw new Error(parsed.reason);
    // 12:00 CET + 1 nominal day = 12:00 CEST (23 h later), + 1 exact hour.
    expect(addDuration(berlin, start, parsed.value) - start).toBe(24 * HOUR);
  });
});
