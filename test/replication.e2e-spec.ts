// Replication diagnostics (operation 5) on the real app and database: ingestion, the diagnosis, the
// wait (also across two instances on one database), topology, gauges and the bounded query count.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ApiKeysService } from '../src/auth/api-keys.service.js';
import { ADMIN_KEY, startTestApp, type TestApp } from './support/test-app.js';
import { MAX_WAIT_SECONDS } from '../src/replication/dto/change-set-state.dto.js';
import { ReplicationChangeSet } from '../src/replication/entities/replication.entities.js';
import { countQueries } from './replication/query-counter.js';
import {
  COLLECTION,
  created,
  dataOf,
  heartbeat,
  nodeOf,
  ORIGIN,
  report,
  secondsAgo,
  serverOf,
  state,
  types,
} from './replication/replication-calls.js';

const CHANGE_SET_AGE = 1200;
/** A test whose wait must end before MAX_WAIT_SECONDS fails at this limit instead (half the wait). */
const WAKE_LIMIT_MS = (MAX_WAIT_SECONDS * 1000) / 2;

/** Take test servers out of every later diagnosis (every live node is in scope for every collection). */
async function decommission(app: TestApp, servers: readonly string[]): Promise<void> {
  for (const server of servers) {
    const response = await app.post('/api/v1/Replication/Servers/decommission', { Server: server });
    expect(response.json()).toMatchObject({ Succeeded: true });
  }
}

async function listServers(app: TestApp, query = '') {
  const response = await app.request({
    method: 'GET',
    url: `/api/v1/Replication/Servers${query}`,
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
  });
  expect(response.statusCode).toBe(200);
  return response.json();
}

async function metrics(app: TestApp): Promise<string> {
  const response = await app.request({
    method: 'GET',
    url: '/metrics',
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
  });
  expect(response.statusCode).toBe(200);
  return response.body;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('replication: a realistic story on two instances of one database', () => {
  let t: TestApp;
  /** A second instance on the same database: answers for server "paris", with a short request time-out. */
  let other: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
    other = await startTestApp({
      database: t.database,
      env: { REPLICATION_SERVER_ID: 'paris', REQUEST_TIMEOUT_MS: '400' },
    });
    for (const changeSet of [1, 2, 3])
      await created(t, changeSet, { CreatedAt: secondsAgo(CHANGE_SET_AGE - changeSet) });
    await heartbeat(t, 'berlin', 'berlin-1');
    await heartbeat(t, 'berlin', 'berlin-2');
    await heartbeat(t, 'paris', 'paris-1');
    await heartbeat(t, 'paris', 'paris-2');
    await heartbeat(t, 'tokyo', 'tokyo-1');
    await heartbeat(t, 'tokyo', 'tokyo-2', secondsAgo(600));
    await report(t, { Server: 'paris', Node: 'paris-1', AppliedChangeSet: 3 });
    await report(t, { Server: 'paris', Node: 'paris-2', AppliedChangeSet: 2, AppliedAt: secondsAgo(30) });
    await report(t, { Server: 'paris', Node: 'paris-2', AppliedChangeSet: 3, AppliedAt: secondsAgo(20) });
    const failure = {
      Code: 'E_CONSTRAINT',
      Message: 'duplicate key in orders',
      ChangeSet: 3,
      Data: '{"key":17}',
    };
    const failedAt = secondsAgo(40);
    await report(t, {
      Server: 'tokyo',
      Node: 'tokyo-1',
      AppliedChangeSet: 2,
      AppliedAt: failedAt,
      Errors: [failure],
    });
    // The agent retries the same report, then fails again later.
    await report(t, {
      Server: 'tokyo',
      Node: 'tokyo-1',
      AppliedChangeSet: 2,
      AppliedAt: failedAt,
      Errors: [failure],
    });
    await report(t, {
      Server: 'tokyo',
      Node: 'tokyo-1',
      AppliedChangeSet: 2,
      AppliedAt: secondsAgo(5),
      Errors: [failure],
    });
    await report(t, { Server: 'tokyo', Node: 'tokyo-2', AppliedChangeSet: 3, AppliedAt: secondsAgo(660) });
  });
  afterAll(async () => {
    await other?.close();
    await t?.close();
  });

  it('answers every Info type for the latest change set', async () => {
    const answer = await state(t);
    expect(Object.keys(answer)).toEqual([
      'Succeeded',
      'Message',
      'Code',
      'Servers',
      'Collection',
      'Node',
      'ChangeSet',
      'FullyReplicated',
    ]);
    expect(answer).toMatchObject({
      Succeeded: true,
      Code: null,
      Collection: COLLECTION,
      Node: ORIGIN,
      ChangeSet: 3,
      FullyReplicated: false,
    });
    expect(answer.Message).toBe('Change set 3 of origin "berlin-1" in "orders" is applied on 4 of 6 nodes.');
    expect(
      answer.Servers.map((s: { Server: { Id: string }; HasChange: boolean }) => [s.Server.Id, s.HasChange]),
    ).toEqual([
      ['berlin', false],
      ['paris', true],
      ['tokyo', false],
    ]);

    const origin = nodeOf(answer, 'berlin-1');
    expect(origin).toMatchObject({ HasChange: true, Node: { Id: 'berlin-1', Name: 'berlin-1' } });
    expect(dataOf(origin.Info, 'Applied')).toMatchObject({ AppliedChangeSet: 3, LatencySeconds: 0 });

    const unknown = nodeOf(answer, 'berlin-2');
    expect(unknown.HasChange).toBe(false);
    expect(types(unknown.Info)).toEqual(['Unknown']);

    const paris2 = nodeOf(answer, 'paris-2');
    expect(types(paris2.Info)).toEqual(['Applied']);
    const applied = dataOf(paris2.Info, 'Applied');
    expect(applied.AppliedAt).toBe(paris2.Info[0].Timestamps[0]);
    expect(applied.LatencySeconds).toBeGreaterThan(CHANGE_SET_AGE - 30);

    const tokyo1 = nodeOf(answer, 'tokyo-1');
    expect(types(tokyo1.Info)).toEqual(['Pending', 'Lag', 'Error']);
    expect(dataOf(tokyo1.Info, 'Pending')).toMatchObject({
      AppliedChangeSet: 2,
      BehindBy: 1,
      LagChangeSets: 1,
    });
    expect(dataOf(tokyo1.Info, 'Lag').LagSeconds).toBeGreaterThan(CHANGE_SET_AGE - 10);
    const error = tokyo1.Info.find((entry) => entry.Type === 'Error')!;
    expect(error).toMatchObject({
      IsError: true,
      Message: 'E_CONSTRAINT: duplicate key in orders (change set 3)',
    });
    expect(error.Timestamps).toHaveLength(2);
    expect(error.Timestamps[0] > error.Timestamps[1]).toBe(true);
    expect(JSON.parse(error.Data)).toMatchObject({ Code: 'E_CONSTRAINT', ChangeSet: 3, Data: '{"key":17}' });

    const tokyo2 = nodeOf(answer, 'tokyo-2');
    expect(tokyo2.HasChange).toBe(true);
    expect(types(tokyo2.Info)).toEqual(['Applied', 'Stale']);
    expect(dataOf(tokyo2.Info, 'Stale')).toMatchObject({ StaleAfterSeconds: 180 });

    const tokyo = serverOf(answer, 'tokyo');
    expect(types(tokyo.Info)).toEqual(['Pending', 'Lag', 'Stale', 'Error']);
    expect(dataOf(tokyo.Info, 'Pending')).toMatchObject({
      PendingNodes: ['tokyo-1'],
      LowestAppliedChangeSet: 2,
      SafeToPruneChangeSet: 0,
    });
    expect(types(serverOf(answer, 'berlin').Info)).toEqual(['Pending', 'Unknown']);
    expect(types(serverOf(answer, 'paris').Info)).toEqual(['Applied']);
  });

  it.each([
    { increment: 0, changeSet: 3 },
    { increment: -1, changeSet: 2 },
    { increment: -2, changeSet: 1 },
    { increment: 2, changeSet: 2 },
    { increment: 3, changeSet: 3 },
  ])('Increment $increment evaluates change set $changeSet', async ({ increment, changeSet }) => {
    const answer = await state(t, { Increment: increment });
    expect(answer.ChangeSet).toBe(changeSet);
    expect(nodeOf(answer, 'tokyo-1').HasChange).toBe(changeSet <= 2);
  });

  it.each([4, -3])(
    'Increment %i cannot be resolved: ChangeSetNotFound with the documented shape',
    async (increment) => {
      const answer = await state(t, { Increment: increment });
      expect(answer).toEqual({
        Succeeded: false,
        Message: expect.stringContaining('latest is 3'),
        Code: 'ChangeSetNotFound',
        Servers: null,
        Collection: COLLECTION,
        Node: ORIGIN,
        ChangeSet: null,
        FullyReplicated: false,
      });
    },
  );

  it('answers ChangeSetNotFound for an origin without change sets', async () => {
    expect((await state(t, { Node: 'nobody' })).Code).toBe('ChangeSetNotFound');
  });

  it('LocalOnly answers for REPLICATION_SERVER_ID only, and needs it', async () => {
    const local = await state(other, { LocalOnly: true });
    expect(local.Servers.map((s: { Server: { Id: string } }) => s.Server.Id)).toEqual(['paris']);
    expect(local.FullyReplicated).toBe(true);
    const unconfigured = await state(t, { LocalOnly: true });
    expect(unconfigured).toMatchObject({ Succeeded: false, Code: 'LocalServerNotConfigured', Servers: null });
  });

  it('exposes per-node lag and the safe-to-prune point as Prometheus gauges', async () => {
    const text = await metrics(t);
    expect(text).toContain(
      'replication_node_lag_change_sets{collection="orders",origin="berlin-1",server="tokyo",node="tokyo-1"} 1',
    );
    expect(text).toContain(
      'replication_node_lag_change_sets{collection="orders",origin="berlin-1",server="berlin",node="berlin-1"} 0',
    );
    const lagSeconds =
      /replication_node_lag_seconds\{collection="orders",origin="berlin-1",server="tokyo",node="tokyo-1"\} ([\d.]+)/.exec(
        text,
      );
    expect(Number(lagSeconds?.[1])).toBeGreaterThan(CHANGE_SET_AGE - 10);
    // berlin-2 never reported on orders: nothing of it may be pruned yet, and its lag is unknown.
    expect(text).toContain('replication_safe_to_prune_change_set{collection="orders",origin="berlin-1"} 0');
    const berlin2 = text.split('\n').filter((line) => line.includes('node="berlin-2"'));
    expect(berlin2.filter((line) => line.startsWith('replication_node_lag'))).toEqual([]);
    // It did send a heartbeat a moment ago: silent for seconds, not Stale (the dashboard's stale count).
    const silent = /^replication_node_silent_seconds\{server="berlin",node="berlin-2"\} ([\d.e+-]+)$/m.exec(
      text,
    );
    expect(Number(silent?.[1])).toBeLessThan(120);
  });

  // Answered when the report arrives, not at the end of the wait: the wait (60 s) outlasts the test's time limit.
  it(
    'waits until the last report makes it fully replicated, and answers then, before the wait ends',
    async () => {
      let settled = false;
      const waiting = t
        .post('/api/v1/Replication/Diagnostics/changeSetState', {
          Collection: COLLECTION,
          Node: ORIGIN,
          Increment: 0,
          WaitSeconds: MAX_WAIT_SECONDS,
        })
        .finally(() => (settled = true));
      await pause(150);
      await report(t, { Server: 'tokyo', Node: 'tokyo-1', AppliedChangeSet: 3 });
      await pause(150);
      expect(settled).toBe(false); // berlin-2 has not reported yet
      await report(t, { Server: 'berlin', Node: 'berlin-2', AppliedChangeSet: 3 });
      const response = await waiting;
      expect(response.statusCode).toBe(200);
      expect(response.json()).toMatchObject({ Succeeded: true, ChangeSet: 3, FullyReplicated: true });
      await pause(1100); // the gauges' snapshot lives 1 s
      expect(await metrics(t)).toContain(
        'replication_safe_to_prune_change_set{collection="orders",origin="berlin-1"} 3',
      );
    },
    WAKE_LIMIT_MS,
  );

  describe('the wait', () => {
    const collection = 'waiting';
    beforeAll(async () => {
      await created(t, 1, { Collection: collection });
      await report(t, { Server: 'paris', Node: 'paris-1', Collection: collection, AppliedChangeSet: 1 });
      await report(t, { Server: 'paris', Node: 'paris-2', Collection: collection, AppliedChangeSet: 0 });
    });

    it('answers when the wait ends, not fully replicated, even past REQUEST_TIMEOUT_MS', async () => {
      const started = Date.now();
      const answer = await state(other, { Collection: collection, WaitSeconds: 1 });
      expect(answer.FullyReplicated).toBe(false);
      expect(answer.Message).toContain('not fully replicated yet');
      // It did wait (a lower bound: load only ever adds time), longer than REQUEST_TIMEOUT_MS (400 ms).
      expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    });

    // PostgreSQL: LISTEN/NOTIFY wakes the wait at once; SQLite: the 2 s fallback re-check finds it. Either way
    // long before the wait (60 s) ends, which would outlast the test's time limit.
    it(
      'ends early when the report reaches another instance on the same database',
      async () => {
        const waiting = t.post('/api/v1/Replication/Diagnostics/changeSetState', {
          Collection: collection,
          Node: ORIGIN,
          WaitSeconds: MAX_WAIT_SECONDS,
        });
        await pause(300);
        for (const node of ['tokyo-1', 'tokyo-2', 'berlin-2', 'paris-2'])
          await report(other, {
            Server: node.split('-')[0],
            Node: node,
            Collection: collection,
            AppliedChangeSet: 1,
          });
        const response = await waiting;
        expect(response.json()).toMatchObject({ ChangeSet: 1, FullyReplicated: true });
      },
      WAKE_LIMIT_MS,
    );
  });
});

describe('replication: ingestion, topology and cost', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t?.close());

  describe('validation and access', () => {
    it('names every bad field with 400 ValidationFailed', async () => {
      const response = await t.post('/api/v1/Replication/Agent/report', {
        Server: '',
        Node: 'n\u0001',
        Collection: COLLECTION,
        Origin: ORIGIN,
        AppliedChangeSet: -1,
        AppliedAt: '2026-11-22 10:00',
        Errors: [{ Code: '', Message: 'x', ChangeSet: 0 }],
        Surprise: true,
      });
      expect(response.statusCode).toBe(400);
      const fields = response.json().Errors.map((error: { Field: string }) => error.Field);
      for (const field of [
        'Server',
        'Node',
        'AppliedChangeSet',
        'AppliedAt',
        'Errors[0].Code',
        'Errors[0].ChangeSet',
      ])
        expect(fields).toContain(field);
      expect(response.json().Code).toBe('ValidationFailed');
      expect(await t.dataSource.query('SELECT id FROM replication_nodes')).toEqual([]);
    });

    it('rejects a wait beyond 60 s, a fractional Increment and an impossible date', async () => {
      const response = await t.post('/api/v1/Replication/Diagnostics/changeSetState', {
        Collection: COLLECTION,
        Node: ORIGIN,
        Increment: 1.5,
        WaitSeconds: 61,
      });
      expect(response.statusCode).toBe(400);
      const fields = response.json().Errors.map((error: { Field: string }) => error.Field);
      expect(fields).toEqual(expect.arrayContaining(['Increment', 'WaitSeconds']));
      const badDate = await t.post('/api/v1/Replication/Agent/changeSetCreated', {
        Collection: COLLECTION,
        Node: ORIGIN,
        ChangeSet: 1,
        CreatedAt: '2026-02-30T10:00:00Z',
      });
      expect(badDate.statusCode).toBe(400);
      expect(badDate.json().Errors.map((error: { Field: string }) => error.Field)).toEqual(['CreatedAt']);
    });

    it('binds camelCase properties and needs the replication scope', async () => {
      const camel = await t.post('/api/v1/replication/agent/heartbeat', {
        server: 'scope-check',
        node: 'scope-node',
        at: secondsAgo(0),
      });
      expect(camel.statusCode).toBe(200);
      const keys = t.app.get(ApiKeysService);
      const { key: mailKey } = await keys.create('mail-only', ['mail']);
      const { key: replicationKey } = await keys.create('replication-only', ['replication']);
      const body = { Server: 'scope-check', Node: 'scope-node', At: secondsAgo(0) };
      const forbidden = await t.post('/api/v1/Replication/Agent/heartbeat', body, {
        authorization: `Bearer ${mailKey}`,
      });
      expect(forbidden.statusCode).toBe(403);
      const allowed = await t.post('/api/v1/Replication/Agent/heartbeat', body, {
        authorization: `Bearer ${replicationKey}`,
      });
      expect(allowed.statusCode).toBe(200);
      await decommission(t, ['scope-check']);
    });
  });

  describe('idempotent ingestion', () => {
    const collection = 'idempotency';
    afterAll(async () => decommission(t, ['solo']));

    it('keeps the highest watermark whatever the order and repetition of reports', async () => {
      await created(t, 9, { Collection: collection });
      const base = { Server: 'solo', Node: 'solo-1', Collection: collection };
      expect((await report(t, { ...base, AppliedChangeSet: 5 })).Code).toBe('Advanced');
      expect((await report(t, { ...base, AppliedChangeSet: 3 })).Code).toBe('Unchanged');
      expect((await report(t, { ...base, AppliedChangeSet: 5 })).Code).toBe('Unchanged');
      const answer = await state(t, { Collection: collection, Increment: 5 });
      expect(nodeOf(answer, 'solo-1').HasChange).toBe(true);
      expect(dataOf(nodeOf(answer, 'solo-1').Info, 'Applied')).toMatchObject({ AppliedChangeSet: 5 });
      const later = await state(t, { Collection: collection, Increment: 6 });
      expect(dataOf(nodeOf(later, 'solo-1').Info, 'Pending')).toMatchObject({
        AppliedChangeSet: 5,
        BehindBy: 1,
      });
    });

    it('records a change set once and keeps its first creation time', async () => {
      const first = await created(t, 1, { Collection: collection, CreatedAt: '2026-01-01T00:00:00Z' });
      expect(first.Code).toBe('Created');
      const again = await created(t, 1, { Collection: collection, CreatedAt: '2026-06-01T00:00:00+02:00' });
      expect(again).toMatchObject({ Succeeded: true, Code: 'Unchanged' });
      const row = await t.dataSource
        .getRepository(ReplicationChangeSet)
        .findOneByOrFail({ collection, origin: ORIGIN, number: 1 });
      expect(row.createdAt.toISOString()).toBe('2026-01-01T00:00:00.000Z');
    });

    it('records a repeated error report once', async () => {
      const failure = { Code: 'E_X', Message: 'boom', ChangeSet: 6 };
      const body = {
        Server: 'solo',
        Node: 'solo-1',
        Collection: collection,
        AppliedChangeSet: 5,
        AppliedAt: secondsAgo(3),
      };
      await report(t, { ...body, Errors: [failure, failure] });
      await report(t, { ...body, Errors: [failure] });
      const rows = await t.dataSource.query(
        `SELECT id FROM replication_errors WHERE collection = 'idempotency'`,
      );
      expect(rows).toHaveLength(1);
      const answer = await state(t, { Collection: collection, Increment: 6 });
      const error = nodeOf(answer, 'solo-1').Info.find((entry) => entry.Type === 'Error');
      expect(error?.Timestamps).toEqual([body.AppliedAt]);
    });

    it('loses nothing when 50 nodes report at once, each in a shuffled order', async () => {
      const concurrent = 'concurrency';
      for (let changeSet = 1; changeSet <= 4; changeSet++)
        await created(t, changeSet, { Collection: concurrent });
      const nodes = Array.from({ length: 50 }, (_, i) => ({
        server: `rack-${i % 5}`,
        node: `rack-node-${i}`,
      }));
      // Every node reports 1…4 (and 4 twice) in its own shuffled order, all requests in flight together.
      const calls = nodes.flatMap(({ server, node }, i) =>
        [0, 1, 2, 3, 4].map((k) => ({ server, node, applied: ((i + k * 3) % 4) + 1 })),
      );
      // A report that waited past the database's lock limit is answered 503 busy with Retry-After (nothing
      // stored); the agent sends it again, as any client of a retryable answer does.
      const reportRetried = async (body: Record<string, unknown>) => {
        for (let attempt = 1; ; attempt++) {
          const response = await t.post('/api/v1/Replication/Agent/report', body);
          if (response.statusCode !== 503 || response.headers['retry-after'] === undefined || attempt === 20)
            return response;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      };
      const responses = await Promise.all(
        calls.map(({ server, node, applied }) =>
          reportRetried({
            Server: server,
            Node: node,
            Collection: concurrent,
            Origin: ORIGIN,
            AppliedChangeSet: applied,
            AppliedAt: secondsAgo(10 - applied),
          }),
        ),
      );
      expect(responses.map((response) => response.statusCode)).toEqual(calls.map(() => 200));
      const rows = await t.dataSource.query(
        `SELECT node_id, applied FROM replication_watermarks WHERE collection = 'concurrency'`,
      );
      expect(rows).toHaveLength(50);
      expect(new Set(rows.map((row: { applied: unknown }) => Number(row.applied)))).toEqual(new Set([4]));
      const applies = await t.dataSource.query(
        `SELECT COUNT(*) AS n FROM replication_applies WHERE collection = 'concurrency'`,
      );
      expect(Number(applies[0].n)).toBe(50 * 4);
      const answer = await state(t, { Collection: concurrent });
      const racks = answer.Servers.filter((server: { Server: { Id: string } }) =>
        server.Server.Id.startsWith('rack-'),
      );
      expect(racks).toHaveLength(5);
      expect(racks.flatMap((server: { Nodes: unknown[] }) => server.Nodes)).toHaveLength(50);
      expect(racks.every((server: { HasChange: boolean }) => server.HasChange)).toBe(true);
      await decommission(t, ['rack-0', 'rack-1', 'rack-2', 'rack-3', 'rack-4']);
    });
  });

  describe('servers and nodes', () => {
    const collection = 'topology';

    it('lists, renames and decommissions; decommissioned nodes leave the diagnosis', async () => {
      await created(t, 1, { Collection: collection });
      await heartbeat(t, 'lyon', 'lyon-1');
      await report(t, { Server: 'lyon', Node: 'lyon-1', Collection: collection, AppliedChangeSet: 1 });
      await report(t, { Server: 'lyon', Node: 'lyon-2', Collection: collection, AppliedChangeSet: 0 });
      await report(t, { Server: 'nice', Node: 'nice-1', Collection: collection, AppliedChangeSet: 1 });

      const lyon = (await listServers(t)).Servers.find((server: { Id: string }) => server.Id === 'lyon');
      expect(lyon).toMatchObject({
        Id: 'lyon',
        Name: 'lyon',
        DecommissionedAt: null,
        RegisteredAt: expect.any(String),
      });
      expect(lyon.Nodes.map((node: { Id: string }) => node.Id)).toEqual(['lyon-1', 'lyon-2']);
      expect(lyon.Nodes[0]).toMatchObject({ AgentVersion: '3.4.1', LastHeartbeatAt: expect.any(String) });
      expect(lyon.Nodes[1]).toMatchObject({
        AgentVersion: null,
        LastHeartbeatAt: null,
        LastSeenAt: expect.any(String),
      });

      const rename = await t.post('/api/v1/Replication/Servers/rename', { Server: 'lyon', Name: 'Lyon DC' });
      expect(rename.json()).toMatchObject({ Succeeded: true, Code: 'Updated' });
      expect(
        (await t.post('/api/v1/Replication/Nodes/rename', { Node: 'lyon-1', Name: 'Lyon 1' })).json().Code,
      ).toBe('Updated');
      expect(
        (await t.post('/api/v1/Replication/Nodes/rename', { Node: 'lyon-1', Name: 'Lyon 1' })).json().Code,
      ).toBe('Unchanged');
      const renamed = await state(t, { Collection: collection });
      expect(serverOf(renamed, 'lyon').Server.Name).toBe('Lyon DC');
      expect(nodeOf(renamed, 'lyon-1').Node.Name).toBe('Lyon 1');
      expect(renamed.FullyReplicated).toBe(false); // lyon-2 is at 0

      const off = await t.post('/api/v1/Replication/Nodes/decommission', { Node: 'lyon-2' });
      expect(off.json()).toMatchObject({ Succeeded: true, Code: 'Updated' });
      const without = await state(t, { Collection: collection });
      expect(without.FullyReplicated).toBe(true);
      expect(serverOf(without, 'lyon').Nodes.map((node: { Node: { Id: string } }) => node.Node.Id)).toEqual([
        'lyon-1',
      ]);
      expect((await t.post('/api/v1/Replication/Nodes/decommission', { Node: 'lyon-2' })).json().Code).toBe(
        'Unchanged',
      );

      await decommission(t, ['nice']);
      expect(
        (await state(t, { Collection: collection })).Servers.map(
          (s: { Server: { Id: string } }) => s.Server.Id,
        ),
      ).toEqual(['lyon']);
      const all = await listServers(t, '?IncludeDecommissioned=true');
      expect(all.Servers.find((server: { Id: string }) => server.Id === 'nice').DecommissionedAt).toEqual(
        expect.any(String),
      );
      expect((await listServers(t)).Servers.map((server: { Id: string }) => server.Id)).not.toContain('nice');

      // Reports of a decommissioned node are still recorded; bringing it back restores it in the diagnosis.
      await report(t, { Server: 'lyon', Node: 'lyon-2', Collection: collection, AppliedChangeSet: 1 });
      await t.post('/api/v1/Replication/Nodes/decommission', { Node: 'lyon-2', Decommissioned: false });
      const back = await state(t, { Collection: collection });
      expect(nodeOf(back, 'lyon-2').HasChange).toBe(true);
      expect(back.FullyReplicated).toBe(true);
    });

    it('answers ServerNotFound and NodeNotFound for unknown ids', async () => {
      expect(
        (await t.post('/api/v1/Replication/Servers/rename', { Server: 'nope', Name: 'x' })).json(),
      ).toEqual({
        Succeeded: false,
        Message: expect.stringContaining('nope'),
        Code: 'ServerNotFound',
      });
      expect((await t.post('/api/v1/Replication/Nodes/decommission', { Node: 'nope' })).json().Code).toBe(
        'NodeNotFound',
      );
    });
  });

  describe('cost', () => {
    it('computes the answer with the same few queries for 3 and for 200 nodes', async () => {
      const collection = 'cost';
      await created(t, 1, { Collection: collection });
      // The counter sees every statement on the connection, also a background job's poll (one a second) that
      // happens to run meanwhile: the fewest of three runs is the request's own count.
      const fewest = async () => {
        const runs = [];
        for (let run = 0; run < 3; run++)
          runs.push(await countQueries(t, () => state(t, { Collection: collection })));
        return runs.reduce((best, next) => (next.queries < best.queries ? next : best));
      };
      const small = await fewest();
      for (let server = 0; server < 20; server++)
        await Promise.all(
          Array.from({ length: 10 }, (_, node) =>
            report(t, {
              Server: `cost-${server}`,
              Node: `cost-${server}-${node}`,
              Collection: collection,
              AppliedChangeSet: node === 9 ? 0 : 1,
              Errors: node === 9 ? [{ Code: 'E', Message: 'x', ChangeSet: 1 }] : [],
            }),
          ),
        );
      const large = await fewest();
      expect(large.result.Servers.length).toBeGreaterThanOrEqual(20);
      expect(
        large.result.Servers.flatMap((s: { Nodes: unknown[] }) => s.Nodes).length,
      ).toBeGreaterThanOrEqual(200);
      expect(small.queries).toBeGreaterThan(0);
      expect(large.queries).toBe(small.queries);
      expect(large.queries).toBeLessThanOrEqual(4);
    });
  });
});
