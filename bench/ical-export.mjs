// iCalendar export end to end over HTTP: GET /api/v1/Schedule/ical?ids=<1,000 ids> on the real app and
// database, after warm-up. The schedules are a realistic mix: one item each, weekly/daily/monthly rules in
// Europe/Berlin, America/New_York, Australia/Lord_Howe, Asia/Kolkata and UTC, a quarter with a cancelled and a
// moved occurrence, a fifth with RecurrenceDates/ExceptionDates, first occurrences spread over 2020–2026.
// Goal: ≤ 500 ms for 1,000 schedules.
// Run after `npm run build`:  node bench/ical-export.mjs [--schedules 1000] [--requests 20]
// DATABASE_URL may point at PostgreSQL; default is a fresh SQLite file in a temp folder.
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { schedules: { type: 'string', default: '1000' }, requests: { type: 'string', default: '20' } },
});
const COUNT = Number(values.schedules);
const REQUESTS = Number(values.requests);
const dist = (p) => new URL(`../dist/src/${p}`, import.meta.url).href;
const { loadConfig } = await import(dist('config/config.js'));
const { createApp } = await import(dist('create-app.js'));
const { createRootLogger } = await import(dist('logging/logger.js'));
const { Schedule, ScheduleItem, Recurrence, RecurrenceException } = await import(
  dist('schedules/entities/schedule.entity.js')
);

const KEY = 'bench-key-0123456789abcdef';
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pa-bench-ical-'));
const config = loadConfig({
  DATA_DIR: dataDir,
  DATABASE_URL: process.env.DATABASE_URL ?? `sqlite:${path.join(dataDir, 'bench.sqlite')}`,
  API_KEYS: KEY,
  RATE_LIMIT: '0',
  LOG_LEVEL: 'warn',
});
const { app, dataSource } = await createApp(config, createRootLogger('warn'));
await app.listen({ port: 0, host: '127.0.0.1' });
const base = `${await app.getUrl()}`.replace('[::1]', '127.0.0.1');

const ZONES = ['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kolkata', null];
const PATTERNS = [
  'FREQ=WEEKLY;BYDAY=MO,WE,FR',
  'FREQ=DAILY;INTERVAL=2',
  'FREQ=MONTHLY;BYDAY=1TU',
  'FREQ=WEEKLY',
];
let seed = 42;
const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const ids = [];
const rows = { schedules: [], items: [], recurrences: [], exceptions: [] };
const dayAfter = (day, n) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
for (let i = 0; i < COUNT; i++) {
  // A Monday in 2020–2026, so every pattern above matches its first day.
  const day = new Date(Date.UTC(2020, 0, 6) + Math.floor(random() * 7 * 52) * 7 * 86_400_000)
    .toISOString()
    .slice(0, 10);
  const zone = ZONES[i % ZONES.length];
  const wall = (d, time) => `${d}T${time}${zone === null ? 'Z' : ''}`;
  const id = randomUUID();
  const itemId = randomUUID();
  const recurrenceId = randomUUID();
  ids.push(id);
  rows.schedules.push({ id, version: 1, createdAt: new Date() });
  rows.items.push({
    id: itemId,
    scheduleId: id,
    position: 0,
    name: `Schedule ${i}: stand-up, room 3; "café"`,
    start: wall(day, '09:00:00'),
    end: wall(day, '09:30:00'),
    startTimeZone: zone,
  });
  const pattern = PATTERNS[i % PATTERNS.length];
  const withDates = i % 5 === 0 && pattern === 'FREQ=WEEKLY';
  rows.recurrences.push({
    id: recurrenceId,
    scheduleItemId: itemId,
    startTime: null,
    endTime: i % 3 === 0 ? `${dayAfter(day, 700)}` : null,
    offset: null,
    endCount: i % 3 === 1 ? 200 : null,
    recurrenceType: null,
    interval: null,
    duration: null,
    pattern,
    recurrenceDates: withDates
      ? [wall(dayAfter(day, 3), '10:00:00'), wall(dayAfter(day, 10), '10:00:00')]
      : null,
    exceptionDates: withDates ? [wall(dayAfter(day, 14), '09:00:00')] : null,
  });
  if (i % 4 === 0 && pattern === 'FREQ=WEEKLY;BYDAY=MO,WE,FR') {
    rows.exceptions.push(
      {
        id: randomUUID(),
        recurrenceId,
        position: 0,
        originalTime: wall(dayAfter(day, 7), '09:00:00'),
        isDeleted: true,
        newStart: null,
        newEnd: null,
        newStartTime: null,
        newEndTime: null,
      },
      {
        id: randomUUID(),
        recurrenceId,
        position: 1,
        originalTime: wall(dayAfter(day, 9), '09:00:00'),
        isDeleted: false,
        newStart: wall(dayAfter(day, 9), '14:00:00'),
        newEnd: wall(dayAfter(day, 9), '14:45:00'),
        newStartTime: null,
        newEndTime: null,
      },
    );
  }
}
const seedStart = performance.now();
await dataSource.transaction(async (manager) => {
  for (const [entity, list] of [
    [Schedule, rows.schedules],
    [ScheduleItem, rows.items],
    [Recurrence, rows.recurrences],
    [RecurrenceException, rows.exceptions],
  ]) {
    for (let i = 0; i < list.length; i += 200)
      await manager.getRepository(entity).insert(list.slice(i, i + 200));
  }
});
console.log(
  `seeded ${COUNT} schedules (${rows.exceptions.length} exceptions) in ${Math.round(performance.now() - seedStart)} ms (${config.database.type})`,
);

const url = `${base}/api/v1/Schedule/ical?ids=${ids.join(',')}`;
const call = async () => {
  const started = performance.now();
  const response = await fetch(url, { headers: { authorization: `Bearer ${KEY}` } });
  const body = await response.text();
  if (response.status !== 200) throw new Error(`status ${response.status}: ${body.slice(0, 300)}`);
  return {
    ms: performance.now() - started,
    bytes: Buffer.byteLength(body),
    events: body.split('BEGIN:VEVENT').length - 1,
  };
};

const cold = await call();
console.log(`first request (cold: zone tables and VTIMEZONEs built): ${cold.ms.toFixed(1)} ms`);
for (let i = 0; i < 3; i++) await call();
const times = [];
let last;
for (let i = 0; i < REQUESTS; i++) {
  last = await call();
  times.push(last.ms);
}
const sorted = [...times].sort((a, b) => a - b);
const cpu = process.cpuUsage();
console.log(
  `export of ${COUNT} schedules in one request (${last.events} VEVENTs, ${(last.bytes / 1024).toFixed(0)} KiB, URL ${url.length} bytes): ` +
    `median ${sorted[Math.floor(sorted.length / 2)].toFixed(1)} ms, min ${sorted[0].toFixed(1)}, max ${sorted[sorted.length - 1].toFixed(1)} ` +
    `over ${REQUESTS} requests (goal: ≤ 500 ms)`,
);
console.log(
  `measured: Node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu?'} ×${os.cpus().length}, load ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}, ` +
    `server and client in one process, sequential requests over loopback HTTP (process CPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s in all)`,
);
await app.close();
fs.rmSync(dataDir, { recursive: true, force: true });
