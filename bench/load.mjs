// Load benchmark: how much of raw Fastify's throughput the service keeps on a validated POST with a ~1 KB nested
// body shaped like the schedule operation's request. Targets, each in its own child process (autocannon stays in
// this process, so on 2 cores server and load generator do not share one), run one at a time in a fixed order:
//   fastify    (c) raw Fastify, one route, body schema = compileDto(GroupsDto).jsonSchema (Fastify's own ajv)
//   nest       (a) the real app from createApp() (hooks, pipe, filter, headers, direct routes), LOG_LEVEL=warn
//   nest-info  (b) the same app with LOG_LEVEL=info, access log lines to /dev/null
//   nest-cv    (d) plain NestFactory + FastifyAdapter + stock class-validator ValidationPipe
//   nest-bare  (e) plain NestFactory + FastifyAdapter + the service's DtoValidationPipe and error filter only
//              (diagnostic: what the service adds to, or saves on, Nest itself)
// The bench-only route (POST /bench/groups) is one DTO class with class-validator decorators, applied here by hand
// because this file is plain JavaScript. Run after `npm run build`:
//   node bench/load.mjs [--duration 10] [--warmup 2] [--connections 50] [--rounds 1] [--targets fastify,nest,...]
//                       [--env SECURITY_HEADERS=false,...]   (extra configuration for the service targets)
//                       [--dist path/to/dist]                 (another build output; default dist/)
//   node bench/load.mjs --serve <target>   only the server, for profiling (prints its port; SIGINT stops it)
import 'reflect-metadata';
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ROUTE = '/bench/groups';
const GOAL = 0.6;
const ALL_TARGETS = ['fastify', 'nest', 'nest-info', 'nest-cv', 'nest-bare'];
const LABELS = {
  fastify: '(c) raw Fastify + ajv (same JSON schema)',
  nest: '(a) service app, LOG_LEVEL=warn',
  'nest-info': '(b) service app, LOG_LEVEL=info → /dev/null',
  'nest-cv': '(d) Nest + class-validator ValidationPipe',
  'nest-bare': '(e) plain Nest + service pipe & error filter',
};

const { values: args } = parseArgs({
  options: {
    serve: { type: 'string' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '1' },
    targets: { type: 'string', default: ALL_TARGETS.join(',') },
    env: { type: 'string', default: '' },
    dist: { type: 'string', default: path.join(ROOT, 'dist') },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

// `--dist` points at another build output (a copy, so that a rebuild by someone else cannot break a long run).
// It must sit inside the project, where its imports still find node_modules.
const DIST = path.join(path.resolve(args.dist), 'src');

// ---------------------------------------------------------------------------------------------------------------
// The request bodies (deterministic shape, so the byte size is the same on every run).

function validBody() {
  return {
    Groups: Array.from({ length: 5 }, (_, i) => ({
      Key: `group-${i + 1}`,
      ScheduleIds: Array.from({ length: 4 }, () => randomUUID()),
    })),
    Start: '2026-01-01T00:00:00Z',
    End: '2026-01-02T00:00:00Z',
  };
}

/** Each must be refused with 400 by every target: they prove the route really applies the rules. */
function invalidBodies(valid) {
  const badUuid = structuredClone(valid);
  badUuid.Groups[3].ScheduleIds[2] = 'not-a-uuid';
  const emptyKey = structuredClone(valid);
  emptyKey.Groups[1].Key = '';
  return {
    'bad UUID deep in Groups[3]': badUuid,
    'empty Key': emptyKey,
    'Start not ISO 8601': { ...valid, Start: 'soon' },
    'Groups empty': { ...valid, Groups: [] },
    'unknown property': { ...valid, Extra: 1 },
    'Groups missing': { Start: valid.Start, End: valid.End },
  };
}

function expectedReply(body) {
  return {
    Succeeded: true,
    Message: null,
    Code: null,
    Groups: Object.fromEntries(body.Groups.map((g) => [g.Key, false])),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Server side (child process): `node bench/load.mjs --serve <target>`; reports its port over IPC.

async function defineBenchRoute() {
  const { Type } = await import('class-transformer');
  const { ArrayMinSize, IsArray, IsISO8601, IsNotEmpty, IsString, IsUUID, ValidateNested } =
    await import('class-validator');
  const { Body, Controller, HttpCode, Module, Post } = await import('@nestjs/common');
  const { Public } = await import(pathToFileURL(path.join(DIST, 'auth/scopes.js')).href);

  /** Applies decorators the way TypeScript's emitted __decorate does: the one listed last runs first. */
  function decorateProperty(cls, prop, designType, ...decorators) {
    Reflect.defineMetadata('design:type', designType, cls.prototype, prop);
    for (let i = decorators.length - 1; i >= 0; i--) decorators[i](cls.prototype, prop);
  }
  function decorateMethod(cls, method, ...decorators) {
    const proto = cls.prototype;
    let descriptor = Object.getOwnPropertyDescriptor(proto, method);
    for (let i = decorators.length - 1; i >= 0; i--)
      descriptor = decorators[i](proto, method, descriptor) ?? descriptor;
    Object.defineProperty(proto, method, descriptor);
  }

  class Group {}
  decorateProperty(Group, 'Key', String, IsString(), IsNotEmpty());
  decorateProperty(Group, 'ScheduleIds', Array, IsArray(), ArrayMinSize(1), IsUUID('all', { each: true }));

  class GroupsDto {}
  decorateProperty(
    GroupsDto,
    'Groups',
    Array,
    IsArray(),
    ArrayMinSize(1),
    ValidateNested({ each: true }),
    Type(() => Group),
  );
  decorateProperty(GroupsDto, 'Start', String, IsISO8601());
  decorateProperty(GroupsDto, 'End', String, IsISO8601());

  class BenchController {
    groups(body) {
      return reply(body);
    }
  }
  decorateMethod(BenchController, 'groups', Public(), Post('groups'), HttpCode(200));
  Body()(BenchController.prototype, 'groups', 0);
  Reflect.defineMetadata('design:paramtypes', [GroupsDto], BenchController.prototype, 'groups');
  Reflect.defineMetadata('design:returntype', Object, BenchController.prototype, 'groups');
  Controller('bench')(BenchController);

  class BenchModule {}
  Module({ controllers: [BenchController] })(BenchModule);
  return { GroupsDto, BenchModule };
}

/** `--env A=1,B=2`: more configuration for the service targets, to see what a setting costs. */
function extraEnv() {
  return Object.fromEntries(
    args.env
      .split(',')
      .filter((pair) => pair.trim() !== '')
      .map((pair) => {
        const at = pair.indexOf('=');
        if (at < 1) throw new Error(`--env wants NAME=value pairs, got "${pair}"`);
        return [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
      }),
  );
}

/** Same answer from every target; Groups maps each key to "not active" (no database work in any target). */
function reply(body) {
  const Groups = {};
  for (const g of body.Groups) Groups[g.Key] = false;
  return { Succeeded: true, Message: null, Code: null, Groups };
}

async function serve(target) {
  const { GroupsDto, BenchModule } = await defineBenchRoute();
  let close;
  if (target === 'fastify') {
    const { compileDto } = await import(pathToFileURL(path.join(DIST, 'validation/compile-dto.js')).href);
    const { default: Fastify } = await import('fastify');
    // removeAdditional: false so that unknown properties are refused (400), as the service does, not stripped.
    const app = Fastify({ ajv: { customOptions: { removeAdditional: false } } });
    app.post(ROUTE, { schema: { body: compileDto(GroupsDto).jsonSchema } }, async (request) =>
      reply(request.body),
    );
    await app.listen({ port: 0, host: '127.0.0.1' });
    close = () => app.close();
    return { port: app.server.address().port, close };
  }
  if (target === 'nest' || target === 'nest-info') {
    const { createApp } = await import(pathToFileURL(path.join(DIST, 'create-app.js')).href);
    const { loadConfig } = await import(pathToFileURL(path.join(DIST, 'config/config.js')).href);
    const { createRootLogger } = await import(pathToFileURL(path.join(DIST, 'logging/logger.js')).href);
    const { pino } = await import('pino');
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'platform-api-load-'));
    const level = target === 'nest' ? 'warn' : 'info';
    const config = loadConfig({
      ...extraEnv(),
      DATABASE_URL: 'sqlite::memory:',
      API_KEYS: 'bench-key-0123456789abcdef',
      RATE_LIMIT: '0',
      LOG_LEVEL: level,
      DATA_DIR: dataDir,
    });
    // Asynchronous like production's stdout destination; /dev/null so the terminal is not the bottleneck.
    const logger = createRootLogger(level, pino.destination({ dest: '/dev/null', sync: false }));
    const { app, dataSource } = await createApp(config, logger, [BenchModule]);
    await app.listen({ port: 0, host: '127.0.0.1' });
    close = async () => {
      await app.close();
      if (dataSource.isInitialized) await dataSource.destroy();
      rmSync(dataDir, { recursive: true, force: true });
    };
    return { port: app.getHttpServer().address().port, close };
  }
  if (target === 'nest-cv' || target === 'nest-bare') {
    const { NestFactory } = await import('@nestjs/core');
    const { FastifyAdapter } = await import('@nestjs/platform-fastify');
    const { ValidationPipe } = await import('@nestjs/common');
    const app = await NestFactory.create(BenchModule, new FastifyAdapter(), { logger: false });
    if (target === 'nest-cv') {
      app.useGlobalPipes(
        new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }),
      );
    } else {
      const { DtoValidationPipe } = await import(
        pathToFileURL(path.join(DIST, 'validation/validation.pipe.js')).href
      );
      const { AllExceptionsFilter } = await import(
        pathToFileURL(path.join(DIST, 'errors/all-exceptions.filter.js')).href
      );
      const { HttpAdapterHost } = await import('@nestjs/core');
      const { pino } = await import('pino');
      app.useGlobalPipes(new DtoValidationPipe());
      // Only reached on errors: turns the pipe's PlatformError into the 400 envelope.
      app.useGlobalFilters(new AllExceptionsFilter(app.get(HttpAdapterHost), pino({ level: 'silent' })));
    }
    await app.listen({ port: 0, host: '127.0.0.1' });
    return { port: app.getHttpServer().address().port, close: () => app.close() };
  }
  throw new Error(`unknown target ${target}`);
}

if (args.serve !== undefined) {
  const { port, close } = await serve(args.serve);
  let closing = false;
  const shutdown = async () => {
    if (closing) return;
    closing = true;
    await close();
    process.exit(0);
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
  if (process.send) {
    process.on('disconnect', shutdown);
    // The parent reads the server's CPU time around the measured run (CPU per request is steadier than req/s on a
    // machine shared with other work).
    process.on('message', (message) => {
      if (message === 'cpu') process.send({ cpu: process.cpuUsage() });
    });
    process.send({ ready: true, port });
  } else {
    // Started by hand (e.g. under --cpu-prof): the port goes to stdout, Ctrl-C / SIGTERM stops it cleanly.
    console.log(`${args.serve} listening on http://127.0.0.1:${port}${ROUTE}`);
  }
} else {
  await main();
}

// ---------------------------------------------------------------------------------------------------------------
// Load side (parent process).

function startServer(target) {
  const child = fork(
    fileURLToPath(import.meta.url),
    ['--serve', target, '--env', args.env, '--dist', args.dist],
    {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${target} did not start within 60 s\n${stderr}`)),
      60_000,
    );
    child.once('message', (message) => {
      clearTimeout(timer);
      resolve({ port: message.port, child });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${target} exited (${code}) before it was ready\n${stderr}`));
    });
  });
}

/** The child's process.cpuUsage() in µs (user + system). */
function serverCpu(child) {
  return new Promise((resolve) => {
    const onMessage = (message) => {
      if (message?.cpu === undefined) return;
      child.off('message', onMessage);
      resolve(message.cpu.user + message.cpu.system);
    };
    child.on('message', onMessage);
    child.send('cpu');
  });
}

function stopServer(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const force = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.disconnect();
  });
}

async function post(port, body) {
  const res = await fetch(`http://127.0.0.1:${port}${ROUTE}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json().catch(() => undefined) };
}

async function checkRoute(target, port, body) {
  const ok = await post(port, body);
  if (ok.status !== 200 || JSON.stringify(ok.json) !== JSON.stringify(expectedReply(body))) {
    throw new Error(`${target}: valid body answered ${ok.status} ${JSON.stringify(ok.json)}`);
  }
  for (const [name, bad] of Object.entries(invalidBodies(body))) {
    const res = await post(port, bad);
    if (res.status !== 400)
      throw new Error(`${target}: invalid body (${name}) answered ${res.status}, expected 400`);
  }
}

async function main() {
  if (args.help) {
    console.log(
      'usage: node bench/load.mjs [--duration S] [--warmup S] [--connections N] [--rounds N] [--targets list] [--env A=1,B=2] [--dist DIR]',
    );
    console.log(`targets: ${ALL_TARGETS.join(', ')}`);
    return;
  }
  const autocannon = (await import('autocannon')).default;
  const duration = Number(args.duration);
  const warmup = Number(args.warmup);
  const connections = Number(args.connections);
  const rounds = Number(args.rounds);
  const targets = args.targets.split(',').map((t) => t.trim());
  for (const t of targets)
    if (!ALL_TARGETS.includes(t)) throw new Error(`unknown target ${t} (known: ${ALL_TARGETS.join(', ')})`);
  for (const [name, n] of Object.entries({ duration, warmup, connections, rounds })) {
    if (!Number.isFinite(n) || n < (name === 'warmup' ? 0 : 1))
      throw new Error(`--${name} must be a number ≥ ${name === 'warmup' ? 0 : 1}`);
  }
  if (!existsSync(path.join(DIST, 'create-app.js'))) {
    console.error(`${path.join(DIST, 'create-app.js')} is missing: run \`npm run build\` first.`);
    process.exit(1);
  }

  const body = validBody();
  const payload = JSON.stringify(body);
  const require = createRequire(import.meta.url);
  const version = (pkg) => require(`${pkg}/package.json`).version;
  const load = () =>
    os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');

  console.log(
    `node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}; fastify ${version('fastify')}, ` +
      `@nestjs/core ${version('@nestjs/core')}, class-validator ${version('class-validator')}, autocannon ${version('autocannon')}`,
  );
  console.log(
    `body: ${Buffer.byteLength(payload)} bytes of JSON (5 groups × 4 UUIDs + Start/End), POST ${ROUTE}`,
  );
  console.log(
    `measured: autocannon in this process, each server alone in a child process; ${connections} connections, ` +
      `pipelining 1, ${warmup} s warm-up (discarded) then ${duration} s measured per target; ${rounds} round(s) in the ` +
      `order ${targets.join(' → ')}; every target first checked: valid body → 200 + expected JSON, ` +
      `${Object.keys(invalidBodies(body)).length} invalid bodies → 400.`,
  );
  if (args.env !== '') console.log(`service targets (a)/(b) also configured with: ${args.env}`);
  console.log(`load average before: ${load()}`);

  const results = Object.fromEntries(targets.map((t) => [t, []]));
  for (let round = 1; round <= rounds; round++) {
    for (const target of targets) {
      const server = await startServer(target);
      try {
        await checkRoute(target, server.port, body);
        const options = {
          url: `http://127.0.0.1:${server.port}${ROUTE}`,
          connections,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: payload,
        };
        if (warmup > 0) await autocannon({ ...options, duration: warmup });
        const cpuBefore = await serverCpu(server.child);
        const r = await autocannon({ ...options, duration });
        const cpu = (await serverCpu(server.child)) - cpuBefore;
        const bad = r.non2xx + r.errors + r.timeouts;
        if (bad > 0) {
          throw new Error(
            `${target}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts during the run`,
          );
        }
        const row = {
          rps: r.requests.average,
          p50: r.latency.p50,
          p99: r.latency.p99,
          cpuPerRequest: cpu / r['2xx'],
          load: os.loadavg()[0],
        };
        results[target].push(row);
        process.stderr.write(
          `round ${round} ${target.padEnd(9)} ${Math.round(row.rps)} req/s  p50 ${row.p50} ms  p99 ${row.p99} ms  ` +
            `server CPU ${Math.round(row.cpuPerRequest)} µs/req  load ${row.load.toFixed(2)}\n`,
        );
      } finally {
        await stopServer(server.child);
      }
    }
  }
  console.log(`load average after:  ${load()}`);

  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    const m = Math.floor(s.length / 2);
    return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
  };
  const summary = Object.fromEntries(
    targets.map((t) => [
      t,
      Object.fromEntries(
        ['rps', 'p50', 'p99', 'cpuPerRequest'].map((k) => [k, median(results[t].map((r) => r[k]))]),
      ),
    ]),
  );
  const base = summary.fastify;
  console.log('');
  console.log(
    `${'target'.padEnd(46)} ${'req/s (mean)'.padStart(12)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)}` +
      `  req/s vs (c)  ${'CPU µs/req'.padStart(10)}  (c)/CPU`,
  );
  for (const t of targets) {
    const s = summary[t];
    const ratio = base ? `${(s.rps / base.rps).toFixed(2)}×` : 'n/a';
    const cpuRatio = base ? `${(base.cpuPerRequest / s.cpuPerRequest).toFixed(2)}×` : 'n/a';
    console.log(
      `${LABELS[t].padEnd(46)} ${Math.round(s.rps).toLocaleString('en-US').padStart(12)} ` +
        `${String(s.p50).padStart(7)} ${String(s.p99).padStart(7)}  ${ratio.padStart(12)}  ` +
        `${Math.round(s.cpuPerRequest).toLocaleString('en-US').padStart(10)}  ${cpuRatio.padStart(7)}`,
    );
  }
  console.log(
    '"req/s vs (c)" is the throughput ratio; "(c)/CPU" the same comparison by the server\'s CPU time per request' +
      ' (user+system, over the measured run), which other load on the machine disturbs less.',
  );
  if (rounds > 1) console.log(`(medians over ${rounds} rounds; per-round figures on stderr)`);
  if (base && summary.nest) {
    const ratio = summary.nest.rps / base.rps;
    console.log(
      `goal: (a)/(c) ≥ ${GOAL} → ${ratio >= GOAL ? 'met' : 'NOT met'} (${ratio.toFixed(2)}× by req/s, ` +
        `${(base.cpuPerRequest / summary.nest.cpuPerRequest).toFixed(2)}× by CPU per request)`,
    );
  }
}
