// The drain a load balancer can follow (issue 21), seen from clients of the built service: on SIGTERM readiness is
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

function send(agent: http.Agent | false, path: string, body?: unknown): Promise<Answer> {
  return new Promise((resolve) => {
    const request = http.request(
      {
        host: '127.0.0.1',
        port: server.port,
        path,
        method: body === undefined ? 'GET' : 'POST',
        agent,
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
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
    request.end(body === undefined ? undefined : JSON.stringify(body));
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
