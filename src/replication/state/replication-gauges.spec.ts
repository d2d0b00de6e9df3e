import { describe, expect, it } from '@jest/globals';
import { computeReplicationGauges } from './replication-gauges.js';
import { effectiveApplied, nodeLag } from './node-lag.js';

const NOW = new Date('2026-11-22T12:00:00.000Z');
const ago = (seconds: number): Date => new Date(NOW.getTime() - seconds * 1000);

describe('nodeLag', () => {
  it.each([
    { applied: null, latest: 9, next: null, expected: { changeSets: null, seconds: null } },
    { applied: 9, latest: 9, next: null, expected: { changeSets: 0, seconds: 0 } },
    { applied: 7, latest: 9, next: 42, expected: { changeSets: 2, seconds: 42 } },
    { applied: 7, latest: 9, next: null, expected: { changeSets: 2, seconds: null } },
    { applied: 7, latest: 9, next: -5, expected: { changeSets: 2, seconds: 0 } },
    { applied: 12, latest: 9, next: null, expected: { changeSets: 0, seconds: 0 } },
  ])(
    'applied $applied of latest $latest, next created $next s ago',
    ({ applied, latest, next, expected }) => {
      expect(nodeLag(applied, latest, next === null ? null : ago(next), NOW)).toEqual(expected);
    },
  );
});

describe('effectiveApplied', () => {
  it.each([
    { node: 'n1', reported: 3, expected: 3 },
    { node: 'n1', reported: null, expected: null },
    { node: 'origin', reported: null, expected: 8 },
    { node: 'origin', reported: 2, expected: 8 },
    { node: 'origin', reported: 10, expected: 10 },
  ])('$node reported $reported → $expected', ({ node, reported, expected }) => {
    expect(effectiveApplied(node, 'origin', 8, reported)).toBe(expected);
  });
});

describe('computeReplicationGauges', () => {
  it('gives each live node its lag per (collection, origin) and the lowest watermark as safe-to-prune point', () => {
    const gauges = computeReplicationGauges(
      [
        { collection: 'orders', origin: 'n1', announced: 10, reported: 10 },
        { collection: 'stock', origin: 'n9', announced: null, reported: 4 },
      ],
      [
        { id: 'n1', serverId: 'a' },
        { id: 'n2', serverId: 'a' },
        { id: 'n3', serverId: 'b' },
      ],
      [
        { collection: 'orders', origin: 'n1', nodeId: 'n2', applied: 10, nextChangeSetCreatedAt: null },
        { collection: 'orders', origin: 'n1', nodeId: 'n3', applied: 6, nextChangeSetCreatedAt: ago(30) },
        { collection: 'stock', origin: 'n9', nodeId: 'n3', applied: 4, nextChangeSetCreatedAt: null },
        // A decommissioned node's watermark is ignored: it is not in the live list.
        { collection: 'stock', origin: 'n9', nodeId: 'gone', applied: 1, nextChangeSetCreatedAt: null },
      ],
      NOW,
    );
    expect(gauges.lags).toEqual([
      { collection: 'orders', origin: 'n1', serverId: 'a', nodeId: 'n1', changeSets: 0, seconds: 0 },
      { collection: 'orders', origin: 'n1', serverId: 'a', nodeId: 'n2', changeSets: 0, seconds: 0 },
      { collection: 'orders', origin: 'n1', serverId: 'b', nodeId: 'n3', changeSets: 4, seconds: 30 },
      { collection: 'stock', origin: 'n9', serverId: 'b', nodeId: 'n3', changeSets: 0, seconds: 0 },
    ]);
    expect(gauges.safeToPrune).toEqual([
      { collection: 'orders', origin: 'n1', changeSet: 6 },
      // n1 and n2 never reported on stock: nothing of it may be pruned yet.
      { collection: 'stock', origin: 'n9', changeSet: 0 },
    ]);
  });

  it('has no samples for a pair without any change set', () => {
    expect(
      computeReplicationGauges(
        [{ collection: 'c', origin: 'o', announced: null, reported: 0 }],
        [{ id: 'n', serverId: 's' }],
        [],
        NOW,
      ),
    ).toEqual({ lags: [], safeToPrune: [] });
  });
});
