// The drain a load balancer can follow, seen from clients of the built service: on SIGTERM readiness is
// 503 at once while requests are still answered for SHUTDOWN_DELAY_MS; then new connections are refused, a request
// on a connection kept alive from before is answered with `Connection: close`, the request in flight finishes, and
// the process exits 0. Events are checked in order, not by their timing.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';
import { startServer, type RunningServer } from './support/spawn.js';

const KEY = 'drain-test-key-0123456789';
let database: TestDatabase;
let server: RunningServer;

beforeAll(async () => {
  database = await createTestDatabase();
  server = await startServer({
    DATA_DIR: database.dataDir,
    DATABASE_URL: database.url,
    API_KEYS: KEY,
    SHUTDOWN_DELAY_MS: '1500',
  });
});

afterAll(async () => {
  if (server.child.exitCode === null) server.child.kill('SIGKILL');
  await database.drop();
});

interface Answer {
  status?: number;
  connection?: string;
  body?: string;
  error?: string;
}

function send(
  agent: http.Agent | false,
  path: string,
  body?: unknown,
  target: RunningServer = server,
  contentType = 'application/json',
): Promise<Answer> {
  return new Promise((resolve) => {
    const request = http.request(
      {
        host: '127.0.0.1',
        port: target.port,
        path,
        method: body === undefined ? 'GET' : 'POST',
        agent,
        headers: { authorization: `Bearer ${KEY}`, 'content-type': contentType },
      },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () =>
          resolve({ status: response.statusCode, connection: response.headers.connection, body: text }),
        );
      },
    );
    request.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    request.end(body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body));
  });
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('SIGTERM behind a load balancer', () => {
  it('turns unready at once, serves through the delay, then closes politely and exits 0', async () => {
    // A change set that one registered node never applies: changeSetState waits its WaitSeconds out.
    const at = new Date().toISOString();
    expect(
      (
        await send(false, '/api/v1/Replication/Agent/changeSetCreated', {
          Collection: 'drain',
          Node: 'origin-1',
          ChangeSet: 1,
          CreatedAt: at,
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await send(false, '/api/v1/Replication/Agent/heartbeat', {
          Server: 'far',
          Node: 'far-1',
          At: at,
          AgentVersion: '1.0.0',
        })
      ).status,
    ).toBe(200);

    const kept = new http.Agent({ keepAlive: true, maxSockets: 1 });
    expect(await send(kept, '/health/live')).toMatchObject({ status: 200, connection: 'keep-alive' });
    const slow = send(false, '/api/v1/Replication/Diagnostics/changeSetState', {
      Collection: 'drain',
      Node: 'origin-1',
      Increment: 0,
      WaitSeconds: 8,
    });
    await pause(300); // the slow request is in flight
    const exited = new Promise<number | null>((resolve) => server.child.once('exit', resolve));
    server.child.kill('SIGTERM');
    await pause(100);

    // Readiness says go away; everything else is still served, on new connections too.
    expect((await send(false, '/health/ready')).status).toBe(503);
    expect((await send(false, '/health/live')).status).toBe(200);
    expect((await send(false, '/api/v1/migration/getMigrationRuns', {})).status).toBe(200);

    // After the delay the listener closes: new connections are refused.
    let refused: Answer | undefined;
    for (let attempt = 0; attempt < 100 && refused === undefined; attempt += 1) {
      const answer = await send(false, '/health/live');
      if (answer.error !== undefined) refused = answer;
      else expect(answer.status).toBe(200);
      await pause(50);
    }
    expect(refused?.error).toBe('ECONNREFUSED');

    // A connection kept alive from before is still answered — and told to close.
    expect(await send(kept, '/health/live')).toMatchObject({ status: 200, connection: 'close' });

    // The request in flight finishes with its real answer; then the process exits cleanly.
    const answer = await slow;
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body ?? '{}')).toMatchObject({ Succeeded: true, FullyReplicated: false });
    expect(await exited).toBe(0);
    expect(server.output()).not.toContain('shutdown failed');
    kept.destroy();
  });
});

/** `events` one-off VEVENTs: an import that takes seconds of work in one transaction. */
function calendar(events: number): string {
  const lines = ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//test//drain//EN'];
  for (let i = 0; i < events; i++) {
    const day = String(1 + (i % 28)).padStart(2, '0');
    lines.push(
      'BEGIN:VEVENT',
      `UID:drain-${i}@test.example`,
      'DTSTAMP:20260101T000000Z',
      `DTSTART:202602${day}T090000Z`,
      `DTEND:202602${day}T100000Z`,
      `SUMMARY:Drain ${i}`,
      'END:VEVENT',
    );
  }
  lines.push('END:VCALENDAR', '');
  return lines.join('\r\n');
}

const WRITERS = 8;
const IMPORT_EVENTS = 5_000;
const RESETS = new Set(['ECONNRESET', 'EPIPE']);

describe('the drain with keep-alive writers and a long import in flight', () => {
  let drained: RunningServer | undefined;
  let drainedDatabase: TestDatabase | undefined;

  afterAll(async () => {
    if (drained !== undefined && drained.child.exitCode === null) drained.child.kill('SIGKILL');
    await drainedDatabase?.drop();
  });

  it('answers everything in flight with Connection: close and resets no reused socket', async () => {
    drainedDatabase = await createTestDatabase();
    drained = await startServer({
      DATA_DIR: drainedDatabase.dataDir,
      DATABASE_URL: drainedDatabase.url,
      API_KEYS: KEY,
      RATE_LIMIT: '0',
      LOG_LEVEL: 'info',
      SHUTDOWN_DELAY_MS: '200',
    });
    const target = drained;
    const item = { Name: 'w', Start: '2026-03-01T09:00:00Z', End: '2026-03-01T10:00:00Z' };
    const agents = Array.from(
      { length: WRITERS + 1 },
      () => new http.Agent({ keepAlive: true, maxSockets: 1 }),
    );
    const write = (agent: http.Agent) => send(agent, '/api/v1/Schedule', { ScheduleItems: [item] }, target);
    // Each writer's socket is open and kept alive before anything starts.
    for (const agent of agents.slice(0, WRITERS)) {
      expect(await write(agent)).toMatchObject({ status: 201, connection: 'keep-alive' });
    }

    let importAnswered = false;
    const importing = send(
      agents[WRITERS],
      '/api/v1/Schedule/import',
      calendar(IMPORT_EVENTS),
      target,
      'text/calendar',
    ).then((answer) => {
      importAnswered = true;
      return answer;
    });
    // Each writer writes on its kept-alive socket until an answer tells it to close; on a new connection (after a
    // `close`) the next request is refused, which ends the writer.
    const writersDone = agents.slice(0, WRITERS).map(async (agent) => {
      const answers: Answer[] = [];
      for (;;) {
        const answer = await write(agent);
        answers.push(answer);
        if (answer.error !== undefined || answer.connection === 'close') return answers;
      }
    });
    await pause(300); // the import is in flight (its transaction holds the writers on both engines)
    const exited = new Promise<number | null>((resolve) => target.child.once('exit', resolve));
    target.child.kill('SIGTERM');
    for (let wait = 0; wait < 200 && !target.output().includes('closing the listener'); wait++)
      await pause(25);
    expect(target.output()).toContain('closing the listener');
    // The listener closed while the import was still running: its answer comes after.
    expect(importAnswered).toBe(false);

    const imported = await importing;
    expect(imported).toMatchObject({ status: 201, connection: 'close' });
    const written = (await Promise.all(writersDone)).flat();
    const lastOfEach = written.filter((answer) => answer.connection === 'close');
    expect(lastOfEach.length).toBe(WRITERS);
    expect(lastOfEach.every((answer) => answer.status === 201)).toBe(true);

    // Reuse every agent at once: each opens a new connection (its socket was closed after the `close` answer),
    // which the closed listener refuses — never a reset of a socket the server dropped under the request.
    const reused = await Promise.all(agents.map((agent) => write(agent)));
    const errors = [...written, ...reused]
      .map((answer) => answer.error)
      .filter((error) => error !== undefined);
    expect(errors.filter((error) => RESETS.has(error))).toEqual([]);
    expect(reused.every((answer) => answer.error === 'ECONNREFUSED' || answer.status === 201)).toBe(true);
    expect(await exited).toBe(0);
    expect(target.output()).toContain('shut down cleanly');
    for (const agent of agents) agent.destroy();
  }, 60_000);
});

describe('a drain cut off by SHUTDOWN_TIMEOUT_MS', () => {
  let cut: RunningServer | undefined;
  let cutDatabase: TestDatabase | undefined;

  afterAll(async () => {
    if (cut !== undefined && cut.child.exitCode === null) cut.child.kill('SIGKILL');
    await cutDatabase?.drop();
  });

  it('logs how many requests it abandoned and on which routes, not "shut down cleanly"', async () => {
    cutDatabase = await createTestDatabase();
    cut = await startServer({
      DATA_DIR: cutDatabase.dataDir,
      DATABASE_URL: cutDatabase.url,
      API_KEYS: KEY,
      SHUTDOWN_TIMEOUT_MS: '300',
    });
    const target = cut;
    const at = new Date().toISOString();
    await send(
      false,
      '/api/v1/Replication/Agent/changeSetCreated',
      { Collection: 'cut', Node: 'origin-1', ChangeSet: 1, CreatedAt: at },
      target,
    );
    await send(
      false,
      '/api/v1/Replication/Agent/heartbeat',
      { Server: 'far', Node: 'far-1', At: at, AgentVersion: '1.0.0' },
      target,
    );
    const waits = [1, 2].map(() =>
      send(
        false,
        '/api/v1/Replication/Diagnostics/changeSetState',
        { Collection: 'cut', Node: 'origin-1', Increment: 0, WaitSeconds: 20 },
        target,
      ),
    );
    await pause(300); // both are in flight
    const exited = new Promise<number | null>((resolve) => target.child.once('exit', resolve));
    target.child.kill('SIGINT');
    expect((await Promise.all(waits)).map((answer) => answer.error)).toEqual(['ECONNRESET', 'ECONNRESET']);
    expect(await exited).toBe(0);
    const lines = target
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { message?: string; abandoned?: number; routes?: unknown });
    const last = lines[lines.length - 1];
    expect(last).toMatchObject({
      abandoned: 2,
      routes: { 'POST /api/v1/Replication/Diagnostics/changeSetState': 2 },
    });
    expect(last.message).toContain('abandoning 2 request(s)');
    expect(target.output()).not.toContain('shut down cleanly');
  }, 30_000);
});
