// Readiness and another area's reads while one table is locked or a dozen imports run, end to end over HTTP to the
// real app (createApp from dist/, listening on a port). Two scenarios:
//   lock     (PostgreSQL only) another session holds `LOCK TABLE schedules IN ACCESS EXCLUSIVE MODE` for --hold
//            seconds while --writers clients keep posting schedules; afterwards the writes answered with an error
//            are looked up: any of them stored is a write answered "failed" that committed.
//   imports  --imports concurrent iCalendar imports of --events events each (one schedule per event), in a loop for
//            --hold seconds.
// During each, a prober asks GET /health/ready and GET /api/v1/scim/Users every 100 ms (one at a time) and the
// figures are those answers' statuses and latencies (send to last byte; p50, p95, max).
// Run after `npm run build`:
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node bench/lock-isolation.mjs [--dist dist] [--hold 15]
// --dist names another build (e.g. of the commit before) for a before/after on the same machine. Without
// DATABASE_URL the imports scenario runs on a fresh SQLite file.
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { builtService, scratchDatabase } from './support/scratch-database.mjs';

const { values } = parseArgs({
  options: {
    dist: { type: 'string', default: 'dist' },
    hold: { type: 'string', default: '15' },
    writers: { type: 'string', default: '12' },
    imports: { type: 'string', default: '12' },
    events: { type: 'string', default: '2000' },
  },
});
const HOLD_MS = Number(values.hold) * 1000;
const dist = builtService(values.dist);
const { loadConfig } = await import(dist('src/config/config.js'));
const { createApp } = await import(dist('src/create-app.js'));
const { createRootLogger } = await import(dist('src/logging/logger.js'));

const KEY = 'bench-admin-key-0123456789abcdef';
const auth = { authorization: `Bearer ${KEY}` };
const database = await scratchDatabase('lock-isolation');
const postgres = /^postgres/.test(database.databaseUrl);
const config = loadConfig({
  DATA_DIR: database.dataDir,
  DATABASE_URL: database.databaseUrl,
  API_KEYS: KEY,
  RATE_LIMIT: '0',
  LOG_LEVEL: 'silent',
  OVERLOAD_EVENT_LOOP_DELAY_MS: '0',
});
const { app } = await createApp(config, createRootLogger('silent'));
await app.listen({ port: 0, host: '127.0.0.1' });
const origin = `http://127.0.0.1:${app.getHttpServer().address().port}`;

async function timed(path, init = {}) {
  const started = performance.now();
  try {
    const response = await fetch(origin + path, init);
    await response.arrayBuffer();
    return { status: response.status, ms: performance.now() - started };
  } catch {
    return { status: 'error', ms: performance.now() - started };
  }
}

/** Probes readiness and a SCIM read until `stop()`; returns their answers. */
function probe() {
  const ready = [];
  const scim = [];
  let running = true;
  const done = (async () => {
    while (running) {
      ready.push(await timed('/health/ready'));
      scim.push(await timed('/api/v1/scim/Users?count=10', { headers: auth }));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  return async () => {
    running = false;
    await done;
    return { ready, scim };
  };
}

function summary(name, answers) {
  const ms = answers.map((answer) => answer.ms).sort((a, b) => a - b);
  const at = (q) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))]?.toFixed(0);
  const statuses = {};
  for (const answer of answers) statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
  return `${name.padEnd(8)} n=${answers.length} statuses=${JSON.stringify(statuses)} p50=${at(0.5)} ms p95=${at(0.95)} ms max=${ms.at(-1)?.toFixed(0)} ms`;
}

async function lockScenario() {
  const holder = new pg.Client({ connectionString: database.databaseUrl });
  await holder.connect();
  await holder.query('BEGIN');
  await holder.query('LOCK TABLE schedules IN ACCESS EXCLUSIVE MODE');
  const stop = probe();
  const writes = [];
  let writing = true;
  let serial = 0;
  const writers = Array.from({ length: Number(values.writers) }, async () => {
    while (writing) {
      const name = `locked-${serial++}`;
      const answer = await timed('/api/v1/Schedule', {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({
          ScheduleItems: [{ Name: name, Start: '2026-03-01T09:00:00Z', End: '2026-03-01T10:00:00Z' }],
        }),
      });
      writes.push({ name, ...answer });
    }
  });
  await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
  await holder.query('ROLLBACK');
  await holder.end();
  writing = false;
  await Promise.all(writers);
  const { ready, scim } = await stop();
  // Anything still committing after its answer has had time to: the lock is gone.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const failed = writes.filter((write) => write.status !== 201).map((write) => write.name);
  const check = new pg.Client({ connectionString: database.databaseUrl });
  await check.connect();
  const { rows } = await check.query('SELECT COUNT(*)::int AS n FROM schedule_items WHERE name = ANY($1)', [
    failed,
  ]);
  await check.end();
  console.log(`\nlock on schedules held ${HOLD_MS / 1000} s, ${values.writers} writers:`);
  console.log(summary('ready', ready));
  console.log(summary('scim', scim));
  console.log(summary('writes', writes));
  console.log(`writes answered an error that were stored afterwards: ${rows[0].n} of ${failed.length}`);
}

function calendar(run, events) {
  const lines = ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//bench//EN'];
  for (let index = 0; index < events; index++) {
    lines.push(
      'BEGIN:VEVENT',
      `UID:bench-${run}-${index}@example.com`,
      'DTSTAMP:20260101T000000Z',
      `DTSTART:20260105T${String(index % 24).padStart(2, '0')}0000Z`,
      `DTEND:20260105T${String(index % 24).padStart(2, '0')}3000Z`,
      'RRULE:FREQ=WEEKLY;BYDAY=MO,WE;COUNT=20',
      `SUMMARY:Event ${index}`,
      `DESCRIPTION:${'x'.repeat(100)}`,
      'END:VEVENT',
    );
  }
  lines.push('END:VCALENDAR', '');
  return lines.join('\r\n');
}

async function importScenario() {
  const stop = probe();
  const answers = [];
  const until = performance.now() + HOLD_MS;
  let run = 0;
  const importers = Array.from({ length: Number(values.imports) }, async () => {
    while (performance.now() < until) {
      const body = calendar(run++, Number(values.events));
      answers.push(
        await timed('/api/v1/Schedule/import', {
          method: 'POST',
          headers: { ...auth, 'content-type': 'text/calendar' },
          body,
        }),
      );
    }
  });
  await Promise.all(importers);
  const { ready, scim } = await stop();
  console.log(`\n${values.imports} concurrent imports of ${values.events} events for ${HOLD_MS / 1000} s:`);
  console.log(summary('ready', ready));
  console.log(summary('scim', scim));
  console.log(summary('imports', answers));
}

console.log(`lock-isolation bench on ${postgres ? 'PostgreSQL' : 'SQLite'}, build ${values.dist}`);
try {
  if (postgres) await lockScenario();
  await importScenario();
} finally {
  await app.close();
  await database.drop();
}
