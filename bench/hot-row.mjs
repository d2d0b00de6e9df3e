// Hot-row contention: single schedule writes alone and beside a 20,000-event iCalendar import, on PostgreSQL.
// Run after `npm run build`:
//   DATABASE_URL=postgres://…/<db> node bench/hot-row.mjs [--writes 200] [--rounds 3] [--events 20000] [--baseline]
// A fresh database is created next to <db> and dropped at the end (support/scratch-database.mjs).
//
// Two instances on the same database, as a fleet has them: the importer is `node dist/src/main.js` in a child
// process, the writer is the app in this process; the client (this process, fetch over loopback) sends one
// POST /api/v1/Schedule at a time to the writer. "Alone": `writes` writes after 20 unmeasured ones. "Beside": in
// each of `rounds` rounds the importer is sent a calendar of `events` new one-off events (one schedule each, one
// transaction), and the writer takes back-to-back writes for as long as that import request is open; every such
// write is measured. `--baseline` first runs the down() of migration 1763780001600 (later ones stay), so the triggers update the one stats row
// again (the hot row), for the before figure. Prints p50/p99/max per phase, the imports' durations and the load.
import { spawn } from 'node:child_process';
import net from 'node:net';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { builtService, scratchDatabase } from './support/scratch-database.mjs';

const { values } = parseArgs({
  options: {
    writes: { type: 'string', default: '200' },
    rounds: { type: 'string', default: '3' },
    events: { type: 'string', default: '20000' },
    baseline: { type: 'boolean', default: false },
  },
});
const WRITES = Number(values.writes);
const ROUNDS = Number(values.rounds);
const EVENTS = Number(values.events);
if (!/^postgres(ql)?:\/\//i.test(process.env.DATABASE_URL ?? '')) {
  console.error('hot-row.mjs measures PostgreSQL: set DATABASE_URL=postgres://…/<db>.');
  process.exit(1);
}

const dist = builtService();
const { loadConfig } = await import(dist('src/config/config.js'));
const { createApp } = await import(dist('src/create-app.js'));
const { createRootLogger } = await import(dist('src/logging/logger.js'));
const { openDatabase } = await import(dist('src/database/data-source.js'));
const { CounterDeltas1763780001600 } = await import(dist('migrations/1763780001600-CounterDeltas.js'));

const KEY = 'bench-key-0123456789abcdef';
const HEADERS = { authorization: `Bearer ${KEY}` };
const SCHEDULE = JSON.stringify({
  ScheduleItems: [
    {
      Name: 'Stand-up',
      Start: '2026-01-05T09:00:00+01:00',
      End: '2026-01-05T09:15:00+01:00',
      StartTimeZone: 'Europe/Berlin',
      Recurrence: { RecurrenceType: 'Weekly', Interval: '1', Pattern: 'FREQ=WEEKLY;BYDAY=MO,WE,FR' },
    },
  ],
});

/** `EVENTS` one-off events whose UIDs are new in round `round`: the import creates a schedule for each. */
function calendar(round) {
  const lines = ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//bench//hot-row//EN'];
  for (let i = 0; i < EVENTS; i++) {
    const day = String(1 + (i % 28)).padStart(2, '0');
    lines.push(
      'BEGIN:VEVENT',
      `UID:round${round}-${i}@bench.example`,
      `SUMMARY:Event ${i}`,
      'DTSTAMP:20260101T000000Z',
      `DTSTART:202602${day}T090000Z`,
      `DTEND:202602${day}T093000Z`,
      'END:VEVENT',
    );
  }
  lines.push('END:VCALENDAR', '');
  return lines.join('\r\n');
}

const freePort = () =>
  new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

async function waitReady(base) {
  for (let tries = 0; tries < 600; tries++) {
    const ok = await fetch(`${base}/health/ready`).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${base} did not become ready`);
}

const scratch = await scratchDatabase('hot-row');
const env = { DATA_DIR: scratch.dataDir, DATABASE_URL: scratch.databaseUrl, API_KEYS: KEY, RATE_LIMIT: '0' };
const { app } = await createApp(loadConfig({ ...env, LOG_LEVEL: 'error' }), createRootLogger('error'));
await app.listen({ port: 0, host: '127.0.0.1' });
const writer = (await app.getUrl()).replace('[::1]', '127.0.0.1');
const importerPort = await freePort();
const importer = spawn(process.execPath, [dist('src/main.js')], {
  env: {
    PATH: process.env.PATH ?? '',
    HOME: os.homedir(),
    ...env,
    LOG_LEVEL: 'error',
    HOST: '127.0.0.1',
    PORT: String(importerPort),
  },
  stdio: 'ignore',
});
const importerUrl = `http://127.0.0.1:${importerPort}`;

async function write() {
  const began = performance.now();
  const response = await fetch(`${writer}/api/v1/Schedule`, {
    method: 'POST',
    headers: { ...HEADERS, 'content-type': 'application/json' },
    body: SCHEDULE,
  });
  await response.arrayBuffer();
  if (response.status !== 201) throw new Error(`write: ${response.status}`);
  return performance.now() - began;
}

async function importBeside(round) {
  const body = calendar(round);
  const began = performance.now();
  let open = true;
  const imported = fetch(`${importerUrl}/api/v1/Schedule/import`, {
    method: 'POST',
    headers: { ...HEADERS, 'content-type': 'text/calendar; charset=utf-8' },
    body,
  }).then(async (response) => {
    await response.arrayBuffer();
    open = false;
    if (response.status !== 201) throw new Error(`import: ${response.status}`);
    return performance.now() - began;
  });
  const times = [];
  while (open) times.push(await write());
  return { times, importMs: await imported };
}

const sorted = (list) => [...list].sort((a, b) => a - b);
const quantile = (list, q) => sorted(list)[Math.min(list.length - 1, Math.floor(q * list.length))];
const describe = (list) =>
  `n=${list.length}, p50 ${quantile(list, 0.5).toFixed(1)} ms, p99 ${quantile(list, 0.99).toFixed(1)} ms, ` +
  `max ${Math.max(...list).toFixed(1)} ms`;

try {
  await waitReady(importerUrl);
  if (values.baseline) {
    // That migration's down() alone (later migrations stay): the triggers update the one stats row again.
    const dataSource = await openDatabase(scratch.databaseUrl);
    const runner = dataSource.createQueryRunner();
    await runner.startTransaction();
    await new CounterDeltas1763780001600().down(runner);
    await runner.commitTransaction();
    await runner.release();
    await dataSource.destroy();
  }
  for (let i = 0; i < 20; i++) await write();
  const alone = [];
  for (let i = 0; i < WRITES; i++) alone.push(await write());
  const beside = [];
  const imports = [];
  for (let round = 0; round < ROUNDS; round++) {
    const { times, importMs } = await importBeside(round);
    beside.push(...times);
    imports.push(importMs);
  }
  console.log(
    `node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu?'} ×${os.cpus().length}, load ${os
      .loadavg()
      .map((load) => load.toFixed(2))
      .join(
        ' ',
      )}; PostgreSQL; ${values.baseline ? 'BASELINE: one stats row (1763780001600 reverted)' : 'delta rows (1763780001600)'}`,
  );
  console.log(
    'method: writer instance in this process, importer instance in a child process, one database; one ' +
      'POST /api/v1/Schedule at a time over loopback (fetch)',
  );
  console.log(`single writes alone:                       ${describe(alone)}`);
  console.log(`single writes beside a ${EVENTS}-event import:  ${describe(beside)}`);
  console.log(`imports (${ROUNDS}): ${imports.map((ms) => `${ms.toFixed(0)} ms`).join(', ')}`);
} finally {
  importer.kill('SIGTERM');
  await new Promise((resolve) => importer.once('exit', resolve));
  await app.close();
  await scratch.drop();
}
