// iCalendar identity: the export writes the UID and SEQUENCE an import read, and a UID derived
// from the id for schedules written as JSON, so importing the service's own export updates the schedules it came
// from instead of adding copies. Fixtures: test/fixtures/ical (sources in SOURCES.md).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { oneOff, scheduleBody, scheduleItem } from './factories/schedule.factory.js';
import { ADMIN_KEY, startTestApp, type TestApp } from './support/test-app.js';

const AUTH = { authorization: `Bearer ${ADMIN_KEY}` };
const FIXTURES = new URL('./fixtures/ical/', import.meta.url);
const fixture = (name: string) => readFileSync(new URL(name, FIXTURES), 'utf8');

interface Imported {
  Id: string;
  Uid: string;
  Line: number;
  Status: 'Created' | 'Updated';
}

/** The unfolded content lines of a calendar. */
const linesOf = (calendar: string) => calendar.replace(/\r\n[ \t]/g, '').split('\r\n');

describe('iCalendar identity: export → import round trip', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  async function importIcal(body: string): Promise<Imported[]> {
    const response = await t.request({
      method: 'POST',
      url: '/api/v1/Schedule/import',
      headers: { ...AUTH, 'content-type': 'text/calendar; charset=utf-8' },
      payload: body,
    });
    expect([response.statusCode, response.body]).toEqual([201, expect.any(String)]);
    return response.json().Schedules as Imported[];
  }

  async function exportIcal(ids: readonly string[]): Promise<string> {
    const response = await t.request({
      method: 'GET',
      url: `/api/v1/Schedule/ical?ids=${ids.join(',')}`,
      headers: AUTH,
    });
    expect(response.statusCode).toBe(200);
    return response.body;
  }

  /** The schedule's occurrences (start, end) over 2020–2027: what must survive the round trip (texts may differ). */
  async function itemsOf(id: string): Promise<string[]> {
    const range = 'Start=2020-01-01T00:00:00Z&End=2027-01-01T00:00:00Z';
    const response = await t.request({
      method: 'GET',
      url: `/api/v1/Occurrence?ScheduleIds=${id}&${range}`,
      headers: AUTH,
    });
    expect(response.statusCode).toBe(200);
    const occurrences = response.json().Result as Array<{ Start: string; End: string }>;
    expect(occurrences.length).toBeGreaterThan(0);
    return occurrences.map((o) => `${o.Start}/${o.End}`);
  }

  async function scheduleCount(): Promise<number> {
    const response = await t.request({ method: 'GET', url: '/api/v1/Schedule?PageSize=1', headers: AUTH });
    expect(response.statusCode).toBe(200);
    // One schedule a page: the page count is the schedule count.
    return response.json().TotalPages as number;
  }

  it('keeps the imported UIDs and SEQUENCE; importing the export updates the same schedules', async () => {
    const first = await importIcal(fixture('google-weekly-exdate-lines-utc.ics'));
    const google = await importIcal(fixture('google-monthly-lastfri-moved-override.ics'));
    const imported = [...first, ...google];
    expect(imported.every((s) => s.Status === 'Created')).toBe(true);
    const ids = imported.map((s) => s.Id);
    const before = await Promise.all(ids.map(itemsOf));
    const count = await scheduleCount();

    const exported = await exportIcal(ids);
    const lines = linesOf(exported);
    const uids = lines.filter((line) => line.startsWith('UID:')).map((line) => line.slice(4));
    // Every master and override carries its series' UID as imported.
    expect([...new Set(uids)].sort()).toEqual([...new Set(imported.map((s) => s.Uid))].sort());
    // The Google series' master had SEQUENCE:2 (its override 3, stored as an exception of the series).
    const googleEvents = exported.split('BEGIN:VEVENT').filter((event) => event.includes(google[0].Uid));
    expect(googleEvents.length).toBeGreaterThan(0);
    for (const event of googleEvents) expect(linesOf(event)).toContain('SEQUENCE:2');

    const again = await importIcal(exported);
    expect(again.map((s) => [s.Id, s.Status])).toEqual(ids.map((id) => [id, 'Updated']));
    expect(await scheduleCount()).toBe(count);
    expect(await Promise.all(ids.map(itemsOf))).toEqual(before);
    // And the export after the round trip names the events the same way.
    expect(linesOf(await exportIcal(ids)).filter((line) => /^(UID|SEQUENCE):/.test(line))).toEqual(
      lines.filter((line) => /^(UID|SEQUENCE):/.test(line)),
    );
  });

  it('gives a schedule written as JSON a UID from its id; importing its export updates it', async () => {
    const created = await t.post('/api/v1/Schedule', {
      ScheduleItems: [
        {
          Name: 'Stand-up',
          Start: '2026-01-05T09:00:00',
          End: '2026-01-05T09:15:00',
          StartTimeZone: 'Europe/Berlin',
          Recurrence: { Pattern: 'FREQ=WEEKLY;BYDAY=MO,WE;COUNT=10' },
        },
      ],
    });
    expect(created.statusCode).toBe(201);
    const id = created.json().Result.Id as string;
    const before = await itemsOf(id);
    const exported = await exportIcal([id]);
    expect(linesOf(exported)).toContain(`UID:${id}@schedules.platform-api`);
    const count = await scheduleCount();

    for (let round = 0; round < 2; round++) {
      // The first round finds the schedule by its derived UID, the second by the key the first stored.
      const again = await importIcal(round === 0 ? exported : await exportIcal([id]));
      expect(again).toEqual([
        { Id: id, Uid: `${id}@schedules.platform-api`, Line: expect.any(Number), Status: 'Updated' },
      ]);
      expect(await scheduleCount()).toBe(count);
      expect(await itemsOf(id)).toEqual(before);
    }
  });

  it('a JSON schedule of several items: importing its export updates it, its items in order', async () => {
    const created = await t.post(
      '/api/v1/Schedule',
      scheduleBody(
        scheduleItem({ Name: 'one' }),
        scheduleItem({ Name: 'two', Start: '2026-01-06T14:00:00+01:00', End: '2026-01-06T15:00:00+01:00' }),
        oneOff('2026-03-01T08:00:00Z', '2026-03-01T09:30:00Z'),
      ),
    );
    expect(created.statusCode).toBe(201);
    const id = created.json().Result.Id as string;
    const before = await itemsOf(id);
    const count = await scheduleCount();
    const names = async () => {
      const response = await t.request({ method: 'GET', url: `/api/v1/Schedule/${id}`, headers: AUTH });
      expect(response.statusCode).toBe(200);
      return (response.json().Result.ScheduleItems as Array<{ Name: string }>).map((item) => item.Name);
    };
    expect(await names()).toEqual(['one', 'two', 'one-off']);
    const exported = await exportIcal([id]);
    const uid = `${id}@schedules.platform-api`;
    expect(linesOf(exported).filter((line) => line.startsWith('UID:'))).toEqual([
      `UID:${uid}`,
      `UID:${uid}#1`,
      `UID:${uid}#2`,
    ]);

    for (let round = 0; round < 2; round++) {
      // The second round imports the export written after the first (the schedule now has the UID stored).
      const again = await importIcal(round === 0 ? exported : await exportIcal([id]));
      expect(again).toEqual([{ Id: id, Uid: uid, Line: expect.any(Number), Status: 'Updated' }]);
      expect(await scheduleCount()).toBe(count);
      expect(await names()).toEqual(['one', 'two', 'one-off']);
      expect(await itemsOf(id)).toEqual(before);
    }
  });

  it('a JSON schedule of several items whose export lost a VEVENT is left alone: the rest import as new', async () => {
    const created = await t.post(
      '/api/v1/Schedule',
      scheduleBody(scheduleItem({ Name: 'kept' }), scheduleItem({ Name: 'dropped' })),
    );
    expect(created.statusCode).toBe(201);
    const id = created.json().Result.Id as string;
    const before = await itemsOf(id);
    const exported = await exportIcal([id]);
    // Only the first VEVENT: replacing the schedule's two items by it would drop the other.
    const first =
      exported.slice(0, exported.indexOf('BEGIN:VEVENT', exported.indexOf('END:VEVENT'))) +
      'END:VCALENDAR\r\n';
    const again = await importIcal(first);
    expect(again.map((s) => s.Status)).toEqual(['Created']);
    expect(again[0].Id).not.toBe(id);
    expect(await itemsOf(id)).toEqual(before);
  });

  it('keys held by earlier copies win over the id: re-importing the export updates the copies, not the schedule', async () => {
    const created = await t.post(
      '/api/v1/Schedule',
      scheduleBody(
        scheduleItem({ Name: 'a' }),
        scheduleItem({ Name: 'b', Start: '2026-01-06T14:00:00+01:00', End: '2026-01-06T15:00:00+01:00' }),
      ),
    );
    expect(created.statusCode).toBe(201);
    const id = created.json().Result.Id as string;
    const before = await itemsOf(id);
    const exported = await exportIcal([id]);
    // Imported once without the ids (another client passed it on): copies, each holding its series' key.
    const copies = await importIcal(exported.replace(/\r\nX-PLATFORM-SCHEDULE-ID:[^\r]*/g, ''));
    expect(copies.map((s) => s.Status)).toEqual(['Created', 'Created']);
    const count = await scheduleCount();
    const again = await importIcal(exported);
    expect(again.map((s) => [s.Id, s.Status])).toEqual(copies.map((s) => [s.Id, 'Updated']));
    expect(await scheduleCount()).toBe(count);
    expect(await itemsOf(id)).toEqual(before);
  });

  describe('series that share a UID', () => {
    /** Two series with one UID (different starts), the first with a moved occurrence; zone by its Windows name. */
    const sharedUid = [
      'BEGIN:VCALENDAR',
      'VERSION:2.0',
      'PRODID:-//test//shared uid//EN',
      'BEGIN:VEVENT',
      'UID:shared-uid-roundtrip@test',
      'DTSTAMP:20260101T000000Z',
      'DTSTART;TZID=W. Europe Standard Time:20260105T090000',
      'DTEND;TZID=W. Europe Standard Time:20260105T100000',
      'RRULE:FREQ=DAILY;COUNT=3',
      'SUMMARY:Morning',
      'END:VEVENT',
      'BEGIN:VEVENT',
      'UID:shared-uid-roundtrip@test',
      'DTSTAMP:20260101T000000Z',
      'RECURRENCE-ID;TZID=W. Europe Standard Time:20260106T090000',
      'DTSTART;TZID=W. Europe Standard Time:20260106T110000',
      'DTEND;TZID=W. Europe Standard Time:20260106T120000',
      'SUMMARY:Morning (moved)',
      'END:VEVENT',
      'BEGIN:VEVENT',
      'UID:shared-uid-roundtrip@test',
      'DTSTAMP:20260101T000000Z',
      'DTSTART;TZID=W. Europe Standard Time:20260105T150000',
      'DTEND;TZID=W. Europe Standard Time:20260105T160000',
      'RRULE:FREQ=DAILY;COUNT=3',
      'SUMMARY:Afternoon',
      'END:VEVENT',
      'END:VCALENDAR',
      '',
    ].join('\r\n');

    it('export → re-import updates each schedule, whatever order the export lists them in', async () => {
      const imported = await importIcal(sharedUid);
      expect(imported.map((s) => s.Status)).toEqual(['Created', 'Created']);
      const ids = imported.map((s) => s.Id);
      const before = await Promise.all(ids.map(itemsOf));
      const count = await scheduleCount();
      // Listed afternoon first: the morning's override follows the afternoon's master in the file, and still
      // belongs to the morning (the export writes each schedule's id on its VEVENTs).
      const exported = await exportIcal([...ids].reverse());
      const again = await importIcal(exported);
      expect(again.map((s) => [s.Id, s.Status])).toEqual([...ids].reverse().map((id) => [id, 'Updated']));
      expect(await scheduleCount()).toBe(count);
      expect(await Promise.all(ids.map(itemsOf))).toEqual(before);
    });

    it('without the schedule ids (another client passed the export on), the start as read finds each', async () => {
      const imported = await importIcal(sharedUid.replaceAll('shared-uid-roundtrip@test', 'no-ids@test'));
      const ids = imported.map((s) => s.Id);
      const before = await Promise.all(ids.map(itemsOf));
      const count = await scheduleCount();
      // The export writes TZID=Europe/Berlin where the file said "W. Europe Standard Time": the start as written
      // differs, the start as read does not.
      const exported = (await exportIcal(ids)).replace(/\r\nX-PLATFORM-SCHEDULE-ID:[^\r]*/g, '');
      expect(exported).not.toContain('W. Europe Standard Time');
      const again = await importIcal(exported);
      expect(again.map((s) => [s.Id, s.Status])).toEqual(ids.map((id) => [id, 'Updated']));
      expect(await scheduleCount()).toBe(count);
      expect(await Promise.all(ids.map(itemsOf))).toEqual(before);
    });

    it('finds series an earlier import keyed by their start as written', async () => {
      const text = sharedUid.replaceAll('shared-uid-roundtrip@test', 'written-key@test');
      const imported = await importIcal(text);
      // As imports before the start was normalised stored them: SHA-256 of the UID and DTSTART as written.
      const written = ['20260105T090000', '20260105T150000'].map((start) =>
        createHash('sha256').update(`written-key@test\nW. Europe Standard Time|${start}`).digest('hex'),
      );
      for (const [index, id] of imported.map((s) => s.Id).entries()) {
        await t.dataSource.query(
          t.dataSource.options.type === 'postgres'
            ? 'UPDATE schedules SET ical_key = $1 WHERE id = $2'
            : 'UPDATE schedules SET ical_key = ? WHERE id = ?',
          [written[index], id],
        );
      }
      const count = await scheduleCount();
      const again = await importIcal(text);
      expect(again.map((s) => [s.Id, s.Status])).toEqual(imported.map((s) => [s.Id, 'Updated']));
      expect(await scheduleCount()).toBe(count);
      // And now under the normalised key: a third import finds them by it.
      const third = await importIcal(text);
      expect(third.map((s) => [s.Id, s.Status])).toEqual(imported.map((s) => [s.Id, 'Updated']));
    });

    it('parallel talks of a conference feed (one UID, one start) survive export → re-import in any order', async () => {
      const imported = await importIcal(fixture('conference-feed-shared-uid.ics'));
      expect(imported).toHaveLength(5);
      const ids = imported.map((s) => s.Id);
      const before = await Promise.all(ids.map(itemsOf));
      const count = await scheduleCount();
      const again = await importIcal(await exportIcal([...ids].reverse()));
      expect(again.map((s) => [s.Id, s.Status])).toEqual([...ids].reverse().map((id) => [id, 'Updated']));
      expect(await scheduleCount()).toBe(count);
      expect(await Promise.all(ids.map(itemsOf))).toEqual(before);
    });

    it('a series naming its schedule keeps it when another series of the file holds that schedule’s key', async () => {
      const original = [
        'BEGIN:VCALENDAR',
        'VERSION:2.0',
        'PRODID:-//test//conflict//EN',
        'BEGIN:VEVENT',
        'UID:conflict-u@test',
        'DTSTART:20260301T090000Z',
        'DTEND:20260301T100000Z',
        'SUMMARY:Original',
        'END:VEVENT',
        'END:VCALENDAR',
        '',
      ].join('\r\n');
      const [schedule] = await importIcal(original);
      // Its export with another UID (the schedule id still on it), after the original event without an id: the
      // original's key names the schedule, the export's id names it too.
      const exported = (await exportIcal([schedule.Id])).replace(/conflict-u@test/g, 'conflict-v@test');
      const event = original.slice(original.indexOf('BEGIN:VEVENT'), original.indexOf('END:VCALENDAR'));
      const both = exported.replace('BEGIN:VEVENT', `${event}BEGIN:VEVENT`);
      const count = await scheduleCount();
      const again = await importIcal(both);
      expect(again.map((s) => [s.Uid, s.Status])).toEqual([
        ['conflict-u@test', 'Created'],
        ['conflict-v@test', 'Updated'],
      ]);
      expect(again[1].Id).toBe(schedule.Id);
      expect(await scheduleCount()).toBe(count + 1);
      // And both are found again by their keys.
      const third = await importIcal(both);
      expect(third.map((s) => [s.Id, s.Status])).toEqual(again.map((s) => [s.Id, 'Updated']));
    });
  });
});
