// Per-node lag in change sets and seconds, and the origin's own watermark. Shared by the
// changeSetState diagnosis and the Prometheus gauges so both report the same figures.

/**
 * The watermark that counts for a node: what it reported, except that the origin node has every change set it
 * announced (it created them), even when its agent never reports on its own origin. null: never reported.
 */
export function effectiveApplied(
  nodeId: string,
  origin: string,
  announced: number | null,
  reported: number | null,
): number | null {
  if (nodeId === origin && announced !== null && announced > (reported ?? 0)) return announced;
  return reported;
}

export interface LagFigures {
  /** latest − applied; null when the node never reported. */
  changeSets: number | null;
  /**
   * How long the oldest change set the node lacks has existed (now − its creation time); 0 when caught up; null
   * when unknown (never reported, or that change set's creation was never announced).
   */
  seconds: number | null;
}

export function nodeLag(
  applied: number | null,
  latest: number,
  nextChangeSetCreatedAt: Date | null,
  now: Date,
): LagFigures {
  if (applied === null) return { changeSets: null, seconds: null };
  const changeSets = Math.max(0, latest - applied);
  if (changeSets === 0) return { changeSets, seconds: 0 };
  if (nextChangeSetCreatedAt === null) return { changeSets, seconds: null };
  return {
    changeSets,
    seconds: Math.max(0, Math.round(now.getTime() - nextChangeSetCreatedAt.getTime()) / 1000),
  };
}
