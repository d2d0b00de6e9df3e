import { describe, expect, it } from '@jest/globals';
import { RecurrenceError } from './recurrence-error.js';
import { type Frequency, parseRRule, validateRuleForFrequency } from './rrule-parser.js';

const FIELD = 'Recurrence.Pattern';

function failure(run: () => unknown): string {
  try {
    run();
  } catch (e) {
    if (e instanceof RecurrenceError) return `${e.field}: ${e.message}`;
    throw e;
  }
  return 'no error';
}

describe('parseRRule (RFC 5545 §3.3.10 syntax)', () => {
  it('parses every rule part', () => {
    expect(
      parseRRule(
        'RRULE:FREQ=YEARLY;INTERVAL=2;COUNT=10;BYSECOND=0,30;BYMINUTE=15;BYHOUR=9,17;BYDAY=MO,-1FR,+2TU;BYMONTHDAY=1,-1;BYYEARDAY=100,-100;BYWEEKNO=20,-1;BYMONTH=3,6;BYSETPOS=1,-1;WKST=SU',
        FIELD,
      ),
    ).toEqual({
      freq: 'YEARLY',
      interval: 2,
      count: 10,
      bySecond: [0, 30],
      byMinute: [15],
      byHour: [9, 17],
      byDay: [
        { weekday: 0, ordinal: 0 },
        { weekday: 4, ordinal: -1 },
        { weekday: 1, ordinal: 2 },
      ],
      byMonthDay: [1, -1],
      byYearDay: [100, -100],
      byWeekNo: [20, -1],
      byMonth: [3, 6],
      bySetPos: [1, -1],
      wkst: 6,
    });
  });

  it('is case-insensitive, tolerates spaces and a trailing semicolon, ignores X- parts and drops repeated values', () => {
    expect(parseRRule(' freq=weekly; byday=mo,MO,we ; x-name=anything;', FIELD)).toEqual({
      freq: 'WEEKLY',
      byDay: [
        { weekday: 0, ordinal: 0 },
        { weekday: 2, ordinal: 0 },
      ],
    });
  });

  it.each([
    ['UNTIL=19971224T000000Z', { kind: 'instant', ms: Date.UTC(1997, 11, 24) }],
    ['UNTIL=19971224T090000', { kind: 'wall', ms: Date.UTC(1997, 11, 24, 9) }],
    ['UNTIL=19971224', { kind: 'date', days: Date.UTC(1997, 11, 24) / 86_400_000 }],
  ])('%s', (part, until) => {
    expect(parseRRule(`FREQ=DAILY;${part}`, FIELD).until).toEqual(until);
  });

  it.each([
    ['', 'the rule is empty'],
    ['RRULE:', 'the rule is empty'],
    ['FREQ', 'is not NAME=VALUE'],
    ['FREQ=', 'FREQ has no value'],
    ['FREQ=DAILY;FREQ=DAILY', 'FREQ occurs more than once'],
    ['FREQ=BIWEEKLY', 'FREQ "BIWEEKLY" is not one of'],
    ['FREQ=DAILY;INTERVAL=-1', 'INTERVAL "-1" is not a positive integer'],
    ['FREQ=DAILY;INTERVAL=1.5', 'INTERVAL "1.5" is not a positive integer'],
    ['FREQ=DAILY;COUNT=0', 'COUNT "0" is not a positive integer'],
    ['FREQ=DAILY;UNTIL=tomorrow', 'UNTIL "tomorrow" is not a date or date-time'],
    ['FREQ=DAILY;COUNT=1;UNTIL=20250101', 'COUNT and UNTIL must not both be given'],
    ['FREQ=DAILY;BYSECOND=61', 'BYSECOND value "61"'],
    ['FREQ=DAILY;BYMINUTE=60', 'BYMINUTE value "60"'],
    ['FREQ=DAILY;BYHOUR=-1', 'BYHOUR value "-1"'],
    ['FREQ=MONTHLY;BYMONTHDAY=32', 'BYMONTHDAY value "32"'],
    ['FREQ=YEARLY;BYYEARDAY=0', 'BYYEARDAY value "0"'],
    ['FREQ=YEARLY;BYWEEKNO=54', 'BYWEEKNO value "54"'],
    ['FREQ=YEARLY;BYMONTH=13', 'BYMONTH value "13"'],
    ['FREQ=MONTHLY;BYDAY=FR;BYSETPOS=367', 'BYSETPOS value "367"'],
    ['FREQ=MONTHLY;BYDAY=0MO', 'BYDAY value "0MO"'],
    ['FREQ=MONTHLY;BYDAY=54MO', 'BYDAY value "54MO"'],
    ['FREQ=MONTHLY;BYDAY=+MO', 'BYDAY value "+MO"'],
    ['FREQ=MONTHLY;BYDAY=MON', 'BYDAY value "MON"'],
    ['FREQ=WEEKLY;WKST=XX', 'WKST value "XX"'],
    ['FREQ=DAILY;BYEASTER=1', 'BYEASTER is not a recurrence rule part'],
    ['FREQ=DAILY;BYHOUR=', 'BYHOUR has no value'],
    ['FREQ=DAILY;BYHOUR=9,,10', 'BYHOUR value ""'],
  ])('%j → %s', (rule, message) => {
    expect(failure(() => parseRRule(rule, FIELD))).toContain(`${FIELD}: `);
    expect(failure(() => parseRRule(rule, FIELD))).toContain(message);
  });
});

describe('validateRuleForFrequency (FREQ-dependent rules of RFC 5545 §3.3.10)', () => {
  it.each<[string, Frequency, string | undefined]>([
    ['BYWEEKNO=1', 'YEARLY', undefined],
    ['BYWEEKNO=1', 'MONTHLY', 'BYWEEKNO is only allowed with FREQ=YEARLY'],
    ['BYYEARDAY=1', 'HOURLY', undefined],
    ['BYYEARDAY=1', 'DAILY', 'BYYEARDAY is not allowed with FREQ=DAILY'],
    ['BYYEARDAY=1', 'WEEKLY', 'BYYEARDAY is not allowed with FREQ=WEEKLY'],
    ['BYYEARDAY=1', 'MONTHLY', 'BYYEARDAY is not allowed with FREQ=MONTHLY'],
    ['BYMONTHDAY=1', 'WEEKLY', 'BYMONTHDAY is not allowed with FREQ=WEEKLY'],
    ['BYMONTHDAY=1', 'DAILY', undefined],
    ['BYDAY=-1FR', 'MONTHLY', undefined],
    ['BYDAY=20MO', 'YEARLY', undefined],
    ['BYDAY=1MO', 'WEEKLY', 'only allowed with FREQ=MONTHLY or YEARLY'],
    ['BYDAY=1MO;BYWEEKNO=2', 'YEARLY', 'not allowed together with BYWEEKNO'],
    ['BYSETPOS=1', 'MONTHLY', 'BYSETPOS must be used together with another BYxxx rule part'],
    ['BYSETPOS=1;BYHOUR=9,10', 'DAILY', undefined],
  ])('%s with FREQ=%s', (rule, freq, message) => {
    const outcome = failure(() => validateRuleForFrequency(parseRRule(rule, FIELD), freq, FIELD));
    if (message === undefined) expect(outcome).toBe('no error');
    else expect(outcome).toContain(message);
  });
});
