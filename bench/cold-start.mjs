// Cold-start benchmark: spawn `node dist/src/main.js` → first 200 on GET /health/ready.
// "cold" = fresh DATA_DIR (new SQLite file, every migration applied at start); "warm" = a second start on that same
// database (no migration pending). Each run gets a free port on 127.0.0.1, API_KEYS set (so no bootstrap key is
// created or printed) and LOG_LEVEL=warn. The clock starts just before spawn() and stops when the poll (a new TCP
// connection every ~5 ms) first gets a 200, so it includes Node's own start, module loading, migrations, Nest init
// and listen. Run after `npm run build`: `node bench/cold-start.mjs [--runs 7]`.
// Node's compile cache (Node 22.1+, switched on by the service itself, src/compile-cache.ts): `--compile-cache
// default` leaves it where the service puts it (filled by an untimed first start), `off` disables it
// (NODE_DISABLE_COMPILE_CACHE=1), `fresh` gives every cold run an empty cache folder that its warm run then reuses
// (a first start ever on a machine, then the next one).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const GOAL_MS = 1000;
const CACHE_MODES = ['default', 'off', 'fresh'];
const POLL_MS = 5;

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '7' },
    timeout: { type: 'string', default: '30000' },
    dist: { type: 'string' },
    'compile-cache': { type: 'string', default: 'default' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (args.help) {
  console.log(
    'usage: node bench/cold-start.mjs [--runs N (default 7)] [--timeout MS per start (default 30000)] [--dist DIR (default dist/)]' +
      ' [--compile-cache default|off|fresh]',
  );
  process.exit(0);
}
const runs = Number(args.runs);
const timeoutMs = Number(args.timeout);
if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs must be a positive whole number');
const cacheMode = args['compile-cache'];
if (!CACHE_MODES.includes(cacheMode))
  throw new Error(`--compile-cache must be one of ${CACHE_MODES.join(', ')}`);

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// --dist: another build output, e.g. a copy inside the project so that a concurrent rebuild cannot break the runs.
const mainJs = path.join(path.resolve(args.dist ?? path.join(root, 'dist')), 'src/main.js');
if (!existsSync(mainJs)) {
  console.error(`${mainJs} is missing: run \`npm run build\` first.`);
  process.exit(1);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** One GET on a fresh connection; resolves to the status code, or undefined when nothing answers yet. */
function probe(port) {
  return new Promise((resolve) => {
    const req = http.get(
      { host: '127.0.0.1', port, path: '/health/ready', agent: false, timeout: 1000 },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
        res.on('error', () => resolve(undefined));
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Only what the service needs: nothing from the caller's shell (DATABASE_URL, MODULES, ...) leaks into the runs.
function childEnv(dataDir, port) {
  const cache =
    cacheMode === 'off'
      ? { NODE_DISABLE_COMPILE_CACHE: '1' }
      : cacheMode === 'fresh'
        ? { NODE_COMPILE_CACHE: path.join(dataDir, 'compile-cache') }
        : {};
  return {
    ...cache,
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? os.homedir(),
    DATA_DIR: dataDir,
    API_KEYS: randomBytes(24).toString('base64url'),
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    PORT: String(port),
    MIGRATIONS_RUN: 'true',
  };
}

function stop(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const force = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

const CLOCK_TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** CPU time (user + system) the process has used so far, from /proc; undefined where there is no /proc. */
function cpuTimeMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** Wall-clock milliseconds from spawn to the first 200 on /health/ready, and the server's CPU time by then. */
async function timeStart(dataDir) {
  const port = await freePort();
  let stderr = '';
  let exited;
  const t0 = performance.now();
  const child = spawn(process.execPath, [mainJs], {
    cwd: root,
    env: childEnv(dataDir, port),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr.on('data', (chunk) => (stderr += chunk));
  child.on('exit', (code, signal) => (exited = { code, signal }));
  try {
    for (;;) {
      const status = await probe(port);
      if (status === 200) return { ms: performance.now() - t0, cpuMs: cpuTimeMs(child.pid) };
      if (exited) throw new Error(`server exited (${exited.code ?? exited.signal}) before ready:\n${stderr}`);
      if (performance.now() - t0 > timeoutMs)
        throw new Error(`not ready after ${timeoutMs} ms (last status ${status})\n${stderr}`);
      await sleep(POLL_MS);
    }
  } finally {
    await stop(child);
  }
}

/** Node's own floor on this machine: spawn → exit of an empty script. */
async function timeEmptyNode() {
  const t0 = performance.now();
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return performance.now() - t0;
}

function stats(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { median, min: sorted[0], max: sorted[sorted.length - 1] };
}

const fmt = (ms) => `${Math.round(ms)} ms`;
const row = (samples) => {
  const t = stats(samples.map((x) => x.ms));
  const cpu = samples.every((x) => x.cpuMs !== undefined) ? stats(samples.map((x) => x.cpuMs)) : undefined;
  return (
    `median ${fmt(t.median)}  min ${fmt(t.min)}  max ${fmt(t.max)}` +
    (cpu ? `   (server CPU by then: median ${fmt(cpu.median)})` : '')
  );
};

const loadBefore = os.loadavg()[0];
const cold = [];
const warm = [];
const baseline = [];
const dirs = [];
try {
  if (cacheMode === 'default') {
    // Untimed: fills the compile cache, so that every timed run finds it as a restarted service would.
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'platform-api-cold-'));
    dirs.push(dataDir);
    await timeStart(dataDir);
  }
  // Interleaved (cold, warm, cold, warm, ...) so that drift on the machine hits both series alike.
  for (let i = 0; i < runs; i++) {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'platform-api-cold-'));
    dirs.push(dataDir);
    cold.push(await timeStart(dataDir));
    warm.push(await timeStart(dataDir));
    baseline.push({ ms: await timeEmptyNode() });
    process.stderr.write(`run ${i + 1}/${runs}: cold ${fmt(cold[i].ms)}, warm ${fmt(warm[i].ms)}\n`);
  }
} finally {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}

const coldMedian = stats(cold.map((x) => x.ms)).median;
console.log(
  `platform-api cold start (node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${os.platform()})`,
);
console.log(
  `measured: spawn \`node ${path.relative(root, mainJs)}\` → first 200 on GET /health/ready, polled every ~${POLL_MS} ms on a new ` +
    `connection; SQLite in a fresh temp DATA_DIR, API_KEYS set, LOG_LEVEL=warn; ${runs} run(s) each, cold/warm ` +
    `interleaved; compile cache: ${cacheMode}. Server CPU = user+system time of the server process at that moment (/proc), which other load on ` +
    `the machine disturbs less than the wall clock.`,
);
console.log(`cold (fresh DB, migrations run):    ${row(cold)}`);
console.log(`warm (existing DB, none pending):   ${row(warm)}`);
console.log(`node floor (spawn → exit of -e ''): ${row(baseline)}`);
console.log(`load average (1 min) before/after: ${loadBefore.toFixed(2)} / ${os.loadavg()[0].toFixed(2)}`);
console.log(
  `goal: cold start ≤ ${GOAL_MS} ms → ${coldMedian <= GOAL_MS ? 'met' : 'NOT met'} (median wall clock)`,
);
