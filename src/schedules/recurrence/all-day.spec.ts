import { describe, expect, it } from '@jest/globals';
import { basicDate, dayStart, isDayStart, isoDate, localDay } from './all-day.js';
import { RecurrenceError } from './recurrence-error.js';
import { type ScheduleItemInput, compileSeries } from './series-compiler.js';
import { zoneRules } from './time-zone.js';

const t = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

/** A weekly all-day Monday in Berlin from 5 January 2026 (one day) unless overridden. */
function allDay(item: Partial<ScheduleItemInput> = {}, recurrence: ScheduleItemInput['Recurrence'] = {}) {
  return {
    Start: '2026-01-05T00:00:00+01:00',
    End: '2026-01-06T00:00:00+01:00',
    StartTimeZone: 'Europe/Berlin',
    AllDay: true,
    ...item,
    Recurrence: recurrence === null ? null : { Pattern: 'FREQ=WEEKLY', ...recurrence },
  } satisfies ScheduleItemInput;
}

function fieldOf(item: ScheduleItemInput): string | undefined {
  try {
    compileSeries(item);
    return undefined;
  } catch (error) {
    if (error instanceof RecurrenceError) return error.field;
    throw error;
  }
}

describe('day starts', () => {
  const berlin = zoneRules('Europe/Berlin');
  // Chile moved its clocks forward at midnight (2022-09-11 00:00 → 01:00): that day starts at 01:00.
  const santiago = zoneRules('America/Santiago');

  it('names the local day and its first instant', () => {
    expect(isoDate(localDay(berlin, t('2026-01-04T23:00:00Z')))).toBe('2026-01-05');
    expect(basicDate(localDay(berlin, t('2026-01-04T22:59:59Z')))).toBe('20260104');
    expect(iso(dayStart(berlin, localDay(berlin, t('2026-03-29T12:00:00Z'))))).toBe(
      '2026-03-28T23:00:00.000Z',
    );
    expect(isDayStart(berlin, t('2026-01-04T23:00:00Z'))).toBe(true);
    expect(isDayStart(berlin, t('2026-01-05T00:00:00Z'))).toBe(false);
  });

  it('takes the instant the clock jumps to as the start of a day whose midnight a DST change skips', () => {
    const day = localDay(santiago, t('2022-09-11T12:00:00Z'));
    expect(iso(dayStart(santiago, day))).toBe('2022-09-11T04:00:00.000Z'); // 01:00 -03:00
    expect(isDayStart(santiago, t('2022-09-11T04:00:00Z'))).toBe(true);
  });
});

describe('AllDay items in the engine', () => {
  it('accepts whole days and lasts whole local days across DST (23 and 25 hours)', () => {
    const series = compileSeries(allDay({}, { Pattern: 'FREQ=WEEKLY;BYDAY=SU' }));
    const around = series.occurrencesIn(t('2026-03-28T00:00:00Z'), t('2026-04-06T00:00:00Z'), 10);
    expect(around.map((o) => [iso(o.start), iso(o.end)])).toEqual([
      // DTSTART is Monday 5 January and the rule picks Sundays; the 29 March Sunday has 23 hours.
      ['2026-03-28T23:00:00.000Z', '2026-03-29T22:00:00.000Z'],
      ['2026-04-04T22:00:00.000Z', '2026-04-05T22:00:00.000Z'],
    ]);
    const autumn = compileSeries(
      allDay({ Start: '2026-10-24T00:00:00+02:00', End: '2026-10-26T00:00:00+01:00' }),
    );
    // Two days, 49 hours the first time (25 October has 25 hours), every week.
    const [first] = autumn.occurrencesIn(t('2026-10-20T00:00:00Z'), t('2026-10-27T00:00:00Z'), 5);
    expect([iso(first.start), iso(first.end)]).toEqual([
      '2026-10-23T22:00:00.000Z',
      '2026-10-25T23:00:00.000Z',
    ]);
    const [later] = autumn.occurrencesIn(t('2026-11-01T00:00:00Z'), t('2026-11-02T00:00:00Z'), 5);
    expect([iso(later.start), iso(later.end)]).toEqual([
      '2026-10-30T23:00:00.000Z',
      '2026-11-01T23:00:00.000Z',
    ]);
  });

  it('lets an exception move one occurrence to a time of day', () => {
    expect(
      fieldOf(
        allDay(
          {},
          {
            Exceptions: [
              {
                OriginalTime: '2026-01-12T00:00:00',
                NewStart: '2026-01-12T09:00:00',
                NewEnd: '2026-01-12T10:00:00',
              },
            ],
          },
        ),
      ),
    ).toBeUndefined();
  });

  it.each<[string, ScheduleItemInput, string]>([
    ['a Start at 09:00', allDay({ Start: '2026-01-05T09:00:00+01:00' }), 'Start'],
    ['a Start at UTC midnight in Berlin', allDay({ Start: '2026-01-05T00:00:00Z' }), 'Start'],
    ['no End', allDay({ End: null }), 'End'],
    ['an End at noon', allDay({ End: '2026-01-06T12:00:00+01:00' }), 'End'],
    ['End = Start', allDay({ End: '2026-01-05T00:00:00+01:00' }, null), 'End'],
    ['a StartTime at 09:00', allDay({}, { StartTime: '2026-01-05T09:00:00' }), 'Recurrence.StartTime'],
    ['a Duration of hours', allDay({}, { Duration: 'PT24H' }), 'Recurrence.Duration'],
    ['an Offset of hours', allDay({}, { Offset: '-PT1H' }), 'Recurrence.Offset'],
    ['FREQ=HOURLY', allDay({}, { Pattern: 'FREQ=HOURLY' }), 'Recurrence.Pattern'],
    ['BYHOUR', allDay({}, { Pattern: 'FREQ=DAILY;BYHOUR=9' }), 'Recurrence.Pattern'],
    [
      'an RDATE at 09:00',
      allDay({}, { RecurrenceDates: ['2026-01-07T00:00:00', '2026-01-08T09:00:00'] }),
      'Recurrence.RecurrenceDates[1]',
    ],
    [
      'an EXDATE at 09:00',
      allDay({}, { ExceptionDates: ['2026-01-12T09:00:00'] }),
      'Recurrence.ExceptionDates[0]',
    ],
  ])('refuses %s, naming the field', (_name, item, field) => {
    expect(fieldOf(item)).toBe(field);
  });

  it.each<[string, ScheduleItemInput]>([
    [
      'a single day in UTC',
      allDay({ Start: '2026-01-05T00:00:00Z', End: '2026-01-06T00:00:00Z', StartTimeZone: null }, null),
    ],
    [
      'whole-day Duration and Offset',
      allDay({}, { Duration: 'P2D', Offset: '-P1D', StartTime: '2026-01-05T00:00:00' }),
    ],
    [
      'midnight RDATE and EXDATE',
      allDay({}, { RecurrenceDates: ['2026-01-07T00:00:00'], ExceptionDates: ['2026-01-11T23:00:00Z'] }),
    ],
    [
      'the same times without AllDay',
      { ...allDay({ Start: '2026-01-05T09:00:00+01:00' }, { Pattern: 'FREQ=HOURLY' }), AllDay: false },
    ],
  ])('accepts %s', (_name, item) => {
    expect(fieldOf(item)).toBeUndefined();
  });
});
