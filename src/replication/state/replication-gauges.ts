// The figures behind the Prometheus gauges — per live node and (collection, origin) its lag in
// change sets and seconds, and per (collection, origin) the safe-to-prune point (lowest watermark over all live
// nodes; a live node that never reported holds it at 0). Same rules as the changeSetState answer (node-lag.ts).
import { latestChangeSet } from './resolve-change-set.js';
import { effectiveApplied, nodeLag } from './node-lag.js';

export interface GaugePair {
  collection: string;
  origin: string;
  /** Highest number announced with changeSetCreated. */
  announced: number | null;
  /** Highest watermark any node reported. */
  reported: number | null;
}

export interface GaugeWatermark {
  collection: string;
  origin: string;
  nodeId: string;
  applied: number;
  nextChangeSetCreatedAt: Date | null;
}

export interface GaugeNode {
  id: string;
  serverId: string;
  /** Last sign of life (heartbeat or report); null when the node never reported. */
  lastSeenAt?: Date | null;
}

export interface NodeLagSample {
  collection: string;
  origin: string;
  serverId: string;
  nodeId: string;
  changeSets: number;
  seconds: number | null;
}

export interface SafeToPruneSample {
  collection: string;
  origin: string;
  changeSet: number;
}

export interface ReplicationGauges {
  lags: NodeLagSample[];
  safeToPrune: SafeToPruneSample[];
}

export function computeReplicationGauges(
  pairs: readonly GaugePair[],
  liveNodes: readonly GaugeNode[],
  watermarks: readonly GaugeWatermark[],
  now: Date,
): ReplicationGauges {
  const byPair = new Map<string, Map<string, GaugeWatermark>>();
  for (const watermark of watermarks) {
    const key = pairKey(watermark.collection, watermark.origin);
    let nodes = byPair.get(key);
    if (!nodes) byPair.set(key, (nodes = new Map<string, GaugeWatermark>()));
    nodes.set(watermark.nodeId, watermark);
  }
  const lags: NodeLagSample[] = [];
  const safeToPrune: SafeToPruneSample[] = [];
  for (const pair of pairs) {
    const latest = latestChangeSet(pair.announced, pair.reported);
    if (latest === null) continue;
    const reportedByNode =
      byPair.get(pairKey(pair.collection, pair.origin)) ?? new Map<string, GaugeWatermark>();
    let lowest: number | null = null;
    for (const node of liveNodes) {
      const watermark = reportedByNode.get(node.id);
      const applied = effectiveApplied(node.id, pair.origin, pair.announced, watermark?.applied ?? null);
      lowest = lowest === null ? (applied ?? 0) : Math.min(lowest, applied ?? 0);
      if (applied === null) continue;
      // The creation time of watermark+1 only describes the reported watermark, not the origin's announced one.
      const next =
        watermark !== undefined && watermark.applied === applied ? watermark.nextChangeSetCreatedAt : null;
      const lag = nodeLag(applied, latest, next, now);
      lags.push({
        collection: pair.collection,
        origin: pair.origin,
        serverId: node.serverId,
        nodeId: node.id,
        changeSets: lag.changeSets ?? 0,
        seconds: lag.seconds,
      });
    }
    if (lowest !== null)
      safeToPrune.push({ collection: pair.collection, origin: pair.origin, changeSet: lowest });
  }
  return { lags, safeToPrune };
}

function pairKey(collection: string, origin: string): string {
  return JSON.stringify([collection, origin]);
}
