// Operations 1 and 2 among 100,000 stored schedules, end to end over HTTP to the real app (createApp from
// dist/, LOG_LEVEL=warn, rate limit off) on 127.0.0.1, every client in its own process (bench/support):
//   pages  operation 2, GET /api/v1/Schedule: pages of 20 and of 500 at the first, middle and last position,
//          sequential keep-alive GETs, each answer checked (TotalPages, HasNextPage, length, first schedule's id);
//   live   GET /health/live every 50 ms from one process while 8 clients in another pull 500-schedule pages
//          (a random position each time is not needed: every page costs the same) for 6 s: the probe's median /
//          p90 / max, and how many big pages were served;
//   op1    operation 1, one group of 10,000 and one of 50,000 ids, a window no schedule overlaps (every rule is
//          evaluated), sequential POSTs after warm-up, each answer checked;
//   export the iCalendar export of 1,000 schedules (GET /api/v1/Schedule/ical?ids=…), sequential GETs.
// For every sequential case the service's synchronous stretches over 20 ms are reported too (support/
// loop-stretches.mjs: a 1 ms timer in this process, which runs nothing but the service while the client process
// measures; the longest whole and less the garbage collector's pauses in it).
// The schedules are inserted straight into the tables (support/seed-schedules.mjs), each like a typical stored
// one: 1 item, a weekly rule and 1 exception, created 1 ms apart so their list order is known.
// SQLite by default (a temp file); PostgreSQL when DATABASE_URL=postgres://…/<db> (a scratch database next to it,
// dropped afterwards). Run after `npm run build`:
// `node bench/schedules-scale.mjs [--schedules 100000] [--runs 40] [--only pages,live,op1] [--dist dist]`.
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { load, sample } from './support/http-sampler-client.mjs';
import { describeStretches, watchStretches } from './support/loop-stretches.mjs';
import { builtService, hostLine, scratchDatabase, stats } from './support/scratch-database.mjs';
import { seedSchedules } from './support/seed-schedules.mjs';

const { values: args } = parseArgs({
  options: {
    schedules: { type: 'string', default: '100000' },
    runs: { type: 'string', default: '40' },
    only: { type: 'string', default: 'pages,live,op1,export' },
    dist: { type: 'string', default: 'dist' },
  },
});
const count = Number(args.schedules);
const runs = Number(args.runs);
const only = new Set(args.only.split(','));

const dist = builtService(args.dist);
const { loadConfig } = await import(dist('src/config/config.js'));
const { createApp } = await import(dist('src/create-app.js'));
const { createRootLogger } = await import(dist('src/logging/logger.js'));

const scratch = await scratchDatabase('schedules-scale');
const apiKey = randomUUID();
const config = loadConfig({
  DATA_DIR: scratch.dataDir,
  DATABASE_URL: scratch.databaseUrl,
  API_KEYS: apiKey,
  RATE_LIMIT: '0',
  LOG_LEVEL: 'warn',
});
const { app, dataSource } = await createApp(config, createRootLogger('warn'));
const dialect = config.database.type;

// ---- seed ----------------------------------------------------------------------------------------------------------

const seedStart = performance.now();
/** Every schedule's id in list (creation) order. */
const ids = await seedSchedules(dist, dataSource, count);
await dataSource.query(dialect === 'postgres' ? 'VACUUM ANALYZE' : 'ANALYZE');
// Write the seeding's WAL out now, not during the measurements (needs a superuser; skipped otherwise).
if (dialect === 'postgres') await dataSource.query('CHECKPOINT').catch(() => undefined);
else await dataSource.query('PRAGMA wal_checkpoint(TRUNCATE)');
console.log(
  `${dialect}: seeded ${count.toLocaleString('en')} schedules (1 item, weekly rule, 1 exception each) in ` +
    `${((performance.now() - seedStart) / 1000).toFixed(1)} s`,
);

await app.listen(0, '127.0.0.1');
// The seeding held the event loop: let two of under-pressure's one-second samples pass, or the first requests are
// shed (503 Overloaded, OVERLOAD_EVENT_LOOP_DELAY_MS) as they would be by an instance that was just that busy.
await new Promise((resolve) => setTimeout(resolve, 2_100));
const { port } = app.getHttpServer().address();
const origin = `http://127.0.0.1:${port}`;
const headers = { authorization: `Bearer ${apiKey}` };
const lines = [];

/** Runs the sampler's cases one at a time, each with the service's long stretches while it ran. */
async function sampleWithStalls(job) {
  const results = [];
  for (const one of job.cases) {
    const stretches = watchStretches();
    const [result] = await sample({ ...job, cases: [one] });
    results.push({ ...result, stretches: stretches.stop() });
  }
  return results;
}
const stall = (result) => describeStretches(result.stretches);

// ---- operation 2: pages ---------------------------------------------------------------------------------------------

const pagePath = (index, size) => `/api/v1/Schedule?PageIndex=${index}&PageSize=${size}`;
if (only.has('pages')) {
  const cases = [];
  for (const size of [20, 500]) {
    const last = Math.ceil(count / size);
    for (const [position, index] of [
      ['first', 1],
      ['middle', Math.ceil(last / 2)],
      ['last', last],
    ]) {
      cases.push({
        label: `page of ${size}, ${position} (PageIndex=${index})`,
        index,
        size,
        goal: size === 20 ? 3 : 25,
      });
    }
  }
  const answers = await sampleWithStalls({
    origin,
    headers,
    digest: 'schedule-page',
    cases: cases.map(({ index, size }) => ({ path: pagePath(index, size), warmup: 5, runs })),
  });
  cases.forEach(({ label, index, size, goal }, at) => {
    const totalPages = Math.ceil(count / size);
    const expected = Math.min(size, count - (index - 1) * size);
    for (const { status, body } of answers[at].answers) {
      if (
        status !== 200 ||
        body.totalPages !== totalPages ||
        body.hasNextPage !== index < totalPages ||
        body.schedules !== expected ||
        body.firstId !== ids[(index - 1) * size]
      )
        throw new Error(`${label}: ${status} ${JSON.stringify(body)}`);
    }
    const s = stats(answers[at].ms);
    lines.push(
      `operation 2, ${label.padEnd(36)} median ${s.median.toFixed(2).padStart(7)} ms  p90 ${s.p90
        .toFixed(2)
        .padStart(7)} ms  max ${s.max.toFixed(2).padStart(7)} ms  (goal ≤ ${goal} ms median: ${
        s.median <= goal ? 'met' : 'NOT met'
      }); ${stall(answers[at])}`,
    );
  });
}

// ---- /health/live while 8 clients pull 500-schedule pages -----------------------------------------------------------

if (only.has('live')) {
  const durationMs = 6_000;
  const startAt = Date.now() + 500;
  const [busy, probe] = await Promise.all([
    load({ origin, headers, clients: 8, durationMs, startAt, path: pagePath(Math.ceil(count / 1000), 500) }),
    load({ origin, headers: {}, clients: 1, durationMs, startAt, pauseMs: 50, path: '/health/live' }),
  ]);
  const s = stats(probe.ms);
  lines.push(
    `/health/live while 8 clients pull 500-schedule pages for ${durationMs / 1000} s: median ${s.median.toFixed(1)} ms, ` +
      `p90 ${s.p90.toFixed(1)} ms, max ${s.max.toFixed(1)} ms over ${probe.served} probes (goal p90 ≤ 100 ms: ${
        s.p90 <= 100 ? 'met' : 'NOT met'
      }); probe statuses ${JSON.stringify(probe.statuses)}`,
  );
  const b = stats(busy.ms);
  lines.push(
    `500-schedule pages served in ${durationMs / 1000} s by 8 clients: ${busy.served} (statuses ${JSON.stringify(
      busy.statuses,
    )}; each: median ${b.median.toFixed(0)} ms, p90 ${b.p90.toFixed(0)} ms)`,
  );
}

// ---- operation 1 -------------------------------------------------------------------------------------------------

if (only.has('op1')) {
  // A Tuesday night: no schedule matches, so every series is checked (the worst case for one group).
  const sizes = [10_000, 50_000].filter((size) => size <= count);
  const answers = await sampleWithStalls({
    origin,
    headers,
    digest: 'groups',
    cases: sizes.map((size) => ({
      path: '/api/v1/Occurrence/hasOccurrences/byGroup',
      method: 'POST',
      body: JSON.stringify({
        Groups: [{ Key: 'all', ScheduleIds: ids.slice(0, size) }],
        Start: '2026-06-16T22:00:00Z',
        End: '2026-06-16T23:00:00Z',
      }),
      warmup: 5,
      runs,
    })),
  });
  sizes.forEach((size, at) => {
    for (const { status, body } of answers[at].answers)
      if (status !== 200 || body.all !== false)
        throw new Error(`op1 ${size}: ${status} ${JSON.stringify(body)}`);
    const s = stats(answers[at].ms);
    const goal = size === 10_000 ? 20 : 100;
    lines.push(
      `operation 1, one group of ${size.toLocaleString('en')} ids, no hit: median ${s.median.toFixed(1)} ms, p90 ${s.p90.toFixed(
        1,
      )} ms, max ${s.max.toFixed(1)} ms (goal ≤ ${goal} ms median: ${s.median <= goal ? 'met' : 'NOT met'}); ${stall(answers[at])}`,
    );
  });
}

// ---- iCalendar export of 1,000 schedules ---------------------------------------------------------------------------

if (only.has('export')) {
  const [answer] = await sampleWithStalls({
    origin,
    headers,
    cases: [
      {
        path: `/api/v1/Schedule/ical?ids=${ids.slice(0, 1000).join(',')}`,
        warmup: 3,
        runs: Math.min(runs, 20),
      },
    ],
  });
  if (answer.answers.some(({ status }) => status !== 200)) throw new Error('export: not 200');
  const s = stats(answer.ms);
  lines.push(
    `iCalendar export of 1,000 schedules: median ${s.median.toFixed(1)} ms, p90 ${s.p90.toFixed(1)} ms; ${stall(answer)}`,
  );
}

await app.close();
await scratch.drop();

console.log(`\n${hostLine()}`);
console.log(
  `database: ${dialect}, ${count.toLocaleString('en')} schedules; clients in their own processes over loopback ` +
    `keep-alive HTTP; sequential figures over ${runs} requests after 5 warm-up ones`,
);
for (const line of lines) console.log(line);
