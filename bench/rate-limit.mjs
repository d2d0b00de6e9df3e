// Rate-limit cost benchmark (goal: ≤ 1 ms p50 added): the latency RATE_LIMIT adds per request, per store, on PostgreSQL.
// The built service (dist/) runs as a child process on a fresh PostgreSQL database, once per configuration:
//   off       RATE_LIMIT=0 (no counting: the baseline)
//   memory    RATE_LIMIT_STORE=memory   (per instance)
//   database  RATE_LIMIT_STORE=database (one budget for the fleet: an upsert into rate_limits per request)
//   redis     RATE_LIMIT_STORE=redis://127.0.0.1:6379 (skipped when nothing answers there)
// The limit is set high enough never to refuse, so every request pays the full counting cost. The request is an
// authenticated GET /api/v1/scim/ServiceProviderConfig (a static answer: what is measured is the platform, not an
// area). Latency is taken in this process with process.hrtime around each request on one keep-alive connection,
// sequentially (no queueing in the figure), after a warm-up. Each round runs every configuration, starting with a
// different one, so a drift of the host affects all of them alike; the figure is the median of the per-round p50s.
//   node bench/rate-limit.mjs [--requests 4000] [--warmup 1000] [--rounds 3] [--concurrency 1]
//                             [--database-url postgres://postgres@127.0.0.1:5432/postgres]
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TARGET_ADDED_P50_MS = 1;

const { values: args } = parseArgs({
  options: {
    requests: { type: 'string', default: '4000' },
    warmup: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '1' },
    'database-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
  },
});
const REQUESTS = Number(args.requests);
const WARMUP = Number(args.warmup);
const ROUNDS = Number(args.rounds);
const CONCURRENCY = Number(args.concurrency);

function psql(url, sql) {
  execFileSync('psql', [url, '-qc', sql], { stdio: 'pipe' });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

function redisAnswers() {
  return new Promise((resolve) => {
    const socket = net.connect(6379, '127.0.0.1');
    socket.setTimeout(500);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

async function startServer(env) {
  const port = await freePort();
  const child = spawn(process.execPath, ['dist/src/main.js'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: os.tmpdir(),
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      PORT: String(port),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`service exited ${child.exitCode}: ${output}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health/ready`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`service not ready: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    port,
    stop: () =>
      new Promise((resolve) => {
        child.once('close', resolve);
        child.kill('SIGTERM');
      }),
  };
}

function request(agent, port, key) {
  return new Promise((resolve, reject) => {
    const req = http.get(
      {
        host: '127.0.0.1',
        port,
        agent,
        path: '/api/v1/scim/ServiceProviderConfig',
        headers: { authorization: `Bearer ${key}` },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`)),
        );
      },
    );
    req.on('error', reject);
  });
}

/** `count` requests over `CONCURRENCY` keep-alive connections; the latency of each in ms. */
async function measure(port, key, count) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const latencies = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next += 1;
      const start = process.hrtime.bigint();
      await request(agent, port, key);
      latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  agent.destroy();
  return latencies.sort((a, b) => a - b);
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const configurations = [
  ['off', { RATE_LIMIT: '0' }],
  ['memory', { RATE_LIMIT: '10000000', RATE_LIMIT_STORE: 'memory' }],
  ['database', { RATE_LIMIT: '10000000', RATE_LIMIT_STORE: 'database' }],
];
if (await redisAnswers()) {
  configurations.push(['redis', { RATE_LIMIT: '10000000', RATE_LIMIT_STORE: 'redis://127.0.0.1:6379' }]);
} else {
  console.log('redis: nothing answers on 127.0.0.1:6379, skipped');
}

const adminUrl = args['database-url'];
const database = `platform_api_bench_rl_${process.pid}`;
psql(adminUrl, `CREATE DATABASE ${database}`);
const databaseUrl = new URL(adminUrl);
databaseUrl.pathname = `/${database}`;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-rate-limit-'));
const baseEnv = { DATABASE_URL: databaseUrl.toString(), DATA_DIR: dataDir };

try {
  // First start: migrations and the first admin key (written to DATA_DIR/initial-admin-key when not on a terminal).
  const first = await startServer({ ...baseEnv, RATE_LIMIT: '0' });
  await first.stop();
  const key = readFileSync(path.join(dataDir, 'initial-admin-key'), 'utf8').trim();

  const p50s = Object.fromEntries(configurations.map(([name]) => [name, []]));
  const p99s = Object.fromEntries(configurations.map(([name]) => [name, []]));
  for (let round = 1; round <= ROUNDS; round += 1) {
    // Each round starts with another configuration, so none is always the one measured first.
    const order = configurations.map((_, i) => configurations[(i + round - 1) % configurations.length]);
    for (const [name, env] of order) {
      const server = await startServer({ ...baseEnv, ...env });
      await measure(server.port, key, WARMUP);
      const latencies = await measure(server.port, key, REQUESTS);
      await server.stop();
      p50s[name].push(percentile(latencies, 50));
      p99s[name].push(percentile(latencies, 99));
      console.log(
        `round ${round} ${name.padEnd(8)} p50 ${percentile(latencies, 50).toFixed(3)} ms  p90 ${percentile(latencies, 90).toFixed(3)} ms  p99 ${percentile(latencies, 99).toFixed(3)} ms`,
      );
    }
  }

  const baseline = median(p50s.off);
  console.log(
    `\n${REQUESTS} requests per configuration and round (after ${WARMUP} warm-up), ${CONCURRENCY} connection(s), ${ROUNDS} rounds, PostgreSQL; median p50 of the rounds:`,
  );
  for (const [name] of configurations) {
    const p50 = median(p50s[name]);
    const added = p50 - baseline;
    const verdict =
      name === 'off'
        ? ''
        : added <= TARGET_ADDED_P50_MS
          ? ` (target ≤ ${TARGET_ADDED_P50_MS} ms: met)`
          : ` (target ≤ ${TARGET_ADDED_P50_MS} ms: NOT met)`;
    console.log(
      `  ${name.padEnd(8)} p50 ${p50.toFixed(3)} ms  p99 ${median(p99s[name]).toFixed(3)} ms  added p50 ${name === 'off' ? '—' : `${added.toFixed(3)} ms`}${verdict}`,
    );
  }
} finally {
  rmSync(dataDir, { recursive: true, force: true });
  psql(adminUrl, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
}
