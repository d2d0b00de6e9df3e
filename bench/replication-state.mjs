// changeSetState latency (operation 5) for one collection on 200 servers × 10 nodes, on SQLite and PostgreSQL.
//
// For each database the script boots the real app (createApp from dist/: migrations, every global mechanism,
// LOG_LEVEL=warn) on a fresh database — a temp SQLite file, or a PostgreSQL database it creates next to the one
// --pg-url names and drops afterwards — and seeds, with bulk INSERTs shaped exactly like the ingestion's rows:
//   - 200 servers × 10 nodes, heartbeats (1 % of nodes stale);
//   - the measured collection: origin srv-000-n0, change sets 1…50 announced; 97 % of nodes at 50, 1 % never
//     reported, 2 % behind (40…49), each behind node with an apply error reported 3 times; every node's apply
//     history has 5 reports;
//   - 4 more collections with every node at 50 and the same history, so the tables are not just the measured data
//     (≈ 10,000 watermark rows, ≈ 49,000 apply-history rows).
// Then it measures (after --warmup calls): (1) the whole HTTP route through fastify.inject (auth, validation,
// diagnosis, JSON of the ~2,000-node answer), (2) the service call alone, (3) LocalOnly (one server), printing
// median / p95 / max over --runs calls each, and the number of SQL statements one call executes (counted at the
// driver). Goal: median of (1) ≤ 50 ms on SQLite. Wall-clock figures include waiting for a CPU when the machine is
// busy (the load average is printed); the CPU time this process spent per call is printed beside them — on
// SQLite, where the database runs in-process, it is what the call costs on an idle machine.
//
// Run after `npm run build`: node bench/replication-state.mjs [--runs 100] [--warmup 10] [--targets sqlite,postgres]
//   [--pg-url postgres://postgres@127.0.0.1:5432/test]   (PLATFORM_DIST=<folder> to use another build than dist/)
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const GOAL_MS = 50;
const SERVERS = 200;
const NODES_PER_SERVER = 10;
const LATEST = 50;
const COLLECTION = 'orders';
const ORIGIN = 'srv-000-n0';
const OTHER_COLLECTIONS = ['stock', 'invoices', 'customers', 'prices'];
const HISTORY = 5;
const ADMIN_KEY = 'bench-admin-key-0123456789abcdef';

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '100' },
    warmup: { type: 'string', default: '10' },
    targets: { type: 'string', default: 'sqlite,postgres' },
    'pg-url': {
      type: 'string',
      default: process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (args.help) {
  console.log(
    'usage: node bench/replication-state.mjs [--runs 100] [--warmup 10] [--targets sqlite,postgres] [--pg-url URL]',
  );
  process.exit(0);
}
const runs = Number(args.runs);
const warmup = Number(args.warmup);

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.resolve(process.env.PLATFORM_DIST ?? path.join(ROOT, 'dist'), 'src');
if (!existsSync(path.join(DIST, 'replication/replication.store.js'))) {
  console.error(`${DIST} has no replication build: run \`npm run build\` first.`);
  process.exit(1);
}
const load = (file) => import(pathToFileURL(path.join(DIST, file)).href);
const { loadConfig } = await load('config/config.js');
const { createApp } = await load('create-app.js');
const { createRootLogger } = await load('logging/logger.js');
const { ReplicationStore } = await load('replication/replication.store.js');
const { ChangeSetStateService } = await load('replication/change-set-state.service.js');
const require = createRequire(path.join(ROOT, 'package.json'));
const pg = require('pg');

function stats(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { median: at(0.5), p95: at(0.95), max: sorted.at(-1) };
}
const ms = (value) => `${value.toFixed(1)} ms`;

async function measure(label, call) {
  for (let i = 0; i < warmup; i++) await call();
  const samples = [];
  const cpu = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const cpuStart = process.cpuUsage();
    await call();
    const used = process.cpuUsage(cpuStart);
    samples.push(performance.now() - started);
    cpu.push((used.user + used.system) / 1000);
  }
  const { median, p95, max } = stats(samples);
  console.log(
    `  ${label.padEnd(44)} median ${ms(median).padStart(9)}  p95 ${ms(p95).padStart(9)}  max ${ms(max).padStart(9)}` +
      `  (this process's CPU per call: median ${ms(stats(cpu).median)})`,
  );
  return median;
}

/** Multi-row INSERTs in chunks, through the store's own SQL path (placeholders and instants per dialect). */
async function insertRows(sql, table, columns, rows, suffix = '') {
  const chunk = Math.floor(900 / columns.length);
  for (let i = 0; i < rows.length; i += chunk) {
    const part = rows.slice(i, i + chunk);
    const values = part.map(() => `(${columns.map(() => '?').join(', ')})`).join(', ');
    await sql.transaction([
      { sql: `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${values} ${suffix}`, params: part.flat() },
    ]);
  }
}

async function seed(app) {
  const sql = app.get(ReplicationStore).sql;
  const now = Date.now();
  const at = (secondsAgo) => sql.instant(new Date(now - secondsAgo * 1000));
  const servers = [];
  const nodes = [];
  for (let s = 0; s < SERVERS; s++) {
    const server = `srv-${String(s).padStart(3, '0')}`;
    servers.push([server, server, at(86_400)]);
    for (let n = 0; n < NODES_PER_SERVER; n++) {
      const index = s * NODES_PER_SERVER + n;
      const seen = index % 100 === 7 ? at(3_600) : at(5);
      nodes.push([`${server}-n${n}`, server, `${server}-n${n}`, at(86_400), seen, seen, '3.4.1']);
    }
  }
  await insertRows(sql, 'replication_servers', ['id', 'name', 'registered_at'], servers);
  await insertRows(
    sql,
    'replication_nodes',
    ['id', 'server_id', 'name', 'registered_at', 'last_seen_at', 'last_heartbeat_at', 'agent_version'],
    nodes,
  );
  const changeSets = [];
  const watermarks = [];
  const applies = [];
  const errors = [];
  for (const collection of [COLLECTION, ...OTHER_COLLECTIONS]) {
    for (let number = 1; number <= LATEST; number++)
      changeSets.push([collection, ORIGIN, number, at(3_000 - number * 60)]);
    nodes.forEach(([node], index) => {
      const measured = collection === COLLECTION;
      if (measured && index % 100 === 13) return; // never reported
      const applied = measured && index % 50 === 21 ? 40 + (index % 10) : LATEST;
      watermarks.push([node, collection, ORIGIN, applied, at(3_000 - applied * 60 - 2)]);
      for (let k = 0; k < HISTORY; k++) {
        const number = applied - k * 2;
        if (number >= 1) applies.push([collection, ORIGIN, node, number, at(3_000 - number * 60 - 2)]);
      }
      if (measured && applied < LATEST) {
        for (let k = 0; k < 3; k++)
          errors.push([
            randomUUID(),
            node,
            collection,
            ORIGIN,
            applied + 1,
            'E_CONSTRAINT',
            'duplicate key value violates unique constraint "orders_pkey"',
            '{"table":"orders"}',
            at(600 - k * 60),
            at(600 - k * 60),
          ]);
      }
    });
  }
  await insertRows(
    sql,
    'replication_change_sets',
    ['collection', 'origin', 'number', 'created_at'],
    changeSets,
  );
  await insertRows(
    sql,
    'replication_watermarks',
    ['node_id', 'collection', 'origin', 'applied', 'applied_at'],
    watermarks,
  );
  await insertRows(
    sql,
    'replication_applies',
    ['collection', 'origin', 'node_id', 'applied', 'applied_at'],
    applies,
  );
  await insertRows(
    sql,
    'replication_errors',
    [
      'id',
      'node_id',
      'collection',
      'origin',
      'change_set',
      'code',
      'message',
      'data',
      'occurred_at',
      'received_at',
    ],
    errors,
  );
  if (sql.dialect === 'postgres') await app.get(ReplicationStore).sql.all('ANALYZE');
  return { watermarks: watermarks.length, applies: applies.length, errors: errors.length };
}

/** Statements the driver executes during one call (better-sqlite3 statement runs, or pg client queries). */
async function countStatements(dataSource, call) {
  let count = 0;
  const restore = [];
  const wrap = (target, name) => {
    const original = target[name];
    target[name] = function (...callArgs) {
      count++;
      return original.apply(this, callArgs);
    };
    restore.push(() => (target[name] = original));
  };
  if (dataSource.options.type === 'postgres') wrap(pg.Client.prototype, 'query');
  else {
    const proto = Object.getPrototypeOf(dataSource.driver.databaseConnection.prepare('SELECT 1'));
    for (const name of ['all', 'get', 'run', 'iterate']) wrap(proto, name);
  }
  try {
    await call();
  } finally {
    for (const undo of restore) undo();
  }
  return count;
}

async function postgresDatabase(baseUrl) {
  const base = new URL(baseUrl);
  const name =
    `${decodeURIComponent(base.pathname.slice(1))}_bench_${randomUUID().slice(0, 8)}`.toLowerCase();
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

async function benchmark(target) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'replication-bench-'));
  let database;
  if (target === 'postgres') database = await postgresDatabase(args['pg-url']);
  const url = database?.url ?? `sqlite:${path.join(dataDir, 'platform.sqlite')}`;
  const config = loadConfig({
    DATA_DIR: dataDir,
    DATABASE_URL: url,
    API_KEYS: ADMIN_KEY,
    RATE_LIMIT: '0',
    LOG_LEVEL: 'warn',
    REPLICATION_SERVER_ID: 'srv-042',
  });
  const { app, dataSource } = await createApp(config, createRootLogger('warn'));
  try {
    const seeded = await seed(app);
    console.log(
      `\n${target}: ${SERVERS} servers × ${NODES_PER_SERVER} nodes, ${seeded.watermarks} watermarks, ` +
        `${seeded.applies} apply-history rows, ${seeded.errors} error rows`,
    );
    const fastify = app.getHttpAdapter().getInstance();
    const body = { Collection: COLLECTION, Node: ORIGIN, Increment: 0, LocalOnly: false };
    const http = async (payload) => {
      const response = await fastify.inject({
        method: 'POST',
        url: '/api/v1/Replication/Diagnostics/changeSetState',
        headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
        payload: JSON.stringify(payload),
      });
      if (response.statusCode !== 200)
        throw new Error(`HTTP ${response.statusCode}: ${response.body.slice(0, 200)}`);
      return response;
    };
    const sample = await http(body);
    const answer = sample.json();
    const nodeCount = answer.Servers.reduce((sum, server) => sum + server.Nodes.length, 0);
    console.log(
      `  answer: ${answer.Servers.length} servers, ${nodeCount} nodes, ChangeSet ${answer.ChangeSet}, ` +
        `FullyReplicated ${answer.FullyReplicated}, ${(sample.body.length / 1024).toFixed(0)} KiB of JSON`,
    );
    const service = app.get(ChangeSetStateService);
    console.log(
      `  SQL statements per call: ${await countStatements(dataSource, () => service.changeSetState(body))}`,
    );
    const median = await measure('HTTP route (inject), all servers', () => http(body));
    await measure('service call only, all servers', () => service.changeSetState(body));
    await measure('HTTP route, LocalOnly (1 server × 10 nodes)', () => http({ ...body, LocalOnly: true }));
    await measure('HTTP route, Increment -5 (older change set)', () => http({ ...body, Increment: -5 }));
    return median;
  } finally {
    await app.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

console.log(
  `node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length}, load ${os
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(' ')}; ${runs} runs after ${warmup} warm-up calls`,
);
const results = {};
for (const target of args.targets
  .split(',')
  .map((value) => value.trim())
  .filter(Boolean)) {
  results[target] = await benchmark(target);
}
if (results.sqlite !== undefined) {
  const ok = results.sqlite <= GOAL_MS;
  console.log(`\nSQLite median ${ms(results.sqlite)} — goal ≤ ${GOAL_MS} ms: ${ok ? 'met' : 'NOT met'}`);
}
