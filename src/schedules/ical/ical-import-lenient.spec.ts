// What lenient readers take — several VCALENDARs in one body, VTIMEZONEs written as lists of
// onsets, malformed lines of properties the service does not store.
import { describe, expect, it } from '@jest/globals';
import { IcalImportError, importCalendar } from './ical-import.js';

function calendar(...lines: string[]): string[] {
  return ['BEGIN:VCALENDAR', 'VERSION:2.0', ...lines, 'END:VCALENDAR'];
}

function event(...lines: string[]): string[] {
  return ['BEGIN:VEVENT', ...lines, 'END:VEVENT'];
}

function body(...lines: string[]): string {
  return [...lines, ''].join('\r\n');
}

/** A VTIMEZONE of one fixed offset under a TZID no zone database knows. */
function fixedZone(tzid: string, offset: string): string[] {
  return [
    'BEGIN:VTIMEZONE',
    `TZID:${tzid}`,
    'BEGIN:STANDARD',
    'DTSTART:19700101T000000',
    `TZOFFSETFROM:${offset}`,
    `TZOFFSETTO:${offset}`,
    'END:STANDARD',
    'END:VTIMEZONE',
  ];
}

function problems(text: string): string[] {
  try {
    importCalendar(text);
  } catch (error) {
    if (error instanceof IcalImportError) return error.problems.map((p) => `line ${p.line}: ${p.message}`);
    throw error;
  }
  throw new Error('imported without a problem');
}

describe('several VCALENDARs in one body', () => {
  it('imports the events of every VCALENDAR, in file order', () => {
    const imported = importCalendar(
      body(
        ...calendar(...event('UID:a', 'SUMMARY:A', 'DTSTART:20260105T090000Z')),
        ...calendar(...event('UID:b', 'SUMMARY:B', 'DTSTART;VALUE=DATE:20260106')),
        ...calendar(...event('UID:c', 'SUMMARY:C', 'DTSTART:20260107T090000Z', 'RRULE:FREQ=DAILY;COUNT=2')),
      ),
    );
    expect(imported.ScheduleItems.map((item) => item.Name)).toEqual(['A', 'B', 'C']);
    expect(imported.sources.map((source) => [source.uid, source.line])).toEqual([
      ['a', 3],
      ['b', 11],
      ['c', 19],
    ]);
    expect(imported.skipped).toEqual([]);
  });

  it("reads each event's TZID with the VTIMEZONE of its own VCALENDAR, also when the TZID repeats", () => {
    const imported = importCalendar(
      body(
        ...calendar(
          ...fixedZone('Office', '+0300'),
          ...event('UID:a', 'DTSTART;TZID=Office:20260105T090000'),
        ),
        ...calendar(
          ...fixedZone('Office', '-0500'),
          ...event('UID:b', 'DTSTART;TZID=Office:20260105T090000'),
        ),
      ),
    );
    expect(imported.ScheduleItems.map((item) => item.Start)).toEqual([
      '2026-01-05T09:00:00+03:00',
      '2026-01-05T09:00:00-05:00',
    ]);
  });

  it("does not lend one VCALENDAR's VTIMEZONE to another", () => {
    const imported = importCalendar(
      body(
        ...calendar(
          ...fixedZone('Office', '+0300'),
          ...event('UID:a', 'DTSTART;TZID=Office:20260105T090000'),
        ),
        ...calendar(...event('UID:b', 'DTSTART;TZID=Office:20260105T090000')),
      ),
    );
    expect(imported.ScheduleItems).toHaveLength(1);
    expect(imported.skipped).toEqual([
      expect.objectContaining({
        line: 18,
        uid: 'b',
        reason: expect.stringMatching(/^line 20: .*no VTIMEZONE for it/),
      }),
    ]);
  });

  it('reads floating times in the X-WR-TIMEZONE of their own VCALENDAR', () => {
    const imported = importCalendar(
      body(
        ...calendar('X-WR-TIMEZONE:Europe/Berlin', ...event('UID:a', 'DTSTART:20260105T090000')),
        ...calendar('X-WR-TIMEZONE:America/New_York', ...event('UID:b', 'DTSTART:20260105T090000')),
        ...calendar(...event('UID:c', 'DTSTART:20260105T090000')),
      ),
    );
    expect(imported.ScheduleItems.map((item) => [item.Start, item.StartTimeZone])).toEqual([
      ['2026-01-05T09:00:00+01:00', 'Europe/Berlin'],
      ['2026-01-05T09:00:00-05:00', 'America/New_York'],
      ['2026-01-05T09:00:00Z', 'UTC'],
    ]);
  });

  it('takes the newest version of an event that two VCALENDARs both hold', () => {
    const imported = importCalendar(
      body(
        ...calendar(...event('UID:a', 'SEQUENCE:1', 'SUMMARY:old', 'DTSTART:20260105T090000Z')),
        ...calendar(...event('UID:a', 'SEQUENCE:2', 'SUMMARY:new', 'DTSTART:20260105T090000Z')),
      ),
    );
    expect(imported.ScheduleItems.map((item) => item.Name)).toEqual(['new']);
    expect(imported.skipped.map((entry) => entry.line)).toEqual([3]);
  });

  it('still refuses content between the VCALENDARs, and a body in which none has anything importable', () => {
    expect(
      problems(
        body(...calendar(...event('UID:a', 'DTSTART:20260105T090000Z')), 'BEGIN:VEVENT', 'END:VEVENT'),
      ),
    ).toEqual([
      'line 8: BEGIN:VEVENT outside a VCALENDAR (after the END:VCALENDAR of the one that begins at line 1)',
    ]);
    expect(problems(body(...calendar(...event('UID:a', 'DTSTART:20260105T090000Z')), 'X-JUNK:1'))).toEqual([
      'line 8: content after END:VCALENDAR',
    ]);
    expect(
      problems(body(...calendar(...event('UID:a', 'DTSTART:2026')), ...calendar(...event('UID:b')))),
    ).toEqual([
      'line 5: "2026" is not a date-time (YYYYMMDDTHHMMSS, Z for UTC)',
      'line 10: a VEVENT without DTSTART',
    ]);
  });
  it('leaves out a VCALENDAR that is an iTIP message or not version 2.0, imports the others and reports it', () => {
    const imported = importCalendar(
      body(
        ...calendar(...event('UID:a', 'SUMMARY:A', 'DTSTART:20260105T090000Z')),
        ...calendar('METHOD:CANCEL', ...event('UID:a', 'SEQUENCE:3', 'DTSTART:20260105T090000Z')),
        ...[
          'BEGIN:VCALENDAR',
          'VERSION:1.0',
          ...event('UID:v1', 'DTSTART:20260106T090000Z'),
          'END:VCALENDAR',
        ],
        ...calendar(...event('UID:c', 'SUMMARY:C', 'DTSTART:20260107T090000Z')),
      ),
    );
    expect(imported.ScheduleItems.map((item) => item.Name)).toEqual(['A', 'C']);
    expect(imported.skipped.map((entry) => [entry.line, entry.component, entry.reason])).toEqual([
      [
        9,
        'VCALENDAR',
        'line 11: METHOD: METHOD:CANCEL is a scheduling message about events (RFC 5546), not a calendar of events to import',
      ],
      [18, 'VCALENDAR', 'line 19: VERSION: "1.0" is not 2.0; only iCalendar 2.0 (RFC 5545) can be imported'],
    ]);
  });

  it('refuses a body whose only VCALENDAR, or every VCALENDAR, is no calendar of events', () => {
    expect(
      problems(body(...calendar('METHOD:REPLY', ...event('UID:a', 'DTSTART:20260105T090000Z')))),
    ).toEqual([
      'line 3: METHOD:REPLY is a scheduling message about events (RFC 5546), not a calendar of events to import',
    ]);
    expect(
      problems(
        body(
          ...calendar('METHOD:CANCEL', ...event('UID:a', 'DTSTART:20260105T090000Z')),
          ...calendar('METHOD:CANCEL', ...event('UID:b', 'DTSTART:20260105T090000Z')),
        ),
      ),
    ).toEqual([
      'line 3: METHOD:CANCEL is a scheduling message about events (RFC 5546), not a calendar of events to import',
      'line 11: METHOD:CANCEL is a scheduling message about events (RFC 5546), not a calendar of events to import',
    ]);
  });
});

describe('a VTIMEZONE whose observances are lists of onsets (RDATE, no RRULE)', () => {
  // Central European rules for 2025–2027 spelled as dates, under a name no zone database knows.
  const listed = [
    'BEGIN:VTIMEZONE',
    'TZID:Feed time',
    'BEGIN:STANDARD',
    'DTSTART:20251026T030000',
    'TZOFFSETFROM:+0200',
    'TZOFFSETTO:+0100',
    'RDATE:20261025T030000,20271031T030000',
    'END:STANDARD',
    'BEGIN:DAYLIGHT',
    'DTSTART:20250330T020000',
    'TZOFFSETFROM:+0100',
    'TZOFFSETTO:+0200',
    'RDATE:20260329T020000,20270328T020000',
    'END:DAYLIGHT',
    'END:VTIMEZONE',
  ];

  it('follows every listed date and DTSTART, the first onset', () => {
    const imported = importCalendar(
      body(
        ...calendar(
          ...listed,
          ...event('UID:summer', 'DTSTART;TZID=Feed time:20260706T090000'),
          ...event('UID:winter', 'DTSTART;TZID=Feed time:20261207T090000'),
          ...event('UID:spring', 'DTSTART;TZID=Feed time:20270406T090000'),
        ),
      ),
    );
    expect(imported.skipped).toEqual([]);
    expect(imported.ScheduleItems.map((item) => item.Start)).toEqual([
      '2026-07-06T09:00:00+02:00',
      '2026-12-07T09:00:00+01:00',
      '2027-04-06T09:00:00+02:00',
    ]);
  });

  it('keeps the offset of the last listed onset afterwards', () => {
    const imported = importCalendar(
      body(...calendar(...listed, ...event('UID:later', 'DTSTART;TZID=Feed time:20280706T090000'))),
    );
    // After 31 Oct 2027 the zone says +01:00 for good (no rule continues it).
    expect(imported.ScheduleItems[0].Start).toBe('2028-07-06T09:00:00+01:00');
  });
});

describe('malformed lines of properties the service does not store', () => {
  it('leaves them out of the event, reports each, and imports the event', () => {
    const imported = importCalendar(
      body(
        ...calendar(
          ...event(
            'UID:kept',
            'SUMMARY:Standup',
            'ORGANIZER="mailto:lead@example.com"',
            'DTSTART:20260105T090000Z',
            'X-APPLE-RADIUS=49.91',
            'ATTENDEE;CN="Unclosed:mailto:a@example.com',
            'GEO:not;a;position',
            'RRULE:FREQ=DAILY;COUNT=3',
            'BEGIN:VALARM',
            'ACTION:DISPLAY',
            'DESCRIPTION="reminder"',
            'TRIGGER:-PT15M',
            'END:VALARM',
          ),
        ),
      ),
    );
    expect(imported.ScheduleItems).toMatchObject([
      { Name: 'Standup', Recurrence: { Pattern: 'FREQ=DAILY;COUNT=3' } },
    ]);
    expect(imported.skipped.map(({ line, component, uid }) => [line, component, uid])).toEqual([
      [6, 'ORGANIZER', 'kept'],
      [8, 'X-APPLE-RADIUS', 'kept'],
      [9, 'ATTENDEE', 'kept'],
      [14, 'DESCRIPTION', 'kept'],
    ]);
    expect(imported.skipped[0].reason).toBe(
      'line 6: ORGANIZER: is not a content line NAME[;PARAM=…]:VALUE; left out, the VEVENT is imported without it',
    );
  });

  it('leaves out a malformed SUMMARY: the item has no Name', () => {
    const imported = importCalendar(
      body(...calendar(...event('UID:a', 'SUMMARY=testevent', 'DTSTART:20260105T090000Z'))),
    );
    expect(imported.ScheduleItems).toMatchObject([{ Name: null, Start: '2026-01-05T09:00:00Z' }]);
    expect(imported.skipped).toEqual([expect.objectContaining({ line: 5, component: 'SUMMARY', uid: 'a' })]);
  });

  it("leaves out a malformed line of the calendar's own", () => {
    const imported = importCalendar(
      body(
        ...calendar(
          'REFRESH - INTERVAL; VALUE = DURATION:PT48H',
          ...event('UID:a', 'DTSTART:20260105T090000Z'),
        ),
      ),
    );
    expect(imported.ScheduleItems).toHaveLength(1);
    expect(imported.skipped).toEqual([
      {
        line: 3,
        component: 'REFRESH',
        uid: null,
        reason: expect.stringMatching(/^line 3: REFRESH: .*left out, the calendar is imported without it$/),
      },
    ]);
  });

  it('still skips an event whose DTSTART or RRULE line is malformed, and refuses when nothing else remains', () => {
    const valid = event('UID:ok', 'DTSTART:20260105T090000Z');
    const imported = importCalendar(
      body(
        ...calendar(
          ...event('UID:start', 'DTSTART;TZID="Broken:20260105T090000'),
          ...event('UID:rule', 'DTSTART:20260105T090000Z', 'RRULE;X-A="open:FREQ=DAILY'),
          ...valid,
        ),
      ),
    );
    expect(imported.ScheduleItems).toHaveLength(1);
    expect(imported.skipped.map(({ line, component, uid }) => [line, component, uid])).toEqual([
      [3, 'VEVENT', 'start'],
      [7, 'VEVENT', 'rule'],
    ]);
    expect(
      problems(body(...calendar(...event('UID:start', 'X-A=1', 'DTSTART;TZID="Broken:20260105T090000')))),
    ).toEqual([expect.stringMatching(/^line 6: cannot be parsed/)]);
  });
});

describe('an all-day DTSTART with a date-time DTEND (Mozilla’s holiday feeds)', () => {
  it('is all-day, ending with the day the date-time falls on as written, and the reading is reported', () => {
    const imported = importCalendar(
      body(
        ...calendar(
          'X-WR-TIMEZONE:Europe/Vienna',
          ...event(
            'UID:m',
            'DTSTART;VALUE=DATE:20020106',
            'DTEND:20020106T235900Z',
            'RRULE:FREQ=YEARLY;BYMONTH=1',
          ),
          ...event('UID:n', 'DTSTART;VALUE=DATE:20260105', 'DTEND:20260107T000000'),
          ...event('UID:o', 'DTSTART;VALUE=DATE:20260105', 'DTEND;TZID=America/New_York:20260105T090000'),
        ),
      ),
    );
    expect(
      imported.ScheduleItems.map(({ Start, End, AllDay, Recurrence }) => [Start, End, AllDay, Recurrence]),
    ).toEqual([
      [
        '2002-01-06T00:00:00+01:00',
        '2002-01-07T00:00:00+01:00',
        true,
        expect.objectContaining({ Pattern: 'FREQ=YEARLY;BYMONTH=1', Duration: 'P1D' }),
      ],
      // Midnight ends the day before it.
      ['2026-01-05T00:00:00+01:00', '2026-01-07T00:00:00+01:00', true, null],
      ['2026-01-05T00:00:00+01:00', '2026-01-06T00:00:00+01:00', true, null],
    ]);
    expect(
      imported.skipped.map(({ line, component, uid, reason }) => [line, component, uid, reason]),
    ).toEqual([
      [
        7,
        'DTEND',
        'm',
        'line 7: DTEND: a date-time where DTSTART is a date (RFC 5545 §3.8.2.2: the same value type): read as ' +
          'DTEND;VALUE=DATE:20020107, the end of the day it falls on; the event is imported all-day',
      ],
      [13, 'DTEND', 'n', expect.stringContaining('read as DTEND;VALUE=DATE:20260107,')],
      [18, 'DTEND', 'o', expect.stringContaining('read as DTEND;VALUE=DATE:20260106,')],
    ]);
  });

  it('still skips one that ends before the day begins, and a date DTEND on a date-time DTSTART', () => {
    expect(
      problems(
        body(
          ...calendar(
            ...event('UID:b', 'DTSTART;VALUE=DATE:20260105', 'DTEND:20260104T120000Z'),
            ...event('UID:d', 'DTSTART:20260105T090000Z', 'DTEND;VALUE=DATE:20260106'),
          ),
        ),
      ),
    ).toEqual(['line 6: is before DTSTART', 'line 11: must be a date-time like DTSTART, not a date']);
  });
});
