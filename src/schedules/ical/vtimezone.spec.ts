import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import ICAL from 'ical.js';
import { zoneRules } from '../recurrence/time-zone.js';
import { formatUtcOffset, vtimezoneLines, zoneTransitions } from './vtimezone.js';

const HOUR = 3_600_000;
const ZONES = [
  'Europe/Berlin',
  'America/New_York',
  'Australia/Lord_Howe',
  'Asia/Kolkata',
  'America/Sao_Paulo',
  'Africa/Casablanca',
  'Asia/Jerusalem',
  'Pacific/Apia',
];

/** Offset straight from ICU through a different Intl path than the engine's table (the "longOffset" name). */
function icuOffset(zone: string, at: number): number {
  const name =
    new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' })
      .formatToParts(at)
      .find((part) => part.type === 'timeZoneName')?.value ?? '';
  const m = /^GMT(?:([+-])(\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(name);
  if (!m) throw new Error(`unexpected zone name ${name}`);
  if (!m[1]) return 0;
  const sign = m[1] === '-' ? -1 : 1;
  return sign * ((Number(m[2]) * 60 + Number(m[3])) * 60 + Number(m[4] ?? 0)) * 1000;
}

/** The VTIMEZONE as ical.js reads it. */
function icalZone(lines: readonly string[]): ICAL.Timezone {
  const component = new ICAL.Component(ICAL.parse(`${lines.join('\r\n')}\r\n`) as unknown[]);
  return new ICAL.Timezone(component);
}

/** The offset ical.js gives an instant in that zone (ms): its wall time there minus the instant. */
function icalOffset(zone: ICAL.Timezone, at: number): number {
  const local = ICAL.Time.fromJSDate(new Date(at), true).convertToZone(zone);
  return Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second) - at;
}

/** The instant ical.js reads for a wall time in that zone (as for DTSTART;TZID=…). */
function icalInstant(zone: ICAL.Timezone, wall: number): number {
  const d = new Date(wall);
  const time = new ICAL.Time(
    {
      year: d.getUTCFullYear(),
      month: d.getUTCMonth() + 1,
      day: d.getUTCDate(),
      hour: d.getUTCHours(),
      minute: d.getUTCMinutes(),
      second: d.getUTCSeconds(),
      isDate: false,
    },
    zone,
  );
  return time.toUnixTime() * 1000;
}

describe('formatUtcOffset', () => {
  it.each([
    [HOUR, '+0100'],
    [-4.5 * HOUR, '-0430'],
    [0, '+0000'],
    [10.5 * HOUR, '+1030'],
    [(53 * 60 + 28) * 1000, '+005328'],
  ])('%d → %s', (ms, text) => expect(formatUtcOffset(ms)).toBe(text));
});

describe('zoneTransitions', () => {
  it('finds Berlin’s 2026 changes to the second', () => {
    const zone = zoneRules('Europe/Berlin');
    expect(zoneTransitions(zone, Date.UTC(2026, 0, 1), Date.UTC(2027, 0, 1))).toEqual([
      { at: Date.UTC(2026, 2, 29, 1), from: HOUR, to: 2 * HOUR },
      { at: Date.UTC(2026, 9, 25, 1), from: 2 * HOUR, to: HOUR },
    ]);
  });
});

describe('vtimezoneLines', () => {
  it('writes Berlin’s current rule as a yearly RRULE', () => {
    const lines = vtimezoneLines(zoneRules('Europe/Berlin'), Date.UTC(2026, 0, 5), Infinity);
    expect(lines).toContain('RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU');
    expect(lines).toContain('RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU');
    expect(lines).toContain('TZID:Europe/Berlin');
  });

  it('writes New York’s second Sunday in March and Lord Howe’s half-hour change', () => {
    expect(vtimezoneLines(zoneRules('America/New_York'), Date.UTC(2026, 0, 5), Infinity)).toContain(
      'RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU',
    );
    const lordHowe = vtimezoneLines(zoneRules('Australia/Lord_Howe'), Date.UTC(2026, 0, 5), Infinity);
    expect(lordHowe).toContain('TZOFFSETTO:+1030');
    expect(lordHowe).toContain('TZOFFSETTO:+1100');
  });

  it('gives a zone without DST one observance', () => {
    const lines = vtimezoneLines(zoneRules('Asia/Kolkata'), Date.UTC(2026, 0, 5), Infinity);
    expect(
      lines.filter((line) => line.startsWith('BEGIN:STANDARD') || line.startsWith('BEGIN:DAYLIGHT')),
    ).toHaveLength(1);
    expect(lines).toContain('TZOFFSETTO:+0530');
  });

  // The property the export relies on: ical.js, reading the generated component, turns every wall time of the
  // years covered into the instant ICU gives it (ical.js reads DTSTART;TZID=… that way). Wall times in a DST gap
  // or a repeated hour are left out: ical.js resolves them differently from RFC 5545 §3.3.5 whatever the
  // VTIMEZONE says (see the export's docs). Instants → wall times are checked away from transitions, where
  // ical.js's own conversion (it reads a UTC time as if it were local) is exact.
  const steady = (id: string, at: number, offset: number) =>
    icuOffset(id, at - 86_400_000) === offset && icuOffset(id, at + 86_400_000) === offset;

  it.each(ZONES)('%s: ical.js reads wall times as ICU does, 1990–2060', (id) => {
    const from = Date.UTC(1990, 5, 1);
    const zone = icalZone(vtimezoneLines(zoneRules(id), from, Date.UTC(2060, 0, 1)));
    fc.assert(
      fc.property(fc.integer({ min: from, max: Date.UTC(2060, 0, 1) }), (at) => {
        const instant = Math.floor(at / 1000) * 1000;
        const offset = icuOffset(id, instant);
        if (!steady(id, instant, offset)) return;
        const wall = instant + offset;
        expect([wall, icalInstant(zone, wall)]).toEqual([wall, instant]);
        expect([instant, icalOffset(zone, instant)]).toEqual([instant, offset]);
      }),
      { numRuns: 1500 },
    );
  });

  it.each(ZONES)('%s: wall times on either side of every transition, 2000–2040', (id) => {
    const rules = zoneRules(id);
    const from = Date.UTC(2000, 0, 1);
    const to = Date.UTC(2040, 0, 1);
    const zone = icalZone(vtimezoneLines(rules, from, to));
    for (const t of zoneTransitions(rules, from, to)) {
      const jump = Math.abs(t.to - t.from);
      for (const [at, offset] of [
        [t.at - jump - 1000, t.from],
        [t.at + jump, t.to],
      ]) {
        expect([at, icalInstant(zone, at + offset)]).toEqual([at, at]);
      }
    }
  });

  it('covers a series that starts in 2026 with a short component', () => {
    const lines = vtimezoneLines(zoneRules('Europe/Berlin'), Date.UTC(2026, 0, 5), Infinity);
    expect(lines.length).toBeLessThan(25);
  });
});
