// iCalendar import end to end over HTTP (goals: a 1,000-event calendar ≤ 1 s; 1,500 events ≤ 2 s):
// POST /api/v1/Schedule/import of a calendar shaped like a Google Calendar export of a team calendar, on the real app
// and database. Each series (master + overrides) becomes a schedule of its own.
// Run after `npm run build`:  node bench/ical-import.mjs [--masters 100] [--overrides 9] [--requests 20] [--large 1500]
// DATABASE_URL=postgres://… runs on a fresh PostgreSQL database created next to the one it names (dropped at the
// end); default is a fresh SQLite file in a temp folder.
//
// The calendar: `masters` recurring VEVENTs and `overrides` RECURRENCE-ID VEVENTs per master (default 100 + 900 =
// 1,000 VEVENTs). Then the whole-calendar figure: `large` masters without overrides (default 1,500 events, 1,500
// schedules), imported once (creates) and `requests / 4` more times (each updates the same schedules), with the
// stretches over 20 ms the event loop was held during those imports (support/loop-stretches.mjs). Masters rotate through five zones written three ways
// (IANA TZID with a VTIMEZONE and X-LIC-LOCATION as Google writes it, Windows names as Outlook writes them, one
// "Customized Time Zone" resolved from its VTIMEZONE offsets), weekly rules with BYDAY, UNTIL or COUNT, and two
// EXDATE lines (one a comma list). Overrides move an occurrence by 1–3 hours or a day; every fifth is a
// cancellation. Every VEVENT carries what real exports carry and the import ignores: DESCRIPTION, LOCATION,
// DTSTAMP, SEQUENCE, two ATTENDEEs, a VALARM; lines are folded at 75 octets.
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { describeStretches, watchStretches } from './support/loop-stretches.mjs';

const { values } = parseArgs({
  options: {
    masters: { type: 'string', default: '100' },
    overrides: { type: 'string', default: '9' },
    requests: { type: 'string', default: '20' },
    large: { type: 'string', default: '1500' },
  },
});
const LARGE = Number(values.large);
const MASTERS = Number(values.masters);
const OVERRIDES = Number(values.overrides);
const REQUESTS = Number(values.requests);
const dist = (p) => new URL(`../dist/src/${p}`, import.meta.url).href;
const { loadConfig } = await import(dist('config/config.js'));
const { createApp } = await import(dist('create-app.js'));
const { createRootLogger } = await import(dist('logging/logger.js'));
const { importCalendar } = await import(dist('schedules/ical/ical-import.js'));
const { compileDtoCached } = await import(dist('validation/compile-dto.js'));
const { ScheduleInput } = await import(dist('schedules/dto/schedule.dto.js'));
const { SchedulesService } = await import(dist('schedules/schedules.service.js'));

const VTIMEZONES = {
  'Europe/Berlin': [
    'BEGIN:VTIMEZONE',
    'TZID:Europe/Berlin',
    'X-LIC-LOCATION:Europe/Berlin',
    'BEGIN:DAYLIGHT',
    'TZOFFSETFROM:+0100',
    'TZOFFSETTO:+0200',
    'TZNAME:CEST',
    'DTSTART:19700329T020000',
    'RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU',
    'END:DAYLIGHT',
    'BEGIN:STANDARD',
    'TZOFFSETFROM:+0200',
    'TZOFFSETTO:+0100',
    'TZNAME:CET',
    'DTSTART:19701025T030000',
    'RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU',
    'END:STANDARD',
    'END:VTIMEZONE',
  ],
  'Customized Time Zone': [
    'BEGIN:VTIMEZONE',
    'TZID:Customized Time Zone',
    'BEGIN:STANDARD',
    'DTSTART:16010101T020000',
    'TZOFFSETFROM:-0400',
    'TZOFFSETTO:-0500',
    'RRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=1SU;BYMONTH=11',
    'END:STANDARD',
    'BEGIN:DAYLIGHT',
    'DTSTART:16010101T020000',
    'TZOFFSETFROM:-0500',
    'TZOFFSETTO:-0400',
    'RRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=2SU;BYMONTH=3',
    'END:DAYLIGHT',
    'END:VTIMEZONE',
  ],
};
const ZONES = [
  'Europe/Berlin',
  'W. Europe Standard Time',
  'Pacific Standard Time',
  'America/Chicago',
  'Customized Time Zone',
];

let seed = 7;
const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const pad = (n, width = 2) => String(n).padStart(width, '0');
const basic = (ms) => {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}T${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}00`;
};
const DAY = 86_400_000;
const HOUR = 3_600_000;
const WEEKDAYS = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'];

/** RFC 5545 §3.1 folding at 75 octets (ASCII here). */
const fold = (line) => {
  const parts = [];
  for (let at = 0; at < line.length; at += at === 0 ? 75 : 74)
    parts.push(line.slice(at, at === 0 ? 75 : at + 74));
  return parts.join('\r\n ');
};

function extras(uid, n) {
  return [
    `DTSTAMP:20260101T120000Z`,
    `DESCRIPTION:Agenda for occurrence ${n}: review the open items\\, then plan the next steps. Join with the link in the invitation.`,
    'LOCATION:Room 4.12 / https://meet.example.com/abc-defg-hij',
    `SEQUENCE:${n % 3}`,
    `ATTENDEE;CUTYPE=INDIVIDUAL;ROLE=REQ-PARTICIPANT;PARTSTAT=ACCEPTED;CN=Alice Example;X-NUM-GUESTS=0:mailto:alice@example.com`,
    `ATTENDEE;CUTYPE=INDIVIDUAL;ROLE=REQ-PARTICIPANT;PARTSTAT=NEEDS-ACTION;CN=Bob Example;X-NUM-GUESTS=0:mailto:bob@example.com`,
    'BEGIN:VALARM',
    'ACTION:DISPLAY',
    'DESCRIPTION:This is an event reminder',
    'TRIGGER:-P0DT0H10M0S',
    'END:VALARM',
  ];
}

function buildCalendar(masters, overrides) {
  const lines = [
    'BEGIN:VCALENDAR',
    'PRODID:-//Google Inc//Google Calendar 70.9054//EN',
    'VERSION:2.0',
    'CALSCALE:GREGORIAN',
    'METHOD:PUBLISH',
    'X-WR-CALNAME:Team',
    'X-WR-TIMEZONE:Europe/Berlin',
    ...Object.values(VTIMEZONES).flat(),
  ];
  for (let m = 0; m < masters; m++) {
    const zone = ZONES[m % ZONES.length];
    const uid = `${m.toString(36)}x${Math.floor(random() * 1e9).toString(36)}@google.com`;
    // Wall time (as UTC fields) of the first occurrence: a weekday of 2026 at 08:00–16:30.
    const first =
      Date.UTC(2026, 0, 5) + Math.floor(random() * 300) * DAY + (8 + Math.floor(random() * 17) / 2) * HOUR;
    const weekday = WEEKDAYS[(new Date(first).getUTCDay() + 6) % 7];
    const tz = `TZID=${zone}`;
    const end = m % 2 === 0 ? `UNTIL=${basic(first + 104 * 7 * DAY)}Z` : 'COUNT=80';
    lines.push(
      'BEGIN:VEVENT',
      `DTSTART;${tz}:${basic(first)}`,
      `DTEND;${tz}:${basic(first + HOUR / 2)}`,
      `RRULE:FREQ=WEEKLY;WKST=MO;${end};BYDAY=${weekday}`,
      `EXDATE;${tz}:${basic(first + 7 * DAY)}`,
      `EXDATE;${tz}:${basic(first + 14 * DAY)},${basic(first + 21 * DAY)}`,
      `UID:${uid}`,
      `SUMMARY:Team meeting ${m}`,
      'STATUS:CONFIRMED',
      ...extras(uid, 0),
      'END:VEVENT',
    );
    for (let o = 0; o < overrides; o++) {
      const original = first + (4 + o * 2) * 7 * DAY;
      const cancelled = o % 5 === 4;
      const moved = original + (o % 2 === 0 ? (1 + (o % 3)) * HOUR : DAY);
      lines.push(
        'BEGIN:VEVENT',
        `DTSTART;${tz}:${basic(cancelled ? original : moved)}`,
        `DTEND;${tz}:${basic((cancelled ? original : moved) + HOUR / 2)}`,
        `RECURRENCE-ID;${tz}:${basic(original)}`,
        `UID:${uid}`,
        `SUMMARY:Team meeting ${m}`,
        `STATUS:${cancelled ? 'CANCELLED' : 'CONFIRMED'}`,
        ...extras(uid, o + 1),
        'END:VEVENT',
      );
    }
  }
  lines.push('END:VCALENDAR');
  return `${lines.map(fold).join('\r\n')}\r\n`;
}

const body = buildCalendar(MASTERS, OVERRIDES);
const largeBody = buildCalendar(LARGE, 0);
if (process.env.DUMP) {
  // Only writes the calendar (e.g. to profile the importer on it) and stops.
  fs.writeFileSync(process.env.DUMP, body);
  process.exit(0);
}
const events = (body.match(/^BEGIN:VEVENT/gm) ?? []).length;

/** A database of its own next to the one DATABASE_URL names, so the bench never writes into a shared one. */
async function postgresDatabase(baseUrl) {
  const base = new URL(baseUrl);
  const name =
    `${decodeURIComponent(base.pathname.slice(1))}_ical_bench_${randomUUID().slice(0, 8)}`.toLowerCase();
  const admin = async (statement) => {
    const client = new pg.Client({ connectionString: base.toString() });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE "${name}"`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`) };
}

// The mapping alone, in this process (no HTTP, no database): first call, then the median of 20. Measured before
// the service starts: these synchronous runs would hold its event loop for seconds and make it shed requests.
const mapBegan = performance.now();
importCalendar(body);
const mapFirst = performance.now() - mapBegan;
const mapTimes = [];
for (let i = 0; i < 20; i++) {
  const began = performance.now();
  importCalendar(body);
  mapTimes.push(performance.now() - began);
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pa-bench-ical-'));
const postgres = process.env.DATABASE_URL?.startsWith('postgres')
  ? await postgresDatabase(process.env.DATABASE_URL)
  : undefined;
const config = loadConfig({
  DATA_DIR: dataDir,
  DATABASE_URL: postgres?.url ?? `sqlite:${path.join(dataDir, 'bench.sqlite')}`,
  API_KEYS: 'bench-key-0123456789abcdef',
  RATE_LIMIT: '0',
  LOG_LEVEL: 'warn',
});
const { app } = await createApp(config, createRootLogger('warn'));
await app.listen({ port: 0, host: '127.0.0.1' });
const url = `${await app.getUrl()}/api/v1/Schedule/import`.replace('[::1]', '127.0.0.1');

async function post(calendarBody = body) {
  const began = performance.now();
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: 'Bearer bench-key-0123456789abcdef',
      'content-type': 'text/calendar; charset=utf-8',
    },
    body: calendarBody,
  });
  const answer = await response.json();
  const ms = performance.now() - began;
  if (response.status !== 201)
    throw new Error(`${response.status}: ${JSON.stringify(answer).slice(0, 2000)}`);
  return { ms, answer };
}

const first = await post();
const schedulesMade = first.answer.Schedules.length;
const mapped = importCalendar(body).ScheduleItems;
const exceptions = mapped.reduce((sum, item) => sum + (item.Recurrence?.Exceptions?.length ?? 0), 0);
const times = [];
for (let i = 0; i < REQUESTS; i++) times.push((await post()).ms);
// Where the time goes, in process: the DTO validation and SchedulesService.create (engine check + one transaction)
// of the same items as one schedule (only while they fit one: at most 100 items).
const validateTimes = [];
const createTimes = [];
if (mapped.length <= 100) {
  const input = compileDtoCached(ScheduleInput, { source: 'body' }).validate({ ScheduleItems: mapped });
  const schedules = app.get(SchedulesService);
  for (let i = 0; i < 10; i++) {
    let began = performance.now();
    compileDtoCached(ScheduleInput, { source: 'body' }).validate({
      ScheduleItems: importCalendar(body).ScheduleItems,
    });
    validateTimes.push(performance.now() - began);
    began = performance.now();
    await schedules.create(input.value);
    createTimes.push(performance.now() - began);
  }
}
// Whole calendars: `large` events, a schedule each; the first import creates them, the next ones update them.
const stretches = watchStretches();
const largeFirst = await post(largeBody);
const largeTimes = [];
for (let i = 0; i < Math.max(1, REQUESTS >> 2); i++) largeTimes.push((await post(largeBody)).ms);
const largeStretches = stretches.stop();
await app.close();
await postgres?.drop();
fs.rmSync(dataDir, { recursive: true, force: true });

const sorted = (list) => [...list].sort((a, b) => a - b);
const median = (list) => sorted(list)[list.length >> 1];
const fmt = (ms) => `${ms.toFixed(1)} ms`;
const database = postgres === undefined ? 'SQLite' : 'PostgreSQL';
console.log(
  `node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu?'} ×${os.cpus().length}, load ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
console.log(
  `calendar: ${events} VEVENTs (${MASTERS} masters × ${OVERRIDES} overrides), ${(Buffer.byteLength(body) / 1024).toFixed(0)} KiB → ` +
    `${schedulesMade} schedules, ${exceptions} exceptions; database ${database}`,
);
console.log(`mapping only (importCalendar): first ${fmt(mapFirst)}, median of 20 ${fmt(median(mapTimes))}`);
if (validateTimes.length > 0) {
  console.log(
    `in process, median of 10: mapping + DTO validation ${fmt(median(validateTimes))}, ` +
      `SchedulesService.create of them as one schedule (engine check, multi-row INSERTs) ${fmt(median(createTimes))}`,
  );
}
console.log(
  `POST /api/v1/Schedule/import: first ${fmt(first.ms)}; then ${REQUESTS} requests median ${fmt(median(times))}, ` +
    `min ${fmt(sorted(times)[0])}, max ${fmt(sorted(times).at(-1))}`,
);
console.log(
  `${LARGE} events (${(Buffer.byteLength(largeBody) / 1024).toFixed(0)} KiB, ${LARGE} schedules): first import ` +
    `(creates) ${fmt(largeFirst.ms)}; ${largeTimes.length} re-imports (update) median ${fmt(median(largeTimes))}, ` +
    `max ${fmt(sorted(largeTimes).at(-1))}; during them (this process also runs the client): ` +
    describeStretches(largeStretches),
);
