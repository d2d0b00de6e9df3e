import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  computeChangeSetState,
  MAX_TIMESTAMPS,
  newestFirst,
  type ErrorOccurrence,
  type InfoEntry,
  type InfoType,
  type NodeFacts,
  type ServerFacts,
  type StateQuery,
} from './change-set-state.js';

const NOW = new Date('2026-11-22T12:00:00.000Z');
const at = (secondsBeforeNow: number): Date => new Date(NOW.getTime() - secondsBeforeNow * 1000);

function node(overrides: Partial<NodeFacts> & { id: string }): NodeFacts {
  return {
    name: overrides.id.toUpperCase(),
    registeredAt: at(3600),
    watermark: null,
    changeSetAppliedAt: null,
    nextChangeSetCreatedAt: null,
    lastSeenAt: at(5),
    errors: [],
    ...overrides,
  };
}

function server(id: string, nodes: NodeFacts[]): ServerFacts {
  return { id, name: `Server ${id}`, nodes };
}

function query(overrides: Partial<StateQuery> = {}): StateQuery {
  return {
    collection: 'orders',
    origin: 'origin-node',
    changeSet: 5,
    latest: 5,
    announced: 5,
    changeSetCreatedAt: at(100),
    now: NOW,
    staleSeconds: 180,
    lagThreshold: { changeSets: 100, seconds: 60 },
    localServerId: null,
    ...overrides,
  };
}

function error(overrides: Partial<ErrorOccurrence> = {}): ErrorOccurrence {
  return {
    code: 'E_APPLY',
    message: 'constraint violated',
    changeSet: 4,
    data: null,
    occurredAt: at(50),
    ...overrides,
  };
}

/** The only node of a one-server answer. */
function single(facts: NodeFacts, q: Partial<StateQuery> = {}) {
  const state = computeChangeSetState([server('s1', [facts])], query(q));
  const [only] = state.servers[0].Nodes;
  return { state, node: only, types: only.Info.map((entry) => entry.Type) };
}

const data = (entry: InfoEntry | undefined): Record<string, unknown> =>
  JSON.parse(entry?.Data ?? 'null') as Record<string, unknown>;
const find = (info: InfoEntry[], type: InfoType): InfoEntry | undefined =>
  info.find((entry) => entry.Type === type);

describe('computeChangeSetState: node Info types', () => {
  it('Applied: watermark ≥ change set, with apply time and latency', () => {
    const { node: n, types } = single(
      node({ id: 'n1', watermark: { applied: 7, appliedAt: at(10) }, changeSetAppliedAt: at(95) }),
      { latest: 7, announced: 7 },
    );
    expect(n.HasChange).toBe(true);
    expect(types).toEqual(['Applied']);
    const applied = find(n.Info, 'Applied')!;
    expect(applied).toMatchObject({
      IsError: false,
      Message: 'Applied change set 5',
      Timestamps: [at(95).toISOString()],
    });
    expect(data(applied)).toEqual({
      ChangeSet: 5,
      AppliedChangeSet: 7,
      AppliedAt: at(95).toISOString(),
      CreatedAt: at(100).toISOString(),
      LatencySeconds: 5,
      LagChangeSets: 0,
      LagSeconds: 0,
    });
  });

  it('Pending: watermark below the change set, with the number applied and how far behind', () => {
    const { node: n, types } = single(
      node({ id: 'n1', watermark: { applied: 2, appliedAt: at(30) }, nextChangeSetCreatedAt: at(40) }),
    );
    expect(n.HasChange).toBe(false);
    expect(types).toEqual(['Pending']);
    const pending = find(n.Info, 'Pending')!;
    expect(pending.Timestamps).toEqual([at(30).toISOString()]);
    expect(data(pending)).toEqual({
      ChangeSet: 5,
      AppliedChangeSet: 2,
      BehindBy: 3,
      LastAppliedAt: at(30).toISOString(),
      LagChangeSets: 3,
      LagSeconds: 40,
    });
  });

  const lagCases: Array<{
    name: string;
    applied: number;
    latest: number;
    nextCreated: number | null;
    lag: boolean;
  }> = [
    { name: 'over the change-set threshold', applied: 10, latest: 110, nextCreated: null, lag: true },
    { name: 'just under the change-set threshold', applied: 11, latest: 110, nextCreated: null, lag: false },
    { name: 'over the seconds threshold', applied: 9, latest: 10, nextCreated: 61, lag: true },
    { name: 'under the seconds threshold', applied: 9, latest: 10, nextCreated: 59, lag: false },
    { name: 'caught up', applied: 10, latest: 10, nextCreated: null, lag: false },
  ];
  it.each(lagCases)('Lag $name', ({ applied, latest, nextCreated, lag }) => {
    const { node: n } = single(
      node({
        id: 'n1',
        watermark: { applied, appliedAt: at(500) },
        changeSetAppliedAt: at(600),
        nextChangeSetCreatedAt: nextCreated === null ? null : at(nextCreated),
      }),
      { latest, announced: latest },
    );
    const entry = find(n.Info, 'Lag');
    expect(entry !== undefined).toBe(lag);
    if (entry) {
      expect(data(entry)).toMatchObject({
        LatestChangeSet: latest,
        AppliedChangeSet: applied,
        LagChangeSets: latest - applied,
        LagSeconds: nextCreated,
        ThresholdChangeSets: 100,
        ThresholdSeconds: 60,
      });
      expect(entry.Timestamps).toEqual(nextCreated === null ? [] : [at(nextCreated).toISOString()]);
    }
  });

  it.each([
    { lastSeen: 181, stale: true },
    { lastSeen: 179, stale: false },
    { lastSeen: null, stale: true },
  ])('Stale when silent for more than staleSeconds (last seen $lastSeen s ago)', ({ lastSeen, stale }) => {
    const { node: n } = single(
      node({
        id: 'n1',
        watermark: { applied: 5, appliedAt: at(10) },
        lastSeenAt: lastSeen === null ? null : at(lastSeen),
      }),
    );
    const entry = find(n.Info, 'Stale');
    expect(entry !== undefined).toBe(stale);
    expect(n.HasChange).toBe(true);
    if (entry && lastSeen !== null) {
      expect(entry.Timestamps).toEqual([at(lastSeen).toISOString()]);
      expect(data(entry)).toEqual({
        LastSeenAt: at(lastSeen).toISOString(),
        SilentSeconds: lastSeen,
        StaleAfterSeconds: 180,
      });
    }
  });

  it('Error: open failures only, grouped by message, occurrences deduplicated newest first', () => {
    const { node: n } = single(
      node({
        id: 'n1',
        watermark: { applied: 3, appliedAt: at(60) },
        errors: [
          error({ changeSet: 4, occurredAt: at(50) }),
          error({ changeSet: 4, occurredAt: at(20), data: '{"row":17}' }),
          error({ changeSet: 4, occurredAt: at(20) }), // the same occurrence reported twice
          error({ changeSet: 6, occurredAt: at(10) }), // beyond the change set evaluated
          error({ changeSet: 3, occurredAt: at(70) }), // already applied since
          error({ changeSet: null, code: 'E_DISK', message: 'disk full', occurredAt: at(30) }), // since last progress
          error({ changeSet: null, code: 'E_NET', message: 'timeout', occurredAt: at(90) }), // before last progress
        ],
      }),
    );
    const errors = n.Info.filter((entry) => entry.Type === 'Error');
    expect(errors.map((entry) => entry.Message)).toEqual([
      'E_APPLY: constraint violated (change set 4)',
      'E_DISK: disk full',
    ]);
    expect(errors.every((entry) => entry.IsError)).toBe(true);
    expect(errors[0].Timestamps).toEqual([at(20).toISOString(), at(50).toISOString()]);
    expect(data(errors[0])).toEqual({
      Code: 'E_APPLY',
      ChangeSet: 4,
      Data: '{"row":17}',
      LastOccurredAt: at(20).toISOString(),
    });
    expect(data(errors[1])).toMatchObject({ Code: 'E_DISK', ChangeSet: null });
  });

  it('Error entries disappear once the node has the change set', () => {
    const { types } = single(
      node({ id: 'n1', watermark: { applied: 5, appliedAt: at(5) }, errors: [error({ changeSet: 4 })] }),
    );
    expect(types).toEqual(['Applied']);
  });

  it(`keeps at most ${MAX_TIMESTAMPS} timestamps per entry`, () => {
    const errors = Array.from({ length: 25 }, (_, i) => error({ occurredAt: at(100 - i) }));
    const { node: n } = single(node({ id: 'n1', watermark: { applied: 3, appliedAt: at(200) }, errors }));
    const timestamps = find(n.Info, 'Error')!.Timestamps;
    expect(timestamps).toHaveLength(MAX_TIMESTAMPS);
    expect(timestamps[0]).toBe(at(76).toISOString());
    expect(timestamps.at(-1)).toBe(at(95).toISOString());
  });

  it('Unknown: a node that never reported for this collection and origin', () => {
    const { state, node: n, types } = single(node({ id: 'n1', registeredAt: at(900) }));
    expect(n.HasChange).toBe(false);
    expect(types).toEqual(['Unknown']);
    expect(find(n.Info, 'Unknown')!.Timestamps).toEqual([at(900).toISOString()]);
    expect(state.fullyReplicated).toBe(false);
    expect(state.lags).toEqual([{ serverId: 's1', nodeId: 'n1', changeSets: null, seconds: null }]);
  });

  it('the origin node has every change set it announced, even without reporting on itself', () => {
    const { node: n, state } = single(node({ id: 'origin-node' }), { announced: 6, latest: 6 });
    expect(n.HasChange).toBe(true);
    expect(data(find(n.Info, 'Applied'))).toMatchObject({
      AppliedChangeSet: 6,
      AppliedAt: at(100).toISOString(),
      LatencySeconds: 0,
    });
    expect(state.fullyReplicated).toBe(true);
  });
});

describe('computeChangeSetState: servers, scope and FullyReplicated', () => {
  const applied = (id: string, watermark: number): NodeFacts =>
    node({
      id,
      watermark: { applied: watermark, appliedAt: at(20) },
      changeSetAppliedAt: watermark >= 5 ? at(30) : null,
    });

  it('a server has the change when all its live nodes do; FullyReplicated when every server does', () => {
    const state = computeChangeSetState(
      [server('b', [applied('b2', 5), applied('b1', 6)]), server('a', [applied('a1', 5), applied('a2', 4)])],
      query({ latest: 6, announced: 6 }),
    );
    expect(state.servers.map((s) => [s.Server.Id, s.HasChange])).toEqual([
      ['a', false],
      ['b', true],
    ]);
    expect(state.servers[1].Nodes.map((n) => n.Node.Id)).toEqual(['b1', 'b2']);
    expect(state.fullyReplicated).toBe(false);
    expect(state.safeToPrune).toBe(4);
    expect(state.appliedNodes).toBe(3);
    expect(state.totalNodes).toBe(4);
    expect(state.message).toBe(
      'Change set 5 of origin "origin-node" in "orders" is applied on 3 of 4 nodes.',
    );

    const [a, b] = state.servers;
    expect(a.Info[0]).toMatchObject({ Type: 'Pending', Message: 'Change set 5 not applied on 1 of 2 nodes' });
    expect(data(a.Info[0])).toMatchObject({
      PendingNodes: ['a2'],
      LowestAppliedChangeSet: 4,
      MaxBehindBy: 1,
      SafeToPruneChangeSet: 4,
    });
    expect(b.Info[0]).toMatchObject({ Type: 'Applied', Message: 'Change set 5 applied on all 2 nodes' });
    expect(data(b.Info[0])).toMatchObject({ Nodes: 2, LowestAppliedChangeSet: 5, MaxLatencySeconds: 70 });
  });

  it('is fully replicated when every node has it', () => {
    const state = computeChangeSetState(
      [server('a', [applied('a1', 5)]), server('b', [applied('b1', 9)])],
      query(),
    );
    expect(state.fullyReplicated).toBe(true);
    expect(state.message).toContain('fully replicated');
  });

  it('a node that never reported keeps it from being fully replicated', () => {
    const state = computeChangeSetState([server('a', [applied('a1', 5), node({ id: 'a2' })])], query());
    expect(state.fullyReplicated).toBe(false);
    expect(state.safeToPrune).toBe(0);
    expect(state.servers[0].Info.map((entry) => [entry.Type, entry.Message])).toEqual([
      ['Pending', 'Change set 5 not applied on 1 of 2 nodes'],
      ['Unknown', 'Never reported on 1 of 2 nodes'],
    ]);
  });

  it('rolls up Lag, Stale and Error per server with the nodes concerned and merged timestamps', () => {
    const state = computeChangeSetState(
      [
        server('a', [
          node({
            id: 'a1',
            watermark: { applied: 1, appliedAt: at(10) },
            lastSeenAt: at(400),
            errors: [error({ occurredAt: at(15) })],
          }),
          node({
            id: 'a2',
            watermark: { applied: 2, appliedAt: at(10) },
            lastSeenAt: at(500),
            errors: [error({ occurredAt: at(15) })],
          }),
          applied('a3', 5),
        ]),
      ],
      query({ latest: 200, announced: 200 }),
    );
    const info = state.servers[0].Info;
    expect(info.map((entry) => [entry.Type, entry.Message, entry.IsError])).toEqual([
      ['Pending', 'Change set 5 not applied on 2 of 3 nodes', false],
      ['Lag', 'Lagging behind the latest change set on 3 of 3 nodes', false],
      ['Stale', 'No heartbeat for more than 180 s on 2 of 3 nodes', false],
      ['Error', 'Apply errors on 2 of 3 nodes', true],
    ]);
    expect(data(info[2])).toEqual({ Nodes: ['a1', 'a2'] });
    expect(info[2].Timestamps).toEqual([at(400).toISOString(), at(500).toISOString()]);
    expect(info[3].Timestamps).toEqual([at(15).toISOString()]);
  });

  it('LocalOnly limits the answer to the local server; the safe-to-prune point stays global', () => {
    const state = computeChangeSetState(
      [server('a', [applied('a1', 5)]), server('b', [applied('b1', 2)])],
      query({ localServerId: 'a' }),
    );
    expect(state.servers.map((s) => s.Server.Id)).toEqual(['a']);
    expect(state.fullyReplicated).toBe(true);
    expect(state.safeToPrune).toBe(2);
    expect(data(state.servers[0].Info[0])).toMatchObject({ SafeToPruneChangeSet: 2 });
  });

  it('LocalOnly for a server that has not registered: no servers and not fully replicated', () => {
    const state = computeChangeSetState([server('a', [applied('a1', 5)])], query({ localServerId: 'zz' }));
    expect(state.servers).toEqual([]);
    expect(state.fullyReplicated).toBe(false);
    expect(state.message).toContain('"zz"');
  });

  it('nothing registered: not fully replicated, no safe-to-prune point', () => {
    const state = computeChangeSetState([], query());
    expect(state).toMatchObject({ servers: [], fullyReplicated: false, safeToPrune: null });
  });

  it('a server without live nodes has the change vacuously and says it has no nodes', () => {
    const state = computeChangeSetState([server('a', [applied('a1', 5)]), server('empty', [])], query());
    expect(state.servers[1]).toMatchObject({ HasChange: true, Nodes: [] });
    expect(state.servers[1].Info).toEqual([
      expect.objectContaining({
        Type: 'Unknown',
        Message: 'No live nodes on this server',
        Timestamps: [],
        // Nodes is a list of node ids in every server summary (here: none); Data is JSON text.
        Data: JSON.stringify({ Nodes: [], SafeToPruneChangeSet: 5 }),
      }),
    ]);
  });
});

describe('newestFirst', () => {
  it('deduplicates, orders newest first and skips unknown times', () => {
    expect(newestFirst([at(5), null, at(1), at(5), new Date('invalid')])).toEqual([
      at(1).toISOString(),
      at(5).toISOString(),
    ]);
  });
});

describe('computeChangeSetState: invariants', () => {
  const nodeArb = fc.record({
    watermark: fc.option(fc.integer({ min: 0, max: 12 }), { nil: null }),
    silent: fc.integer({ min: 0, max: 400 }),
    errors: fc.array(
      fc.record({
        changeSet: fc.option(fc.integer({ min: 1, max: 12 }), { nil: null }),
        ago: fc.integer({ min: 0, max: 100 }),
      }),
      { maxLength: 30 },
    ),
  });
  const serversArb = fc.array(fc.array(nodeArb, { maxLength: 4 }), { maxLength: 4 });

  it('HasChange, FullyReplicated, safe-to-prune and Info follow the rules for any reports', () => {
    fc.assert(
      fc.property(serversArb, fc.integer({ min: 1, max: 10 }), (shape, changeSet) => {
        const servers = shape.map((nodes, s) =>
          server(
            `s${s}`,
            nodes.map((facts, n) =>
              node({
                id: `s${s}n${n}`,
                watermark: facts.watermark === null ? null : { applied: facts.watermark, appliedAt: at(120) },
                lastSeenAt: at(facts.silent),
                errors: facts.errors.map((e) => error({ changeSet: e.changeSet, occurredAt: at(e.ago) })),
              }),
            ),
          ),
        );
        const state = computeChangeSetState(servers, query({ changeSet, latest: 12, announced: 12 }));
        const watermarks = shape.flat().map((facts) => facts.watermark);
        for (const [s, serverState] of state.servers.entries()) {
          serverState.Nodes.forEach((nodeState, n) => {
            const watermark = shape[s][n].watermark;
            expect(nodeState.HasChange).toBe(watermark !== null && watermark >= changeSet);
            const primary = nodeState.Info.filter((e) => ['Applied', 'Pending', 'Unknown'].includes(e.Type));
            expect(primary).toHaveLength(1);
            expect(nodeState.Info.some((e) => e.Type === 'Stale')).toBe(shape[s][n].silent > 180);
            if (nodeState.HasChange) expect(nodeState.Info.some((e) => e.Type === 'Error')).toBe(false);
          });
          expect(serverState.HasChange).toBe(serverState.Nodes.every((n) => n.HasChange));
          for (const entry of [...serverState.Info, ...serverState.Nodes.flatMap((n) => n.Info)]) {
            expect(entry.IsError).toBe(entry.Type === 'Error');
            expect(entry.Timestamps.length).toBeLessThanOrEqual(MAX_TIMESTAMPS);
            expect(new Set(entry.Timestamps).size).toBe(entry.Timestamps.length);
            expect([...entry.Timestamps].sort().reverse()).toEqual(entry.Timestamps);
            expect(() => JSON.parse(entry.Data) as unknown).not.toThrow();
          }
        }
        const expectedFully =
          state.servers.length > 0 &&
          watermarks.every((watermark) => watermark !== null && watermark >= changeSet);
        expect(state.fullyReplicated).toBe(expectedFully);
        expect(state.safeToPrune).toBe(
          watermarks.length === 0 ? null : Math.min(...watermarks.map((w) => w ?? 0)),
        );
      }),
      { numRuns: 200 },
    );
  });
});
