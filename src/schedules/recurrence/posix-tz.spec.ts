import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { parsePosixTz } from './posix-tz.js';
import { resolveTimeZone, zoneRules } from './time-zone.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const at = (iso: string) => Date.parse(iso);

/** [instant just before, offset before, offset from the instant on] for each change. */
function expectChanges(id: string, changes: readonly [string, number, number][]): void {
  const zone = zoneRules(id);
  for (const [iso, before, after] of changes) {
    expect([iso, zone.offsetAt(at(iso) - 1000)]).toEqual([iso, before * HOUR]);
    expect([iso, zone.offsetAt(at(iso))]).toEqual([iso, after * HOUR]);
  }
}

describe('POSIX TZ strings (RFC 8536 §3.3.1 examples)', () => {
  it('EST5EDT,M3.2.0,M11.1.0: US Eastern, second Sunday of March to first of November at 02:00', () => {
    expectChanges('EST5EDT,M3.2.0,M11.1.0', [
      ['2026-03-08T07:00:00Z', -5, -4],
      ['2026-11-01T06:00:00Z', -4, -5],
      ['2031-03-09T07:00:00Z', -5, -4],
    ]);
  });

  it('<+1030>-10:30<+11>-11,M10.1.0,M4.1.0: Lord Howe, a half-hour change in the southern hemisphere', () => {
    expectChanges('<+1030>-10:30<+11>-11,M10.1.0,M4.1.0', [
      ['2026-04-04T15:00:00Z', 11, 10.5],
      ['2026-10-03T15:30:00Z', 10.5, 11],
    ]);
    const zone = zoneRules('<+1030>-10:30<+11>-11,M10.1.0,M4.1.0');
    // Summer across New Year: DST at the start of the UTC year.
    expect(zone.offsetAt(at('2027-01-01T00:00:00Z'))).toBe(11 * HOUR);
  });

  it('IST-2IDT,M3.4.4/26,M10.5.0: Israel, 26:00 on the fourth Thursday (02:00 on the Friday after)', () => {
    expectChanges('IST-2IDT,M3.4.4/26,M10.5.0', [
      ['2026-03-27T00:00:00Z', 2, 3],
      ['2026-10-24T23:00:00Z', 3, 2],
    ]);
  });

  it('<-03>3<-02>,M3.5.0/-2,M10.5.0/-1: negative times (22:00 and 23:00 on the Saturday before)', () => {
    expectChanges('<-03>3<-02>,M3.5.0/-2,M10.5.0/-1', [
      ['2026-03-29T01:00:00Z', -3, -2],
      ['2026-10-25T01:00:00Z', -2, -3],
    ]);
  });

  it('EST5: a fixed offset', () => {
    const zone = zoneRules('EST5');
    for (const iso of ['0001-06-01T00:00:00Z', '2026-07-01T00:00:00Z', '9999-01-01T00:00:00Z']) {
      expect(zone.offsetAt(at(iso))).toBe(-5 * HOUR);
    }
  });

  it('EST5EDT4,0/0,J365/25: DST all year (one year ends as the next begins)', () => {
    const zone = zoneRules('EST5EDT4,0/0,J365/25');
    for (let ms = at('2025-12-25T00:00:00Z'); ms < at('2027-01-10T00:00:00Z'); ms += HOUR) {
      expect(zone.offsetAt(ms)).toBe(-4 * HOUR);
    }
  });

  it('Jn never counts 29 February, n does', () => {
    // J60 is 1 March in every year; 59 (zero-based) is 29 February in a leap year, 1 March otherwise.
    expectChanges('<+01>-1<+02>,J60/0,J300/0', [['2028-02-29T23:00:00Z', 1, 2]]);
    expectChanges('<+01>-1<+02>,59/0,300/0', [
      ['2028-02-28T23:00:00Z', 1, 2],
      ['2027-02-28T23:00:00Z', 1, 2],
    ]);
  });

  it('week 5 is the last such weekday, also in months with four of it', () => {
    // Sundays of February 2027: 7, 14, 21, 28; of February 2026: 1, 8, 15, 22.
    expectChanges('<-03>3<-02>,M10.1.0/0,M2.5.0/0', [
      ['2027-02-28T02:00:00Z', -2, -3],
      ['2026-02-22T02:00:00Z', -2, -3],
    ]);
  });

  it('defaults DST to one hour ahead and the time to 02:00:00; reads seconds', () => {
    expectChanges('<+0130>-1:30<+0230>,M3.5.0,M10.5.0', [['2026-03-29T00:30:00Z', 1.5, 2.5]]);
    const zone = zoneRules('<+013015>-1:30:15');
    expect(zone.offsetAt(0)).toBe(HOUR + 30 * MINUTE + 15_000);
  });

  it.each([
    '',
    'EST',
    'ES5',
    '<AB>5',
    '5EST',
    'EST5EDT',
    'EST5EDT,M3.2.0',
    'EST5EDT,M3.2.0,M11.1.0,',
    'EST5EDT,M3.2.0,M11.1.0 ',
    'EST25',
    'EST5:60',
    'EST123',
    'EST5EDT,M13.1.0,M11.1.0',
    'EST5EDT,M0.1.0,M11.1.0',
    'EST5EDT,M3.6.0,M11.1.0',
    'EST5EDT,M3.0.0,M11.1.0',
    'EST5EDT,M3.2.7,M11.1.0',
    'EST5EDT,J0,M11.1.0',
    'EST5EDT,J366,M11.1.0',
    'EST5EDT,366,M11.1.0',
    'EST5EDT,M3.2.0/168,M11.1.0',
    'EST5EDT,M3.2.0/2:60,M11.1.0',
    'est5edt,m3.2.0,m11.1.0',
    ':America/New_York',
    '<+01>-1<+02>,M3.2.0/2,M3.2.0/20',
    // POSIX would read these as UTC-1 and UTC+5; their writers mean the opposite.
    'UTC+01',
    'GMT-5',
    'utc-3',
  ])('%j is not accepted', (text) => {
    expect(parsePosixTz(text)).toBeUndefined();
    // EST and EST5EDT are tzdata links ICU knows; resolveTimeZone trims its input.
    if (!['EST', 'EST5EDT', 'EST5EDT,M3.2.0,M11.1.0 '].includes(text))
      expect(resolveTimeZone(text)).toBeUndefined();
  });

  it('accepts a UTC name with offset 0 and a quoted name that spells the offset', () => {
    expect(parsePosixTz('GMT0BST,M3.5.0/1,M10.5.0')).toBeDefined();
    expect(parsePosixTz('UTC0')).toBeDefined();
    expect(zoneRules('<UTC+01>-1').offsetAt(0)).toBe(HOUR);
  });

  it('resolveTimeZone keeps a POSIX string as its own id and still prefers ICU names', () => {
    expect(resolveTimeZone(' <-0330>3:30<-0230>,M10.1.0/0,M2.3.0/0 ')).toBe(
      '<-0330>3:30<-0230>,M10.1.0/0,M2.3.0/0',
    );
    // EST5EDT is a tzdata link ICU knows (with the zone's history), not read as a POSIX string.
    expect(zoneRules('EST5EDT').id).toBe('America/New_York');
  });
});

/** IANA zones whose rules from 2027 on are one POSIX string (tzdata 2025's TZ footers). */
const CURRENT_RULES: readonly [string, string][] = [
  ['America/New_York', 'EST5EDT,M3.2.0,M11.1.0'],
  ['Europe/Berlin', 'CET-1CEST,M3.5.0,M10.5.0/3'],
  ['Australia/Sydney', 'AEST-10AEDT,M10.1.0,M4.1.0/3'],
  ['Pacific/Auckland', 'NZST-12NZDT,M9.5.0,M4.1.0/3'],
  ['America/Santiago', '<-04>4<-03>,M9.1.6/24,M4.1.6/24'],
  ['Asia/Jerusalem', 'IST-2IDT,M3.4.4/26,M10.5.0'],
  ['Australia/Lord_Howe', '<+1030>-10:30<+11>-11,M10.1.0,M4.1.0'],
  ['America/Nuuk', '<-02>2<-01>,M3.5.0/-1,M10.5.0/0'],
  ['Asia/Kolkata', 'IST-5:30'],
];
const FROM = Date.UTC(2027, 0, 1);
const TO = Date.UTC(2036, 0, 1);

describe('POSIX zones agree with the IANA zones they describe (2027–2035)', () => {
  it('on the offset at any instant', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...CURRENT_RULES),
        fc.integer({ min: FROM, max: TO }),
        ([iana, posix], instant) => {
          expect(zoneRules(posix).offsetAt(instant)).toBe(zoneRules(iana).offsetAt(instant));
        },
      ),
      { numRuns: 5_000 },
    );
  });

  it('on every hour, so no change is missed or misplaced by more than an hour', () => {
    for (const [iana, posix] of CURRENT_RULES) {
      const a = zoneRules(iana);
      const b = zoneRules(posix);
      for (let ms = FROM; ms < TO; ms += HOUR) {
        if (a.offsetAt(ms) !== b.offsetAt(ms)) throw new Error(`${posix} differs from ${iana} at ${ms}`);
      }
    }
  });

  it('on wall times: a nonexistent one moves forward by the gap, an ambiguous one takes the first instant', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...CURRENT_RULES),
        fc.integer({ min: FROM, max: TO }),
        ([iana, posix], wall) => {
          const a = zoneRules(iana);
          const b = zoneRules(posix);
          expect(b.instantOf(wall)).toBe(a.instantOf(wall));
          expect(b.earliestInstantFrom(wall)).toBe(a.earliestInstantFrom(wall));
          expect(b.wallOf(wall)).toBe(a.wallOf(wall));
        },
      ),
      { numRuns: 5_000 },
    );
  });

  it('on the wall times right at the changes (gap and overlap)', () => {
    const ny = zoneRules('America/New_York');
    const posix = zoneRules('EST5EDT,M3.2.0,M11.1.0');
    // 2027-03-14 02:30 does not exist: 03:30 EDT. 2027-11-07 01:30 happens twice: the EDT one.
    expect(posix.instantOf(at('2027-03-14T02:30:00Z'))).toBe(at('2027-03-14T07:30:00Z'));
    expect(posix.instantOf(at('2027-11-07T01:30:00Z'))).toBe(at('2027-11-07T05:30:00Z'));
    for (const [, id] of CURRENT_RULES.slice(0, 5)) {
      const zone = zoneRules(id);
      for (let wall = FROM; wall < Date.UTC(2029, 0, 1); wall += 15 * MINUTE) {
        if (zone.instantOf(wall) !== zoneRules(CURRENT_RULES.find(([, p]) => p === id)![0]).instantOf(wall))
          throw new Error(`${id} at wall ${new Date(wall).toISOString()}`);
      }
    }
    expect(ny.instantOf(at('2027-03-14T02:30:00Z'))).toBe(at('2027-03-14T07:30:00Z'));
  });
});
