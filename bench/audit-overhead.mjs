// What the audit trail costs (the goal: operation 1 nothing, a write at most ~10%). The real app
// (createApp, real database, every hook) is called in-process (app.inject, sequential, no network), alternating
// "audit off" and "audit on" rounds on one app so that load from other processes falls on both alike:
//   off: AuditTrail.prototype.record/recordAll replaced by no-ops (the write's transaction without its event)
//   on:  the shipped code (one INSERT into audit_events inside the write's transaction)
// Writes measured: POST /api/v1/Schedule (create) and PUT /api/v1/Schedule/{id} (replace). Operation 1
// (POST /api/v1/Occurrence/hasOccurrences/byGroup, public) is measured the same way: it never reaches audit code.
// Run after `npm run build`:  node bench/audit-overhead.mjs [--rounds 6] [--requests 300]
// DATABASE_URL=postgres://… runs on a fresh PostgreSQL database created next to the one it names (dropped after).
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { builtService, hostLine, scratchDatabase } from './support/scratch-database.mjs';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '6' }, requests: { type: 'string', default: '300' } },
});
const ROUNDS = Number(values.rounds);
const REQUESTS = Number(values.requests);
const KEY = 'bench-admin-key-0123456789abcdef';

const dist = builtService();
const { loadConfig } = await import(dist('src/config/config.js'));
const { createApp } = await import(dist('src/create-app.js'));
const { createRootLogger } = await import(dist('src/logging/logger.js'));
const { AuditTrail } = await import(dist('src/audit/audit-trail.js'));

const database = await scratchDatabase('audit-overhead');
const config = loadConfig({
  DATA_DIR: database.dataDir,
  DATABASE_URL: database.databaseUrl,
  API_KEYS: KEY,
  RATE_LIMIT: '0',
  LOG_LEVEL: 'warn',
  OVERLOAD_EVENT_LOOP_DELAY_MS: '0',
});
const { app } = await createApp(config, createRootLogger('warn'));
const fastify = app.getHttpAdapter().getInstance();

const item = (name) => ({
  Name: name,
  Start: '2026-01-05T09:00:00+01:00',
  End: '2026-01-05T09:15:00+01:00',
  StartTimeZone: 'Europe/Berlin',
  Recurrence: { RecurrenceType: 'Weekly', Interval: '1', Pattern: 'FREQ=WEEKLY;BYDAY=MO,WE,FR' },
});
const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
const createBody = JSON.stringify({ ScheduleItems: [item('Stand-up')] });
const replaceBody = JSON.stringify({ ScheduleItems: [item('Stand-up'), item('Review')] });

async function call(method, url, payload, expected) {
  const response = await fastify.inject({ method, url, headers, payload });
  if (response.statusCode !== expected)
    throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`);
  return response;
}

const shipped = { record: AuditTrail.prototype.record, recordAll: AuditTrail.prototype.recordAll };
function audit(on) {
  AuditTrail.prototype.record = on ? shipped.record : () => Promise.resolve();
  AuditTrail.prototype.recordAll = on ? shipped.recordAll : () => Promise.resolve();
}

/** Mean µs per request of `requests` sequential calls. */
async function timed(requests, send) {
  const started = performance.now();
  for (let index = 0; index < requests; index++) await send(index);
  return ((performance.now() - started) * 1000) / requests;
}

const ids = [];
const byGroupBody = () =>
  JSON.stringify({
    Groups: [{ Key: 'rooms', ScheduleIds: ids.slice(0, 20) }],
    Start: '2026-03-16T08:00:00Z',
    End: '2026-03-16T09:00:00Z',
  });

async function round(on) {
  audit(on);
  const create = await timed(REQUESTS, async () => {
    const response = await call('POST', '/api/v1/Schedule', createBody, 201);
    ids.push(response.json().Result.Id);
  });
  const recent = ids.slice(-REQUESTS);
  const replace = await timed(REQUESTS, (index) =>
    call('PUT', `/api/v1/Schedule/${recent[index]}`, replaceBody, 200),
  );
  const body = byGroupBody();
  const operation1 = await timed(REQUESTS, () =>
    call('POST', '/api/v1/Occurrence/hasOccurrences/byGroup', body, 200),
  );
  return { create, replace, operation1 };
}

const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
console.log(`audit-overhead: ${hostLine()}, ${config.database.type}`);
console.log(
  `${ROUNDS} rounds × (${REQUESTS} creates, ${REQUESTS} replaces, ${REQUESTS} operation-1 calls) per mode`,
);
await round(true); // warm-up, discarded
const results = { off: [], on: [] };
for (let index = 0; index < ROUNDS; index++) {
  // Alternate which mode goes first, so neither always runs on the larger table.
  for (const on of index % 2 === 0 ? [false, true] : [true, false])
    results[on ? 'on' : 'off'].push(await round(on));
}
audit(true);
for (const what of ['create', 'replace', 'operation1']) {
  const off = median(results.off.map((result) => result[what]));
  const on = median(results.on.map((result) => result[what]));
  const change = ((on / off - 1) * 100).toFixed(1);
  console.log(
    `${what.padEnd(10)} audit off ${off.toFixed(0).padStart(6)} µs   on ${on.toFixed(0).padStart(6)} µs   ${change.startsWith('-') ? '' : '+'}${change}%  (median of round means)`,
  );
}
await app.close();
await database.drop();
