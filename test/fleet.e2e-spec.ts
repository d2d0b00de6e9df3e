// Several instances on one database behave as one service: durable jobs that
// survive kill -9, one token refresh across instances, a rate limit shared by the fleet, revocations that reach
// every instance, retention, and a clean drain on SIGTERM. The in-process part runs two app instances (two DI
// containers, two connection pools) on one database; the process part runs the built service (dist/) as an
// operator would, with a fake SmartThings API on 127.0.0.1 that counts calls.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { pino } from 'pino';
import { ApiKeysService, CACHE_TTL_MS } from '../src/auth/api-keys.service.js';
import { SmartThingsTokens } from '../src/device-webhook/smartthings-tokens.service.js';
import { InstalledAppStore } from '../src/device-webhook/installed-app.store.js';
import { JobFailed, JobsService, RetryLater } from '../src/jobs/jobs.service.js';
import { ReplicationRetention } from '../src/replication/replication-retention.js';
import { MIGRATIONS } from '../migrations/index.js';
import { FakeSmartThings } from './device-webhook/fake-smartthings.js';
import { bodies, webhookPath, type AppSetup } from './device-webhook/smartapp-requests.js';
import { webhookTestOptions } from './device-webhook/webhook-test-options.js';
import { runCli, startServer, type RunningServer } from './support/spawn.js';
import { createTestDatabase, isPostgresRun, type TestDatabase } from './support/test-database.js';
import { ADMIN_KEY, startTestApp, type TestApp } from './support/test-app.js';

const silent = pino({ level: 'silent' });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(
  what: string,
  check: () => Promise<boolean> | boolean,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** Reads the test database directly (what an operator's SQL client would see). */
async function sql<Row>(database: TestDatabase, text: string): Promise<Row[]> {
  if (database.kind === 'sqlite') {
    const db = new BetterSqlite3(database.url.slice('sqlite:'.length), { readonly: true });
    try {
      return db.prepare(text).all() as Row[];
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    return (await client.query(text)).rows as Row[];
  } finally {
    await client.end();
  }
}

describe('jobs, on one database shared by two instances', () => {
  let database: TestDatabase;
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    database = await createTestDatabase();
    const env = { RATE_LIMIT: '0', JOB_POLL_MS: '100' };
    a = await startTestApp({ database, env });
    b = await startTestApp({ database, env });
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await database.drop();
  });

  it('keeps one row per periodic job however many instances start', async () => {
    const rows = await sql<{ kind: string; n: number | string }>(
      database,
      `SELECT kind, COUNT(*) AS n FROM jobs WHERE unique_key LIKE 'periodic:%' GROUP BY kind ORDER BY kind`,
    );
    expect(rows.map((row) => [row.kind, Number(row.n)])).toEqual([
      ['audit.retention', 1],
      ['idempotency.retention', 1],
      ['replication.retention', 1],
      ['webhook.events-retention', 1],
      ['webhook.signatures-retention', 1],
    ]);
  });

  it('runs each job once, a queue key’s jobs in order, retries with back-off and ends a failing job as dead', async () => {
    const runs: Array<{ instance: string; id: number; step: string }> = [];
    let flaky = 0;
    for (const [instance, app] of [
      ['a', a],
      ['b', b],
    ] as const) {
      app.app.get(JobsService).register<{ step: string }>({
        kind: 'test.step',
        maxAttempts: 3,
        retryDelayMs: () => 50,
        handle: async ({ id, payload }) => {
          runs.push({ instance, id, step: payload.step });
          await sleep(20);
          if (payload.step === 'flaky' && flaky++ === 0) throw new RetryLater('not yet', 50);
          if (payload.step === 'broken') throw new JobFailed('cannot work');
        },
      });
      app.app.get(JobsService).wake();
    }
    const jobs = a.app.get(JobsService);
    const steps = ['first', 'flaky', 'third', 'fourth', 'broken', 'sixth'];
    for (const step of steps) await jobs.enqueue({ kind: 'test.step', queueKey: 'q1', payload: { step } });
    await until('the queue to drain', async () => {
      const left = await sql<{ state: string }>(database, `SELECT state FROM jobs WHERE kind = 'test.step'`);
      return left.length === 1 && left[0].state === 'dead';
    });
    // One successful run per job, in enqueue order; the flaky one ran twice, the broken one is kept as dead.
    expect(runs.map((run) => run.step)).toEqual([
      'first',
      'flaky',
      'flaky',
      'third',
      'fourth',
      'broken',
      'sixth',
    ]);
    const [dead] = await jobs.list({ state: 'dead', kind: 'test.step', limit: 10 });
    expect(dead.lastError).toBe('cannot work');
    expect(await jobs.retry(dead.id)).toBe(true);
    await until('the retried job to run', () => runs.filter((run) => run.step === 'broken').length === 2);
    // …and to be dead again (its run is recorded before its state is written).
    await until('the retried job to be dead again', async () => {
      const left = await sql<{ state: string }>(database, `SELECT state FROM jobs WHERE kind = 'test.step'`);
      return left.length === 1 && left[0].state === 'dead';
    });
  });

  it('shows jobs per kind and state on /metrics', async () => {
    const response = await a.request({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(response.body).toMatch(/^platform_jobs\{kind="smartthings\.calls",state="dead"\} \d+$/m);
    expect(response.body).toMatch(/^platform_jobs\{kind="test\.step",state="dead"\} 1$/m);
  });

  it('deletes change sets and reports older than the retention, keeping each collection’s newest change set', async () => {
    const old = new Date(Date.now() - 40 * 86_400_000).toISOString();
    const recent = new Date().toISOString();
    for (const [changeSet, createdAt] of [
      [1, old],
      [2, old],
      [3, recent],
    ] as const) {
      const response = await a.post('/api/v1/Replication/Agent/changeSetCreated', {
        Collection: 'retained',
        Node: 'origin',
        ChangeSet: changeSet,
        CreatedAt: createdAt,
      });
      expect(response.statusCode).toBe(200);
    }
    await a.post('/api/v1/Replication/Agent/changeSetCreated', {
      Collection: 'quiet',
      Node: 'origin',
      ChangeSet: 7,
      CreatedAt: old,
    });
    const deleted = await a.app.get(ReplicationRetention).prune(new Date(Date.now() - 30 * 86_400_000));
    expect(deleted).toBe(2);
    const left = await sql<{ collection: string; number: number | string }>(
      database,
      `SELECT collection, number FROM replication_change_sets ORDER BY collection, number`,
    );
    expect(left.map((row) => `${row.collection}:${Number(row.number)}`)).toEqual(['quiet:7', 'retained:3']);
  });
});

describe('the rate limit, shared by two instances (RATE_LIMIT_STORE=database)', () => {
  let database: TestDatabase;
  const apps: TestApp[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    for (let i = 0; i < 2; i++) {
      apps.push(await startTestApp({ database, env: { RATE_LIMIT: '6', RATE_LIMIT_STORE: 'database' } }));
    }
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await database.drop();
  });

  it('allows RATE_LIMIT requests per key across the fleet, not per instance', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      const response = await apps[i % 2].request({
        method: 'POST',
        url: '/api/v1/migration/getMigrationRuns',
        headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
        payload: '{}',
      });
      statuses.push(response.statusCode);
    }
    expect(statuses.filter((status) => status === 200)).toHaveLength(6);
    expect(statuses.slice(6)).toEqual([429, 429, 429, 429]);
  });

  it('charges made-up keys to the caller’s address, so rotating them does not escape the limit', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const response = await apps[i % 2].request({
        method: 'POST',
        url: '/api/v1/migration/getMigrationRuns',
        remoteAddress: '203.0.113.9',
        headers: { authorization: `Bearer made-up-${i}`, 'content-type': 'application/json' },
        payload: '{}',
      });
      statuses.push(response.statusCode);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 401, 429, 429]);
  });
});

const redisDescribe = process.env.CI_NO_REDIS ? describe.skip : describe;
redisDescribe('the rate limit in Redis (RATE_LIMIT_STORE=redis://127.0.0.1:6379)', () => {
  let database: TestDatabase;
  const apps: TestApp[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    for (let i = 0; i < 2; i++) {
      apps.push(
        await startTestApp({
          database,
          env: { RATE_LIMIT: '4', RATE_LIMIT_STORE: 'redis://127.0.0.1:6379' },
        }),
      );
    }
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await database.drop();
  });

  it('holds one budget for both instances', async () => {
    // A fresh key, so counts left in Redis by an earlier run cannot matter.
    const { key } = await apps[0].app.get(ApiKeysService).create('redis-test', ['migrations']);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const response = await apps[i % 2].request({
        method: 'POST',
        url: '/api/v1/migration/getMigrationRuns',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        payload: '{}',
      });
      statuses.push(response.statusCode);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
  });
});

const postgresOnly = isPostgresRun() ? describe : describe.skip;
if (!isPostgresRun()) {
  process.stdout.write(
    'NOTICE fleet.e2e-spec: the cross-instance token-refresh and revocation tests, and the three-process fleet, ' +
      'need PostgreSQL (DATABASE_URL=postgres://…); skipped on this SQLite-only run.\n',
  );
}

postgresOnly('two instances on PostgreSQL', () => {
  let database: TestDatabase;
  const fake = new FakeSmartThings();
  const apps: TestApp[] = [];

  beforeAll(async () => {
    await fake.start();
    database = await createTestDatabase();
    for (let i = 0; i < 2; i++) {
      apps.push(
        await startTestApp({
          database,
          env: {
            SMARTTHINGS_API_URL: fake.url,
            SMARTTHINGS_CLIENT_ID: fake.clientId,
            SMARTTHINGS_CLIENT_SECRET: fake.clientSecret,
            SMARTTHINGS_DISABLE_SIGNATURE_VERIFICATION_UNSAFE: 'true',
          },
          extraModules: [webhookTestOptions()],
        }),
      );
    }
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await database.drop();
    await fake.stop();
  });

  it('sends one refresh request when both race to refresh the same installed app', async () => {
    const setup: AppSetup = { installedAppId: randomUUID(), lights: [], contactSensors: [] };
    const install = await apps[0].request({
      method: 'POST',
      url: webhookPath('fleet'),
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(bodies.install(setup, 'stale-token', 'refresh-0')),
    });
    expect(install.statusCode).toBe(200);
    fake.grants.set('refresh-0', { accessToken: 'fresh-token', refreshToken: 'refresh-1' });
    fake.tokenDelayMs = 300;
    const ref = { domain: 'fleet', installedAppId: setup.installedAppId };
    const refreshed = await Promise.all(
      apps.map((app) =>
        app.app.get(SmartThingsTokens).refresh(ref, 'stale-token', new AbortController().signal, silent),
      ),
    );
    expect(refreshed).toEqual(['fresh-token', 'fresh-token']);
    expect(fake.calls.filter((call) => call.path === '/oauth/token')).toHaveLength(1);
    const stored = await apps[1].app.get(InstalledAppStore).tokensOf(ref, silent);
    expect(stored?.refreshToken).toBe('refresh-1');
  });

  it('refuses a revoked key on every instance long before its cached entry would expire', async () => {
    const { key, record } = await apps[0].app.get(ApiKeysService).create('revoke-me', ['migrations']);
    const call = (app: TestApp) =>
      app.request({
        method: 'POST',
        url: '/api/v1/migration/getMigrationRuns',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        payload: '{}',
      });
    // Both instances have the key cached as valid.
    expect((await Promise.all(apps.map(call))).map((response) => response.statusCode)).toEqual([200, 200]);
    await apps[0].app.get(ApiKeysService).revoke(record.id);
    // The revocation reaches the other instance itself: waiting for the cache entry to expire would take longer.
    await until(
      'both instances to refuse the key',
      async () => (await Promise.all(apps.map(call))).every((response) => response.statusCode === 401),
      CACHE_TTL_MS / 2,
    );
  });
});

describe('processes: jobs survive kill -9', () => {
  const fake = new FakeSmartThings();
  let database: TestDatabase;
  let servers: RunningServer[] = [];

  const env = (): Record<string, string> => ({
    DATA_DIR: database.dataDir,
    DATABASE_URL: database.url,
    API_KEYS: ADMIN_KEY,
    RATE_LIMIT: '0',
    SMARTTHINGS_API_URL: fake.url,
    SMARTTHINGS_DISABLE_SIGNATURE_VERIFICATION_UNSAFE: 'true',
    JOB_LEASE_MS: '2000',
    JOB_POLL_MS: '200',
  });
  const deliver = (server: RunningServer, body: unknown) =>
    fetch(`http://127.0.0.1:${server.port}${webhookPath('fleet')}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const lampOn = (lamp: string) =>
    fake.calls.filter((call) => call.path === `/devices/${lamp}/commands` && call.status === 200);

  beforeAll(async () => {
    await fake.start();
  });
  afterEach(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    servers = [];
    await database.drop();
  });
  afterAll(async () => {
    await fake.stop();
  });

  /** Waits until a job of the app is mid-attempt (leased, its call pending at the fake), and answers its holder. */
  async function holderMidAttempt(lamp: string): Promise<number> {
    let pid = 0;
    await until('a job attempt in flight', async () => {
      const pending = fake.calls.some(
        (call) => call.path === `/devices/${lamp}/commands` && call.status === undefined,
      );
      if (!pending) return false;
      const rows = await sql<{ locked_by: string | null }>(
        database,
        `SELECT locked_by FROM jobs WHERE kind = 'smartthings.calls' AND state = 'running'`,
      );
      pid = Number(rows[0]?.locked_by?.split(':')[1] ?? 0);
      return pid > 0;
    });
    return pid;
  }

  it('a follow-up whose instance is killed mid-retry is completed exactly once when the API recovers', async () => {
    database = await createTestDatabase();
    const lamp = `lamp-${randomUUID()}`;
    const setup: AppSetup = { installedAppId: randomUUID(), lights: [lamp] };
    const postgres = database.kind === 'postgres';
    // On PostgreSQL two instances share the work; on SQLite the one process is restarted on its file.
    servers = postgres
      ? await Promise.all([startServer(env()), startServer(env())])
      : [await startServer(env())];
    expect((await deliver(servers[0], bodies.install(setup, 'token-1', 'refresh-1'))).status).toBe(200);
    const outage = {
      match: (call: { path: string }) => call.path === `/devices/${lamp}/commands`,
      status: 503,
      delayMs: 1_500,
    };
    fake.rules.push(outage);
    expect((await deliver(servers[0], bodies.contact(setup, 'token-1', 'open'))).status).toBe(200);

    const pid = await holderMidAttempt(lamp);
    const holder = servers.find((server) => server.child.pid === pid)!;
    expect(holder).toBeDefined();
    holder.child.kill('SIGKILL');
    await new Promise((resolve) => holder.child.once('close', resolve));
    servers = servers.filter((server) => server !== holder);
    fake.rules.splice(fake.rules.indexOf(outage), 1);
    if (!postgres) servers.push(await startServer(env()));

    await until('the switch command to succeed', () => lampOn(lamp).length > 0, 30_000);
    await sleep(2_500);
    expect(lampOn(lamp)).toHaveLength(1);
    await until(
      'the job to be gone',
      async () => (await sql(database, `SELECT id FROM jobs WHERE kind = 'smartthings.calls'`)).length === 0,
    );
  });
});

postgresOnly('processes: three instances on one PostgreSQL database', () => {
  /** A key with a budget of its own (API_KEYS keys are counted apart). */
  const SECOND_KEY = 'second-admin-key-0123456789';
  let database: TestDatabase;
  let servers: RunningServer[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    const env = {
      DATA_DIR: database.dataDir,
      DATABASE_URL: database.url,
      API_KEYS: `${ADMIN_KEY},${SECOND_KEY}`,
      RATE_LIMIT: '9',
    };
    servers = await Promise.all([startServer(env), startServer(env), startServer(env)]);
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    await database.drop();
  });

  const call = (server: RunningServer, key: string) =>
    fetch(`http://127.0.0.1:${server.port}/api/v1/migration/getMigrationRuns`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: '{}',
    });

  it('applied and recorded each migration once although all three started at the same moment', async () => {
    const rows = await sql<{ migration: string; n: string }>(
      database,
      `SELECT migration, COUNT(*) AS n FROM migration_runs WHERE status = 'Succeeded' GROUP BY migration`,
    );
    expect(rows.map((row) => row.migration).sort()).toEqual(MIGRATIONS.map((m) => m.name).sort());
    expect(rows.every((row) => Number(row.n) === 1)).toBe(true);
  });

  it('holds RATE_LIMIT for a key across the three', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 15; i++) statuses.push((await call(servers[i % 3], ADMIN_KEY)).status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(9);
    expect(statuses.filter((status) => status === 429)).toHaveLength(6);
  });

  it('refuses a key revoked through the CLI on all three long before its cached entry would expire', async () => {
    const cliEnv = { DATA_DIR: database.dataDir, DATABASE_URL: database.url };
    const created = await runCli(['api-key:create', '--name', 'fleet', '--scopes', 'migrations'], cliEnv);
    const key = /^(pk_[\w-]{43})$/m.exec(created.stdout)![1];
    const id = /Created API key ([0-9a-f-]{36})/.exec(created.stdout)![1];
    expect((await Promise.all(servers.map((server) => call(server, key)))).map((r) => r.status)).toEqual([
      200, 200, 200,
    ]);
    const revoked = await runCli(['api-key:revoke', id], cliEnv);
    expect(revoked.code).toBe(0);
    await until(
      'all three to refuse the key',
      async () =>
        (await Promise.all(servers.map((server) => call(server, key)))).every((r) => r.status === 401),
      CACHE_TTL_MS / 2,
    );
  });

  it('drains on SIGTERM: readiness 503 at once, a request in flight finishes, exit code 0', async () => {
    const server = servers.pop()!;
    // A request in flight: headers and half of its body sent before the signal, the rest after.
    const body = JSON.stringify({ Context: { Domain: 'drain' }, MigrationId: null });
    const answer = new Promise<number>((resolve, reject) => {
      const request = http.request(
        {
          host: '127.0.0.1',
          port: server.port,
          method: 'POST',
          path: '/api/v1/migration/getMigrationRuns',
          headers: {
            authorization: `Bearer ${SECOND_KEY}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          },
        },
        (response) => {
          response.resume();
          response.on('end', () => resolve(response.statusCode ?? 0));
        },
      );
      request.on('error', reject);
      request.write(body.slice(0, 10));
      setTimeout(() => request.end(body.slice(10)), 500);
    });
    await sleep(100);
    const exited = new Promise<number | null>((resolve) => server.child.once('close', resolve));
    server.child.kill('SIGTERM');
    await sleep(50);
    const ready = await fetch(`http://127.0.0.1:${server.port}/health/ready`).catch(() => undefined);
    // Answered 503 while draining, or refused because the listener had already closed.
    if (ready !== undefined) expect(ready.status).toBe(503);
    expect(await answer).toBe(200);
    expect(await exited).toBe(0);
  });
});
