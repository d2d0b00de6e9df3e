// iCalendar import of a large calendar: 10,000 events in one import, one schedule per series
// (UID), every schedule answering operation 1, operation 2, the occurrence listing and the export; a re-import of
// the same file updates those schedules (events without UID too: their derived UID is stable) and creates none.
// Timings are measured by bench/ical-import.mjs, never asserted here.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN_KEY, startTestApp, type TestApp } from './support/test-app.js';

const EVENTS = 10_000;
/** Every tenth weekly series has a moved occurrence (a RECURRENCE-ID VEVENT of the same UID). */
const OVERRIDE_EVERY = 10;
/** Every fiftieth event has no UID (as Exchange OWA writes them): its UID is derived from its content. */
const NO_UID_EVERY = 50;
const AUTH = { authorization: `Bearer ${ADMIN_KEY}` };
const DAY = 86_400_000;

const pad = (n: number) => String(n).padStart(2, '0');
const basic = (ms: number, date = false) => {
  const d = new Date(ms);
  const day = `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}`;
  return date ? day : `${day}T${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}00`;
};

/** 10,000 series starting 5–25 January 2026: weekly (Berlin), single (UTC), daily ×5 (New York), all-day. */
function largeCalendar(): string {
  const lines = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//test//large//EN',
    'X-WR-TIMEZONE:Europe/Berlin',
  ];
  for (let i = 0; i < EVENTS; i++) {
    // Wall time (as UTC fields): a day in 5–25 January 2026 at 08:00–15:30.
    const first = Date.UTC(2026, 0, 5 + (i % 21), 8 + (i % 8), (i % 2) * 30);
    const uid = i % NO_UID_EVERY === 7 ? [] : [`UID:large-${i}@test.example`];
    const common = [...uid, `SUMMARY:Event ${i}`, 'DTSTAMP:20260101T000000Z'];
    switch (i % 4) {
      case 0:
        lines.push(
          'BEGIN:VEVENT',
          ...common,
          `DTSTART;TZID=Europe/Berlin:${basic(first)}`,
          `DTEND;TZID=Europe/Berlin:${basic(first + 3_600_000)}`,
          'RRULE:FREQ=WEEKLY;COUNT=20',
          'END:VEVENT',
        );
        if (i % OVERRIDE_EVERY === 0 && uid.length > 0) {
          lines.push(
            'BEGIN:VEVENT',
            ...common,
            `RECURRENCE-ID;TZID=Europe/Berlin:${basic(first + 7 * DAY)}`,
            `DTSTART;TZID=Europe/Berlin:${basic(first + 7 * DAY + 7_200_000)}`,
            `DTEND;TZID=Europe/Berlin:${basic(first + 7 * DAY + 10_800_000)}`,
            'END:VEVENT',
          );
        }
        break;
      case 1:
        lines.push(
          'BEGIN:VEVENT',
          ...common,
          `DTSTART:${basic(first)}Z`,
          `DTEND:${basic(first + 1_800_000)}Z`,
          'END:VEVENT',
        );
        break;
      case 2:
        lines.push(
          'BEGIN:VEVENT',
          ...common,
          `DTSTART;TZID=America/New_York:${basic(first)}`,
          'DURATION:PT45M',
          'RRULE:FREQ=DAILY;COUNT=5',
          'END:VEVENT',
        );
        break;
      default:
        lines.push(
          'BEGIN:VEVENT',
          ...common,
          `DTSTART;VALUE=DATE:${basic(first, true)}`,
          `DTEND;VALUE=DATE:${basic(first + DAY, true)}`,
          'END:VEVENT',
        );
    }
  }
  lines.push('END:VCALENDAR', '');
  return lines.join('\r\n');
}

interface Imported {
  Id: string;
  Uid: string;
  Line: number;
  Status: 'Created' | 'Updated';
}

describe('POST /api/v1/Schedule/import: a 10,000-event calendar', () => {
  let t: TestApp;
  const body = largeCalendar();
  let first: Imported[] = [];

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  const importIcal = () =>
    t.request({
      method: 'POST',
      url: '/api/v1/Schedule/import',
      headers: { ...AUTH, 'content-type': 'text/calendar; charset=utf-8' },
      payload: body,
    });

  /** Every schedule id operation 2 lists, paging through with its largest page. */
  async function listedIds(): Promise<{ ids: string[]; items: number[]; totalPages: number }> {
    const ids: string[] = [];
    const items: number[] = [];
    let totalPages = 0;
    for (let page = 1; ; page++) {
      const response = await t.request({
        method: 'GET',
        url: `/api/v1/Schedule?PageIndex=${page}&PageSize=500`,
        headers: AUTH,
      });
      expect(response.statusCode).toBe(200);
      const answer = response.json();
      totalPages = answer.TotalPages as number;
      for (const schedule of answer.Result as Array<{ Id: string; ScheduleItems: unknown[] }>) {
        ids.push(schedule.Id);
        items.push(schedule.ScheduleItems.length);
      }
      if (!answer.HasNextPage) break;
    }
    return { ids, items, totalPages };
  }

  it('imports every event: one schedule per series, every id in Schedules, nothing skipped', async () => {
    const response = await importIcal();
    expect(response.statusCode).toBe(201);
    const answer = response.json();
    expect(answer).toMatchObject({ Succeeded: true, Code: null, Message: null, Skipped: [] });
    first = answer.Schedules as Imported[];
    expect(first).toHaveLength(EVENTS);
    expect(new Set(first.map((entry) => entry.Id)).size).toBe(EVENTS);
    expect(first.every((entry) => entry.Status === 'Created')).toBe(true);
    // In file order, each naming its UID (derived for the events without one).
    expect(first[0].Uid).toBe('large-0@test.example');
    expect(first[7].Uid).toMatch(/^[0-9a-f]{32}@derived-uid\.platform-api$/);
    expect(first.map((entry) => entry.Line)).toEqual(
      [...first.map((entry) => entry.Line)].sort((a, b) => a - b),
    );
    // Result: the first series' schedule, with its moved occurrence.
    expect(answer.Result.Id).toBe(first[0].Id);
    expect(answer.Result.ScheduleItems).toHaveLength(1);
    expect(answer.Result.ScheduleItems[0].Recurrence.Exceptions).toHaveLength(1);
  });

  it('stores the all-day events as all-day (schedule_items.all_day), the timed ones not', async () => {
    const rows = await t.dataSource.query<Array<{ all_day: boolean | number; n: number | string }>>(
      'SELECT all_day, COUNT(*) AS n FROM schedule_items GROUP BY all_day ORDER BY all_day',
    );
    const count = (flag: boolean) =>
      Number(rows.find((row) => Boolean(Number(row.all_day)) === flag)?.n ?? 0);
    expect(count(true)).toBe(EVENTS / 4);
    expect(count(false)).toBe(EVENTS - EVENTS / 4);
  });

  it('operation 2 lists every imported schedule, each with its one item', async () => {
    const { ids, items, totalPages } = await listedIds();
    expect(totalPages).toBe(EVENTS / 500);
    expect(new Set(ids)).toEqual(new Set(first.map((entry) => entry.Id)));
    expect(items.every((count) => count === 1)).toBe(true);
  });

  it('the occurrence listing answers for every imported schedule', async () => {
    const seen = new Set<string>();
    let moved = 0;
    for (let offset = 0; offset < first.length; offset += 200) {
      const ids = first.slice(offset, offset + 200).map((entry) => entry.Id);
      const response = await t.request({
        method: 'GET',
        url: `/api/v1/Occurrence?ScheduleIds=${ids.join(',')}&Start=2026-01-01T00:00:00Z&End=2026-02-01T00:00:00Z`,
        headers: AUTH,
      });
      expect(response.statusCode).toBe(200);
      const answer = response.json();
      expect(answer.Code).toBeNull();
      for (const occurrence of answer.Result as Array<{ ScheduleId: string; IsMoved: boolean }>) {
        seen.add(occurrence.ScheduleId);
        if (occurrence.IsMoved) moved++;
      }
    }
    expect(seen.size).toBe(EVENTS);
    // Every tenth weekly series with a UID has one moved occurrence, in the window unless it moved to 1 February.
    const withOverride = [...Array(EVENTS).keys()].filter(
      (i) => i % 4 === 0 && i % OVERRIDE_EVERY === 0 && i % NO_UID_EVERY !== 7 && i % 21 !== 20,
    ).length;
    expect(moved).toBe(withOverride);
  });

  it('operation 1 finds an occurrence in every group of imported schedules, none before them', async () => {
    const groups: Array<{ Key: string; ScheduleIds: string[] }> = [];
    for (let offset = 0; offset < first.length; offset += 10) {
      groups.push({
        Key: `g${offset}`,
        ScheduleIds: first.slice(offset, offset + 10).map((entry) => entry.Id),
      });
    }
    const ask = (start: string, end: string) =>
      t.request({
        method: 'POST',
        url: '/api/v1/Occurrence/hasOccurrences/byGroup',
        headers: AUTH,
        payload: { Groups: groups, Start: start, End: end },
      });
    const during = await ask('2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z');
    expect(during.statusCode).toBe(200);
    const hits = Object.values(during.json().Groups as Record<string, boolean>);
    expect(hits).toHaveLength(EVENTS / 10);
    expect(hits.every(Boolean)).toBe(true);
    const before = await ask('2025-01-01T00:00:00Z', '2025-12-01T00:00:00Z');
    expect(Object.values(before.json().Groups as Record<string, boolean>).some(Boolean)).toBe(false);
  });

  it('the export takes imported schedules (1,000 in one calendar)', async () => {
    const ids = first.slice(0, 1000).map((entry) => entry.Id);
    const response = await t.request({
      method: 'GET',
      url: `/api/v1/Schedule/ical?ids=${ids.join(',')}`,
      headers: AUTH,
    });
    expect(response.statusCode).toBe(200);
    const masters = response.body.match(/^BEGIN:VEVENT\r$/gm)?.length ?? 0;
    const overrides = response.body.match(/^RECURRENCE-ID/gm)?.length ?? 0;
    expect(masters - overrides).toBe(1000);
  });

  it('a re-import updates the same schedules (also those without UID) and creates none', async () => {
    const response = await importIcal();
    expect(response.statusCode).toBe(201);
    const again = response.json().Schedules as Imported[];
    expect(again.map((entry) => entry.Id)).toEqual(first.map((entry) => entry.Id));
    expect(again.every((entry) => entry.Status === 'Updated')).toBe(true);
    const { ids, totalPages } = await listedIds();
    expect(totalPages).toBe(EVENTS / 500);
    expect(ids).toHaveLength(EVENTS);
  });
});
