// Operation 1 end to end over HTTP: one group of 10,000 schedule ids (FREQ=WEEKLY;BYDAY=MO,WE,FR, Europe/Berlin,
// first occurrences spread over 2020–2026), database included, after warm-up. Also memory per cached rule.
// Run after `npm run build`:  node --expose-gc bench/occurrences-http.mjs [--schedules 10000] [--requests 40]
// DATABASE_URL may point at PostgreSQL; default is a fresh SQLite file in a temp folder.
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { schedules: { type: 'string', default: '10000' }, requests: { type: 'string', default: '40' } },
});
const COUNT = Number(values.schedules);
const REQUESTS = Number(values.requests);
const dist = (p) => new URL(`../dist/src/${p}`, import.meta.url).href;
const { loadConfig } = await import(dist('config/config.js'));
const { createApp } = await import(dist('create-app.js'));
const { createRootLogger } = await import(dist('logging/logger.js'));
const { Schedule, ScheduleItem, Recurrence } = await import(dist('schedules/entities/schedule.entity.js'));
const { SeriesCache } = await import(dist('schedules/series-cache.js'));

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pa-bench-occ-'));
const config = loadConfig({
  DATA_DIR: dataDir,
  DATABASE_URL: process.env.DATABASE_URL ?? `sqlite:${path.join(dataDir, 'bench.sqlite')}`,
  API_KEYS: 'bench-key-0123456789abcdef',
  RATE_LIMIT: '0',
  LOG_LEVEL: 'warn',
});
const { app, dataSource } = await createApp(config, createRootLogger('warn'));
await app.listen({ port: 0, host: '127.0.0.1' });
const url = `${await app.getUrl()}/api/v1/Occurrence/hasOccurrences/byGroup`.replace('[::1]', '127.0.0.1');

// Seeded spread of first occurrences over 2020–2026, at 09:00 Berlin wall time.
let seed = 42;
const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const ids = [];
const rows = { schedules: [], items: [], recurrences: [] };
for (let i = 0; i < COUNT; i++) {
  const day = new Date(Date.UTC(2020, 0, 1) + Math.floor(random() * 7 * 365) * 86_400_000)
    .toISOString()
    .slice(0, 10);
  const id = randomUUID();
  const itemId = randomUUID();
  ids.push(id);
  rows.schedules.push({ id, version: 1, createdAt: new Date() });
  rows.items.push({
    id: itemId,
    scheduleId: id,
    position: 0,
    name: `s${i}`,
    start: `${day}T09:00:00`,
    end: `${day}T09:30:00`,
    startTimeZone: 'Europe/Berlin',
  });
  rows.recurrences.push({
    id: randomUUID(),
    scheduleItemId: itemId,
    startTime: null,
    endTime: null,
    offset: null,
    endCount: null,
    recurrenceType: 'Weekly',
    interval: '1',
    duration: null,
    pattern: 'FREQ=WEEKLY;BYDAY=MO,WE,FR',
  });
}
const seedStart = performance.now();
await dataSource.transaction(async (manager) => {
  for (const [entity, list] of [
    [Schedule, rows.schedules],
    [ScheduleItem, rows.items],
    [Recurrence, rows.recurrences],
  ]) {
    for (let i = 0; i < list.length; i += 500)
      await manager.getRepository(entity).insert(list.slice(i, i + 500));
  }
});
console.log(
  `seeded ${COUNT} schedules in ${Math.round(performance.now() - seedStart)} ms (${config.database.type})`,
);

// A window on a Tuesday night: no schedule matches, so every series is checked (the worst case for one group).
const bodies = {
  miss: JSON.stringify({
    Groups: [{ Key: 'all', ScheduleIds: ids }],
    Start: '2026-06-16T22:00:00Z',
    End: '2026-06-16T23:00:00Z',
  }),
  hit: JSON.stringify({
    Groups: [{ Key: 'all', ScheduleIds: ids }],
    Start: '2026-06-17T07:00:00Z',
    End: '2026-06-17T08:00:00Z',
  }),
};
const call = async (body) => {
  const started = performance.now();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  const json = await response.json();
  if (response.status !== 200)
    throw new Error(`status ${response.status}: ${JSON.stringify(json).slice(0, 300)}`);
  return { ms: performance.now() - started, value: json.Groups.all };
};

const cache = app.get(SeriesCache);
global.gc?.();
const heapBefore = process.memoryUsage().heapUsed;
const cold = await call(bodies.miss);
global.gc?.();
const heapAfter = process.memoryUsage().heapUsed;
console.log(
  `first request (cold cache, ${cache.size} compiled): ${cold.ms.toFixed(1)} ms, answer ${cold.value}`,
);
for (let i = 0; i < 5; i++) await call(bodies.miss);

const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
for (const [name, body] of Object.entries(bodies)) {
  const times = [];
  let value;
  for (let i = 0; i < REQUESTS; i++) ({ ms: times[i], value } = await call(body));
  console.log(
    `operation 1, one group of ${COUNT} ids, window that ${name === 'miss' ? 'no schedule overlaps (all checked)' : 'many overlap (stops at first hit)'}: ` +
      `median ${median(times).toFixed(1)} ms, min ${Math.min(...times).toFixed(1)}, max ${Math.max(...times).toFixed(1)} over ${REQUESTS} requests (answer ${value}; goal: median ≤ 100 ms)`,
  );
}
console.log(
  global.gc
    ? `memory per cached rule: ~${Math.round((heapAfter - heapBefore) / COUNT)} bytes (heap delta after GC / ${COUNT} compiled schedules)`
    : 'memory per cached rule: run with node --expose-gc to measure',
);
console.log(
  `measured: Node ${process.version}, server and client in one process, sequential requests over loopback HTTP, body ${bodies.miss.length} bytes`,
);
await app.close();
if (config.database.type === 'postgres') {
  await (
    await import('pg')
  ).default; // nothing to clean in a dedicated bench database
}
fs.rmSync(dataDir, { recursive: true, force: true });
