// Helpers for the fault suite (test/faults): HTTP writers that record every answer, a tmpfs to fill, a private
// PostgreSQL cluster to stop and start. Everything here only talks to loopback addresses and cleans up what it made.
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort, type RunningServer } from './spawn.js';

export const API_KEY = 'fault-suite-key-0123456789abcdef';
export const AUTH = { Authorization: `Bearer ${API_KEY}` };
const REQUEST_TIMEOUT_MS = 10_000;

/** Prints why a fault test does not run (jest shows console output; the notice must not go unseen). */
export function skipNotice(file: string, reason: string): void {
  process.stdout.write(`\n[fault suite] SKIPPED ${file}: ${reason}\n`);
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every `intervalMs` until it returns true or `timeoutMs` passed; returns the last result. */
export async function waitFor(
  check: () => Promise<boolean>,
  timeoutMs: number,
  intervalMs = 100,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await sleep(intervalMs);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// HTTP

export interface Answer {
  kind: 'schedule' | 'scim';
  /** 0 when no HTTP answer came (connection refused or reset, time-out). */
  status: number;
  retryAfter: string | null;
  contentType: string | null;
  body: unknown;
  /** The created resource's id on a 2xx. */
  id: string | null;
  /** `Idempotent-Replayed: true`: the stored answer of an earlier request under the same Idempotency-Key. */
  replayed: boolean;
  /** Schedules: the items sent, to compare with what reads back. */
  sentItems?: ScheduleItemBody[];
  error?: string;
}

export interface ScheduleItemBody {
  Name: string;
  Start: string;
  End: string;
  StartTimeZone: string;
  Recurrence: null;
}

let counter = 0;
const unique = (): string => `${process.pid}-${Date.now().toString(36)}-${(counter++).toString(36)}`;

/** A schedule body of `items` items whose names are `nameLength` characters long (at most 500). */
export function scheduleItems(items = 1, nameLength = 20): ScheduleItemBody[] {
  const tag = unique();
  return Array.from({ length: items }, (_, index) => ({
    Name: `${tag}-${index}-`.padEnd(nameLength, 'x'),
    Start: '2026-01-05T09:00:00Z',
    End: '2026-01-05T10:00:00Z',
    StartTimeZone: 'UTC',
    Recurrence: null,
  }));
}

async function send(
  kind: Answer['kind'],
  url: string,
  init: RequestInit,
  idOf: (body: unknown) => string | null,
): Promise<Answer> {
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON; kept as text
    }
    return {
      kind,
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      contentType: response.headers.get('content-type'),
      body,
      id: response.status >= 200 && response.status < 300 ? idOf(body) : null,
      replayed: response.headers.get('idempotent-replayed') === 'true',
    };
  } catch (error) {
    return {
      kind,
      status: 0,
      retryAfter: null,
      contentType: null,
      body: null,
      id: null,
      replayed: false,
      error: String(error),
    };
  }
}

/** `headers`: e.g. an Idempotency-Key. */
export async function createSchedule(
  base: string,
  items: ScheduleItemBody[] = scheduleItems(),
  headers: Record<string, string> = {},
): Promise<Answer> {
  const answer = await send(
    'schedule',
    `${base}/api/v1/Schedule`,
    {
      method: 'POST',
      headers: { ...AUTH, 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify({ ScheduleItems: items }),
    },
    (body) => (body as { Result?: { Id?: string } } | null)?.Result?.Id ?? null,
  );
  answer.sentItems = items;
  return answer;
}

/** `headers`: e.g. an Idempotency-Key. */
export function createScimUser(
  base: string,
  userName = `u-${unique()}`,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return send(
    'scim',
    `${base}/api/v1/scim/Users`,
    {
      method: 'POST',
      headers: { ...AUTH, 'Content-Type': 'application/scim+json', ...headers },
      body: JSON.stringify({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName }),
    },
    (body) => (body as { id?: string } | null)?.id ?? null,
  );
}

export async function readyStatus(base: string): Promise<number> {
  try {
    const response = await fetch(`${base}/health/ready`, { signal: AbortSignal.timeout(5_000) });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}

/** `/metrics` (admin key) as name{labels} → value. */
export async function metrics(base: string): Promise<Map<string, number>> {
  const response = await fetch(`${base}/metrics`, { headers: AUTH, signal: AbortSignal.timeout(5_000) });
  const values = new Map<string, number>();
  for (const line of (await response.text()).split('\n')) {
    const match = /^(platform_database_\S+)\s+(\S+)$/.exec(line);
    if (match) values.set(match[1], Number(match[2]));
  }
  return values;
}

/** Reads every acknowledged write back through the service: schedules whole (every item as sent), users by id. */
export async function readBackProblems(
  base: string,
  acknowledged: Answer[],
  concurrency = 8,
  auth: Record<string, string> = AUTH,
): Promise<string[]> {
  const problems: string[] = [];
  const queue = [...acknowledged];
  const worker = async (): Promise<void> => {
    for (let answer = queue.shift(); answer; answer = queue.shift()) {
      const url =
        answer.kind === 'schedule'
          ? `${base}/api/v1/Schedule/${answer.id}`
          : `${base}/api/v1/scim/Users/${answer.id}`;
      const response = await fetch(url, { headers: auth, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
      const body = (await response.json()) as Record<string, unknown>;
      if (response.status !== 200) {
        problems.push(`${answer.kind} ${answer.id}: ${response.status}`);
        continue;
      }
      if (answer.kind === 'scim') {
        const sent = answer.body as { userName: string };
        if (body.id !== answer.id || body.userName !== sent.userName)
          problems.push(`user ${answer.id} differs`);
        continue;
      }
      const result = body.Result as { Id: string; ScheduleItems: Array<Record<string, unknown>> } | undefined;
      const got = (result?.ScheduleItems ?? []).map((item) => ({
        Name: item.Name,
        Start: item.Start,
        End: item.End,
        StartTimeZone: item.StartTimeZone,
        Recurrence: item.Recurrence,
      }));
      if (result?.Id !== answer.id || JSON.stringify(got) !== JSON.stringify(answer.sentItems)) {
        problems.push(`schedule ${answer.id} is not whole: ${got.length}/${answer.sentItems?.length} items`);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return problems;
}

/**
 * Writers that each create a resource, record the answer, pause `pauseMs` and go again until stop() (or
 * `maxPerWriter` answers each). Every answer is kept, in order.
 */
export class WriterLoop {
  readonly answers: Answer[] = [];
  private running = true;
  private readonly done: Promise<void>;

  constructor(
    writers: Array<() => Promise<Answer>>,
    pauseMs = 0,
    private readonly maxPerWriter = 5_000,
  ) {
    this.done = Promise.all(writers.map((write) => this.loop(write, pauseMs))).then(() => undefined);
    WriterLoop.started.add(this);
  }

  private static readonly started = new Set<WriterLoop>();

  /** For afterAll: stops every loop still running (a test that failed midway left it), resolves once all ended. */
  static stopAll(): Promise<void> {
    const loops = [...WriterLoop.started];
    WriterLoop.started.clear();
    return Promise.all(loops.map((loop) => loop.stop())).then(() => undefined);
  }

  private async loop(write: () => Promise<Answer>, pauseMs: number): Promise<void> {
    for (let n = 0; this.running && n < this.maxPerWriter; n++) {
      this.answers.push(await write());
      if (pauseMs > 0) await sleep(pauseMs);
    }
  }

  /** Stops the writers and waits for the requests in flight to be answered (bounded by the request time-out). */
  async stop(): Promise<Answer[]> {
    this.running = false;
    await this.done;
    return this.answers;
  }

  get acknowledged(): Answer[] {
    return this.answers.filter((answer) => answer.status >= 200 && answer.status < 300);
  }
}

/** `schedules` schedule writers (`items` items of 40-character names each) and `scim` SCIM user writers. */
export function writers(base: string, counts: { schedules: number; scim: number; items?: number }) {
  return [
    ...Array.from(
      { length: counts.schedules },
      () => () => createSchedule(base, scheduleItems(counts.items ?? 1, 40)),
    ),
    ...Array.from({ length: counts.scim }, () => () => createScimUser(base)),
  ];
}

/** Statuses seen, e.g. { 201: 140, 503: 12 }. */
export function statusCounts(answers: Answer[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const answer of answers) counts[answer.status] = (counts[answer.status] ?? 0) + 1;
  return counts;
}

/** What is wrong with a 503/507 database answer (empty when it is as documented). */
export function failureAnswerProblems(answer: Answer, status: 503 | 507): string[] {
  const problems: string[] = [];
  const where = `${answer.kind} ${answer.status}`;
  if (answer.status !== status) return [`${where}: expected ${status}`];
  const retryAfter = status === 507 ? '30' : '5';
  if (answer.retryAfter !== retryAfter) problems.push(`${where}: Retry-After ${answer.retryAfter}`);
  const body = answer.body as Record<string, unknown> | null;
  if (answer.kind === 'scim') {
    const schemas = body?.schemas;
    if (!Array.isArray(schemas) || schemas[0] !== 'urn:ietf:params:scim:api:messages:2.0:Error')
      problems.push(`${where}: not the SCIM error schema: ${JSON.stringify(body)}`);
    if (body?.status !== String(status)) problems.push(`${where}: SCIM status ${String(body?.status)}`);
    if (typeof body?.detail !== 'string') problems.push(`${where}: SCIM detail missing`);
  } else {
    const code = status === 507 ? 'StorageFull' : 'DatabaseUnavailable';
    if (body?.Succeeded !== false || body?.Code !== code || typeof body?.Message !== 'string')
      problems.push(`${where}: body ${JSON.stringify(body)}`);
    if (typeof body?.CorrelationId !== 'string') problems.push(`${where}: no CorrelationId`);
  }
  return problems;
}

/** SIGKILLs a spawned service and waits until it is gone. */
export async function kill9(server: RunningServer): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  let timer: NodeJS.Timeout | undefined;
  const gone = new Promise<void>((resolve) => {
    server.child.once('exit', () => resolve());
    timer = setTimeout(resolve, 5_000);
  });
  server.child.kill('SIGKILL');
  await gone;
  clearTimeout(timer);
}

// ---------------------------------------------------------------------------------------------------------------
// tmpfs

/** Whether this process may mount a tmpfs (root, and not refused by the container). Probes once, synchronously. */
export function tmpfsRefusal(): string | null {
  if (process.platform !== 'linux') return 'not Linux';
  if (process.getuid?.() !== 0) return 'not root (mount needs root)';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-api-tmpfs-probe-'));
  try {
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], {
      timeout: 10_000,
      encoding: 'utf8',
    });
    if (mounted.status !== 0) return `mount refused: ${(mounted.stderr || String(mounted.error)).trim()}`;
    spawnSync('umount', [dir], { timeout: 10_000 });
    return null;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Writes to `file` until the storage refuses (ENOSPC): the storage is then full for everyone, tiny writes too. */
export function fillUp(file: string): void {
  const fd = fs.openSync(file, 'w');
  const chunk = Buffer.alloc(4096, 1);
  try {
    for (let n = 0; n < 100_000; n++) fs.writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    fs.closeSync(fd);
  }
}

export function mountTmpfs(sizeMiB: number): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-api-tmpfs-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m,mode=0700`, 'tmpfs', dir], {
    timeout: 10_000,
  });
  return dir;
}

/** Unmounts (lazily if still busy) and removes the mount point; safe to call twice. */
export function unmountTmpfs(dir: string): void {
  if (!fs.existsSync(dir)) return;
  const mounted = fs.readFileSync('/proc/mounts', 'utf8').includes(` ${dir} `);
  if (mounted && spawnSync('umount', [dir], { timeout: 10_000 }).status !== 0) {
    spawnSync('umount', ['-l', dir], { timeout: 10_000 });
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

// ---------------------------------------------------------------------------------------------------------------
// A private PostgreSQL cluster (initdb/pg_ctl refuse root: they run as the postgres user)

export interface PrivateCluster {
  dir: string;
  port: number;
  url: string;
  start(): Promise<void>;
  stop(mode: 'fast' | 'immediate'): Promise<void>;
  /** Stops (immediate) and deletes the cluster; safe to call twice. */
  destroy(): Promise<void>;
  log(): string;
}

const execFileAsync = promisify(execFile);

/** Runs a PostgreSQL tool as the postgres user when root (initdb and pg_ctl refuse root). */
async function asPostgres(args: string[], timeoutMs = 60_000): Promise<void> {
  const root = process.getuid?.() === 0;
  try {
    await execFileAsync(
      root ? 'runuser' : args[0],
      root ? ['-u', 'postgres', '--', ...args] : args.slice(1),
      {
        timeout: timeoutMs,
      },
    );
  } catch (error) {
    const failure = error as { stderr?: string; message: string };
    throw new Error(`${args.join(' ')} failed: ${failure.stderr || failure.message}`);
  }
}

/** Why a private cluster cannot be made here (null when it can). */
export function privateClusterRefusal(): string | null {
  for (const tool of ['initdb', 'pg_ctl']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`], { timeout: 5_000 }).status !== 0)
      return `${tool} not on PATH`;
  }
  if (process.getuid?.() === 0 && spawnSync('id', ['-u', 'postgres'], { timeout: 5_000 }).status !== 0) {
    return 'no postgres user to run initdb as';
  }
  return null;
}

/**
 * initdb + pg_ctl start of a cluster of its own in a temp folder, on a free loopback port (never the shared
 * server). The caller must destroy() it.
 */
export async function startPrivateCluster(): Promise<PrivateCluster> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-api-pg-'));
  const port = await freePort();
  const data = path.join(dir, 'data');
  let running = false;
  const cluster: PrivateCluster = {
    dir,
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start: async () => {
      running = true;
      await asPostgres([
        'pg_ctl',
        '-D',
        data,
        '-o',
        `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`,
        '-l',
        path.join(dir, 'log'),
        '-w',
        '-t',
        '30',
        'start',
      ]);
    },
    stop: async (mode) => {
      await asPostgres(['pg_ctl', '-D', data, '-m', mode, '-w', '-t', '30', 'stop']);
      running = false;
    },
    destroy: async () => {
      if (running && fs.existsSync(path.join(data, 'postmaster.pid'))) {
        await cluster.stop('immediate').catch(() => undefined);
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
    log: () => {
      try {
        return fs.readFileSync(path.join(dir, 'log'), 'utf8');
      } catch {
        return '';
      }
    },
  };
  try {
    if (process.getuid?.() === 0) execFileSync('chown', ['postgres:postgres', dir], { timeout: 5_000 });
    await asPostgres([
      'initdb',
      '-D',
      data,
      '-A',
      'trust',
      '-U',
      'postgres',
      '--no-sync',
      '--no-instructions',
    ]);
    await cluster.start();
  } catch (error) {
    await cluster.destroy();
    throw error;
  }
  return cluster;
}

/** A pg client that survives the server going away (an 'error' listener) and answers one query. */
export async function queryCluster<T extends pg.QueryResultRow>(
  url: string,
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}
