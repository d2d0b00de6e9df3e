import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { resolveTimeZone, zoneRules } from './time-zone.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe('resolveTimeZone', () => {
  it.each([
    ['Europe/Berlin', 'Europe/Berlin'],
    ['europe/berlin', 'Europe/Berlin'],
    ['  America/New_York ', 'America/New_York'],
    ['Asia/Kolkata', 'Asia/Kolkata'],
    ['UTC', 'UTC'],
    ['W. Europe Standard Time', 'Europe/Berlin'],
    ['w. europe standard time', 'Europe/Berlin'],
    ['Eastern Standard Time', 'America/New_York'],
    ['GMT Standard Time', 'Europe/London'],
    ['Tokyo Standard Time', 'Asia/Tokyo'],
    // CLDR's primary zones under their current IANA names, not the spellings IANA retired.
    ['India Standard Time', 'Asia/Kolkata'],
    ['Nepal Standard Time', 'Asia/Kathmandu'],
    ['FLE Standard Time', 'Europe/Kyiv'],
    ['Myanmar Standard Time', 'Asia/Yangon'],
  ])('%s → %s', (input, expected) => {
    expect(resolveTimeZone(input)).toBe(expected);
  });

  it.each(['Mars/Olympus', '', '   ', '+05:00', 'Berlin'])('%j is not a zone', (input) => {
    expect(resolveTimeZone(input)).toBeUndefined();
  });

  // Node 24's ICU accepts offset ids as zones, Node 20's does not: the service refuses them on every runtime.
  it.each(['+05:00', '-0330', '+05', ' +14:00 ', '\u221205:00', '+23:59'])(
    'offset id %j is refused',
    (input) => {
      expect(resolveTimeZone(input)).toBeUndefined();
      expect(() => zoneRules(input)).toThrow(RangeError);
    },
  );

  // tzdata 2024b made these links; runtimes disagree on the name ICU reports, the service names the target.
  it.each([
    ['EST5EDT', 'America/New_York'],
    ['CST6CDT', 'America/Chicago'],
    ['MST7MDT', 'America/Denver'],
    ['PST8PDT', 'America/Los_Angeles'],
  ])('%s is read as %s', (input, target) => {
    expect(zoneRules(input).id).toBe(target);
    expect(zoneRules(input)).toBe(zoneRules(target));
  });

  it('maps every Windows id to a zone ICU knows', () => {
    const windows = resolveTimeZone('India Standard Time');
    expect(windows).toBeDefined();
    expect(zoneRules(windows ?? '').offsetAt(Date.UTC(2025, 0, 1))).toBe(5.5 * HOUR);
  });
});

const formatters = new Map<string, Intl.DateTimeFormat>();

/** Offset straight from ICU through a different Intl path than the engine's table (the "longOffset" name). */
function icuOffset(zone: string, at: number): number {
  let formatter = formatters.get(zone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' });
    formatters.set(zone, formatter);
  }
  const name = formatter.formatToParts(at).find((p) => p.type === 'timeZoneName')?.value;
  const m = /GMT(?:([+-])(\d{2}):(\d{2})(?::(\d{2}))?)?/.exec(name ?? '');
  if (!m) throw new Error(`unexpected ${name}`);
  if (!m[1]) return 0;
  const sign = m[1] === '-' ? -1 : 1;
  return sign * ((Number(m[2]) * 60 + Number(m[3])) * MINUTE + Number(m[4] ?? 0) * 1000);
}

describe('ZoneRules', () => {
  const zones = [
    'Europe/Berlin',
    'America/New_York',
    'Australia/Lord_Howe',
    'America/Sao_Paulo',
    'Asia/Tehran',
    'Africa/Casablanca',
    'Pacific/Apia',
  ];

  it('offsetAt agrees with ICU at random instants 1960–2060 (property)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        fc.integer({ min: Date.UTC(1960, 0, 1) / 1000, max: Date.UTC(2060, 0, 1) / 1000 }),
        (zone, seconds) => {
          const at = seconds * 1000;
          expect({ zone, at, offset: zoneRules(zone).offsetAt(at) }).toEqual({
            zone,
            at,
            offset: icuOffset(zone, at),
          });
        },
      ),
      { numRuns: 250 },
    );
  }, 30_000);

  it('finds transitions to the second (Berlin 2025: 01:00:00Z both ways)', () => {
    const berlin = zoneRules('Europe/Berlin');
    expect(berlin.offsetAt(Date.parse('2025-03-30T00:59:59Z'))).toBe(HOUR);
    expect(berlin.offsetAt(Date.parse('2025-03-30T01:00:00Z'))).toBe(2 * HOUR);
    expect(berlin.offsetAt(Date.parse('2025-10-26T00:59:59Z'))).toBe(2 * HOUR);
    expect(berlin.offsetAt(Date.parse('2025-10-26T01:00:00Z'))).toBe(HOUR);
  });

  it.each([
    // wall time (as if UTC), zone, expected instant
    ['2025-03-30T02:30:00Z', 'Europe/Berlin', '2025-03-30T01:30:00.000Z'], // gap: shifted forward by 1 h
    ['2025-10-26T02:30:00Z', 'Europe/Berlin', '2025-10-26T00:30:00.000Z'], // ambiguous: first instant
    ['2025-03-09T02:30:00Z', 'America/New_York', '2025-03-09T07:30:00.000Z'],
    ['2025-11-02T01:30:00Z', 'America/New_York', '2025-11-02T05:30:00.000Z'],
    ['2025-10-05T02:15:00Z', 'Australia/Lord_Howe', '2025-10-04T15:45:00.000Z'], // 30-minute gap at 02:00
    ['2025-04-06T01:45:00Z', 'Australia/Lord_Howe', '2025-04-05T14:45:00.000Z'], // 30-minute overlap, first
    ['2025-06-01T12:00:00Z', 'Asia/Kolkata', '2025-06-01T06:30:00.000Z'],
  ])('instantOf(%s) in %s = %s', (wall, zone, expected) => {
    expect(new Date(zoneRules(zone).instantOf(Date.parse(wall))).toISOString()).toBe(expected);
  });

  it('earliestInstantFrom answers the transition for a wall time inside a gap', () => {
    const berlin = zoneRules('Europe/Berlin');
    expect(new Date(berlin.earliestInstantFrom(Date.parse('2025-03-30T02:30:00Z'))).toISOString()).toBe(
      '2025-03-30T01:00:00.000Z',
    );
    expect(new Date(berlin.earliestInstantFrom(Date.parse('2025-03-30T04:00:00Z'))).toISOString()).toBe(
      '2025-03-30T02:00:00.000Z',
    );
  });

  it('wallOf and instantOf round-trip outside gaps and overlaps', () => {
    const ny = zoneRules('America/New_York');
    const at = Date.parse('2031-07-04T16:00:00Z');
    expect(ny.wallOf(at)).toBe(Date.parse('2031-07-04T12:00:00Z'));
    expect(ny.instantOf(ny.wallOf(at))).toBe(at);
  });
});
