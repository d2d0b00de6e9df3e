// Operation 5 (changeSetState): the diagnosis of one change set of one (collection, origin node), as a pure function
// of what agents reported (watermarks, apply times, errors), heartbeats and the clock. No I/O here, so every rule
// below is unit-tested without a database; the service only loads the facts and maps nothing but the envelope.
//
// Rules (decisions recorded in docs/replication.md):
// - Node HasChange: its (effective) watermark ≥ ChangeSet. The origin node created its own change sets, so it has
//   every number it announced even if its agent never reports on itself.
// - Server HasChange: all its live nodes have it. FullyReplicated: at least one server in scope, every server in
//   scope has it, and no node in scope has never reported.
// - Info per node: Applied | Pending (about ChangeSet), Lag (about the latest, over a threshold), Stale (silent for
//   staleSeconds), Error (unresolved apply failures), Unknown (never reported). Per server: one Applied/Pending
//   summary plus one roll-up per other type present among its nodes.
// - Timestamps: when the same (Type, Message) occurred, newest first, deduplicated, at most MAX_TIMESTAMPS.
// - Safe-to-prune point: the lowest effective watermark over all live nodes (never reported = 0), whatever the
//   scope: pruning is only safe when every live node of every server has the change sets.
import { effectiveApplied, nodeLag } from './node-lag.js';

export const INFO_TYPES = ['Applied', 'Pending', 'Lag', 'Stale', 'Error', 'Unknown'] as const;
export type InfoType = (typeof INFO_TYPES)[number];
export const MAX_TIMESTAMPS = 20;

export interface InfoEntry {
  IsError: boolean;
  Type: InfoType;
  Message: string;
  /** A JSON object, as text (the interface types Data as a string). */
  Data: string;
  Timestamps: string[];
}

export interface Named {
  Id: string;
  Name: string;
}

export interface NodeState {
  Node: Named;
  HasChange: boolean;
  Info: InfoEntry[];
}

export interface ServerState {
  Server: Named;
  HasChange: boolean;
  Nodes: NodeState[];
  Info: InfoEntry[];
}

export interface Watermark {
  /** Highest change set the node reported as applied (0 = none yet). */
  applied: number;
  /** When, by the agent's clock, it reached that watermark. */
  appliedAt: Date;
}

export interface ErrorOccurrence {
  code: string;
  message: string;
  /** The change set that failed to apply; null when the failure is not tied to one. */
  changeSet: number | null;
  data: string | null;
  occurredAt: Date;
}

export interface NodeFacts {
  id: string;
  name: string;
  registeredAt: Date;
  /** null: the node never reported for this (collection, origin). */
  watermark: Watermark | null;
  /** Earliest reported time at which the node's watermark was ≥ the change set evaluated. */
  changeSetAppliedAt: Date | null;
  /** Creation time of the first change set the node lacks (watermark + 1), when the origin announced it. */
  nextChangeSetCreatedAt: Date | null;
  /** Last sign of life (heartbeat or report), capped at the time it was received. */
  lastSeenAt: Date | null;
  errors: readonly ErrorOccurrence[];
}

export interface ServerFacts {
  id: string;
  name: string;
  /** Live (not decommissioned) nodes only. */
  nodes: readonly NodeFacts[];
}

export interface LagThreshold {
  changeSets: number;
  seconds: number;
}

export interface StateQuery {
  collection: string;
  origin: string;
  changeSet: number;
  latest: number;
  /** Highest number the origin announced (changeSetCreated), null when none. */
  announced: number | null;
  changeSetCreatedAt: Date | null;
  now: Date;
  staleSeconds: number;
  lagThreshold: LagThreshold;
  /** LocalOnly: the answering server's id; null answers for every live server. */
  localServerId: string | null;
}

export interface NodeLagFigure {
  serverId: string;
  nodeId: string;
  /** null when the node never reported (its lag is unknown). */
  changeSets: number | null;
  seconds: number | null;
}

export interface ChangeSetState {
  servers: ServerState[];
  fullyReplicated: boolean;
  safeToPrune: number | null;
  lags: NodeLagFigure[];
  appliedNodes: number;
  totalNodes: number;
  message: string;
}

interface EffectiveWatermark {
  applied: number;
  /** When it reached `applied`; null when only the origin's announcements vouch for it. */
  appliedAt: Date | null;
  changeSetAppliedAt: Date | null;
  nextCreatedAt: Date | null;
}

interface EvaluatedNode {
  state: NodeState;
  facts: NodeFacts;
  effective: EffectiveWatermark | null;
  latencySeconds: number | null;
  appliedAt: Date | null;
  lag: NodeLagFigure;
  /** The instants behind each Info type's Timestamps, for the server roll-ups. */
  times: Map<InfoType, Array<Date | null>>;
}

export function computeChangeSetState(servers: readonly ServerFacts[], query: StateQuery): ChangeSetState {
  const allServers = [...servers].sort((a, b) => compareIds(a.id, b.id));
  const safeToPrune = lowestWatermark(allServers, query);
  const inScope =
    query.localServerId === null
      ? allServers
      : allServers.filter((server) => server.id === query.localServerId);

  const states: ServerState[] = [];
  const lags: NodeLagFigure[] = [];
  let appliedNodes = 0;
  let totalNodes = 0;
  let anyUnknown = false;
  for (const server of inScope) {
    const nodes = [...server.nodes]
      .sort((a, b) => compareIds(a.id, b.id))
      .map((node) => evaluateNode(server.id, node, query));
    for (const node of nodes) {
      lags.push(node.lag);
      totalNodes++;
      if (node.state.HasChange) appliedNodes++;
      if (node.state.Info.some((entry) => entry.Type === 'Unknown')) anyUnknown = true;
    }
    const hasChange = nodes.every((node) => node.state.HasChange);
    states.push({
      Server: { Id: server.id, Name: server.name },
      HasChange: hasChange,
      Nodes: nodes.map((node) => node.state),
      Info: serverInfo(nodes, hasChange, query, safeToPrune),
    });
  }
  const fullyReplicated = states.length > 0 && states.every((state) => state.HasChange) && !anyUnknown;
  return {
    servers: states,
    fullyReplicated,
    safeToPrune,
    lags,
    appliedNodes,
    totalNodes,
    message: summaryMessage(query, appliedNodes, totalNodes, states.length, fullyReplicated),
  };
}

function summaryMessage(
  query: StateQuery,
  applied: number,
  total: number,
  servers: number,
  fully: boolean,
): string {
  const subject = `Change set ${query.changeSet} of origin "${query.origin}" in "${query.collection}"`;
  if (servers === 0) {
    return query.localServerId === null
      ? `${subject}: no live server has registered yet.`
      : `${subject}: server "${query.localServerId}" (REPLICATION_SERVER_ID) has not registered or is decommissioned.`;
  }
  return `${subject} is applied on ${applied} of ${plural(total, 'node')}${fully ? '; fully replicated' : ''}.`;
}

function effectiveWatermark(node: NodeFacts, query: StateQuery): EffectiveWatermark | null {
  const reported = node.watermark;
  const applied = effectiveApplied(node.id, query.origin, query.announced, reported?.applied ?? null);
  if (applied === null) return null;
  if (reported !== null && reported.applied === applied) {
    return {
      applied,
      appliedAt: reported.appliedAt,
      changeSetAppliedAt: node.changeSetAppliedAt,
      nextCreatedAt: node.nextChangeSetCreatedAt,
    };
  }
  // The origin's own change sets: it "applied" each when it created it.
  return {
    applied,
    appliedAt: null,
    changeSetAppliedAt:
      node.changeSetAppliedAt ?? (query.changeSet <= applied ? query.changeSetCreatedAt : null),
    nextCreatedAt: null,
  };
}

function evaluateNode(serverId: string, node: NodeFacts, query: StateQuery): EvaluatedNode {
  const effective = effectiveWatermark(node, query);
  const hasChange = effective !== null && effective.applied >= query.changeSet;
  const lagFigures = nodeLag(
    effective?.applied ?? null,
    query.latest,
    effective?.nextCreatedAt ?? null,
    query.now,
  );
  const info: InfoEntry[] = [];
  const times = new Map<InfoType, Array<Date | null>>();
  const add = (
    type: InfoType,
    message: string,
    instants: Array<Date | null>,
    data: Record<string, unknown>,
  ): void => {
    info.push(entry(type, message, instants, data));
    const known = times.get(type);
    if (known) known.push(...instants);
    else times.set(type, instants);
  };
  let latencySeconds: number | null = null;
  let appliedAt: Date | null = null;

  if (effective === null) {
    add(
      'Unknown',
      `Never reported for "${query.collection}" from origin "${query.origin}"`,
      [node.registeredAt],
      {
        RegisteredAt: iso(node.registeredAt),
        LastSeenAt: iso(node.lastSeenAt),
      },
    );
  } else if (hasChange) {
    appliedAt = effective.changeSetAppliedAt;
    latencySeconds =
      appliedAt !== null && query.changeSetCreatedAt !== null
        ? seconds(appliedAt.getTime() - query.changeSetCreatedAt.getTime())
        : null;
    add('Applied', `Applied change set ${query.changeSet}`, [appliedAt], {
      ChangeSet: query.changeSet,
      AppliedChangeSet: effective.applied,
      AppliedAt: iso(appliedAt),
      CreatedAt: iso(query.changeSetCreatedAt),
      LatencySeconds: latencySeconds,
      LagChangeSets: lagFigures.changeSets,
      LagSeconds: lagFigures.seconds,
    });
  } else {
    add(
      'Pending',
      `Change set ${query.changeSet} not applied yet (applied up to ${effective.applied})`,
      [effective.appliedAt],
      {
        ChangeSet: query.changeSet,
        AppliedChangeSet: effective.applied,
        BehindBy: query.changeSet - effective.applied,
        LastAppliedAt: iso(effective.appliedAt),
        LagChangeSets: lagFigures.changeSets,
        LagSeconds: lagFigures.seconds,
      },
    );
  }

  if (effective !== null && isLagging(lagFigures, query.lagThreshold)) {
    add('Lag', `Lags behind the latest change set ${query.latest}`, [effective.nextCreatedAt], {
      LatestChangeSet: query.latest,
      AppliedChangeSet: effective.applied,
      LagChangeSets: lagFigures.changeSets,
      LagSeconds: lagFigures.seconds,
      ThresholdChangeSets: query.lagThreshold.changeSets,
      ThresholdSeconds: query.lagThreshold.seconds,
    });
  }

  const silentMs = node.lastSeenAt === null ? null : query.now.getTime() - node.lastSeenAt.getTime();
  if (silentMs === null || silentMs > query.staleSeconds * 1000) {
    add('Stale', `No heartbeat for more than ${query.staleSeconds} s`, [node.lastSeenAt], {
      LastSeenAt: iso(node.lastSeenAt),
      SilentSeconds: silentMs === null ? null : seconds(silentMs),
      StaleAfterSeconds: query.staleSeconds,
    });
  }

  if (!hasChange) {
    for (const group of errorGroups(openErrors(node, effective, query))) {
      const newest = group.occurrences[0];
      add(
        'Error',
        group.message,
        group.occurrences.map((occurrence) => occurrence.occurredAt),
        {
          Code: newest.code,
          ChangeSet: newest.changeSet,
          Data: newest.data,
          LastOccurredAt: iso(newest.occurredAt),
        },
      );
    }
  }

  return {
    state: { Node: { Id: node.id, Name: node.name }, HasChange: hasChange, Info: info },
    facts: node,
    effective,
    latencySeconds,
    appliedAt,
    lag: { serverId, nodeId: node.id, changeSets: lagFigures.changeSets, seconds: lagFigures.seconds },
    times,
  };
}

function isLagging(
  lag: { changeSets: number | null; seconds: number | null },
  threshold: LagThreshold,
): boolean {
  if (lag.changeSets === null || lag.changeSets <= 0) return false;
  return lag.changeSets >= threshold.changeSets || (lag.seconds !== null && lag.seconds >= threshold.seconds);
}

/**
 * Failures the node has not got past: on a change set it still lacks (up to the one evaluated), or not tied to a
 * change set and reported since its last progress. Once the node applies the change set, they are history.
 */
function openErrors(
  node: NodeFacts,
  effective: EffectiveWatermark | null,
  query: StateQuery,
): ErrorOccurrence[] {
  const applied = effective?.applied ?? 0;
  const since = effective?.appliedAt ?? null;
  return node.errors.filter((error) =>
    error.changeSet !== null
      ? error.changeSet > applied && error.changeSet <= query.changeSet
      : since === null || error.occurredAt.getTime() > since.getTime(),
  );
}

/** One group per distinct failure (code, message, change set), newest occurrence first; groups newest first. */
function errorGroups(
  errors: readonly ErrorOccurrence[],
): Array<{ message: string; occurrences: ErrorOccurrence[] }> {
  const groups = new Map<string, ErrorOccurrence[]>();
  for (const error of errors) {
    const message = `${error.code}: ${error.message}${error.changeSet === null ? '' : ` (change set ${error.changeSet})`}`;
    const group = groups.get(message);
    if (group) group.push(error);
    else groups.set(message, [error]);
  }
  return [...groups.entries()]
    .map(([message, occurrences]) => ({
      message,
      occurrences: occurrences.sort((a, b) => b.occurredAt.getTime() - a.occurredAt.getTime()),
    }))
    .sort((a, b) => b.occurrences[0].occurredAt.getTime() - a.occurrences[0].occurredAt.getTime());
}

const ROLLUP_MESSAGES: Record<Exclude<InfoType, 'Applied' | 'Pending'>, (query: StateQuery) => string> = {
  Lag: () => 'Lagging behind the latest change set',
  Stale: (query) => `No heartbeat for more than ${query.staleSeconds} s`,
  Error: () => 'Apply errors',
  Unknown: () => 'Never reported',
};

function serverInfo(
  nodes: readonly EvaluatedNode[],
  hasChange: boolean,
  query: StateQuery,
  safeToPrune: number | null,
): InfoEntry[] {
  const total = nodes.length;
  if (total === 0) {
    return [
      entry('Unknown', 'No live nodes on this server', [], { Nodes: [], SafeToPruneChangeSet: safeToPrune }),
    ];
  }
  const known = nodes.flatMap((node) => (node.effective === null ? [] : [node.effective.applied]));
  const lowest = known.length === nodes.length ? Math.min(...known) : 0;
  const info: InfoEntry[] = [];
  if (hasChange) {
    const latencies = nodes.flatMap((node) => (node.latencySeconds === null ? [] : [node.latencySeconds]));
    const appliedTimes = nodes.map((node) => node.appliedAt);
    const last = newestOf(appliedTimes);
    info.push(
      entry(
        'Applied',
        `Change set ${query.changeSet} applied on all ${plural(total, 'node')}`,
        appliedTimes,
        {
          ChangeSet: query.changeSet,
          Nodes: total,
          LastAppliedAt: iso(last),
          MaxLatencySeconds: latencies.length === 0 ? null : Math.max(...latencies),
          LowestAppliedChangeSet: lowest,
          SafeToPruneChangeSet: safeToPrune,
        },
      ),
    );
  } else {
    const pending = nodes.filter((node) => !node.state.HasChange);
    info.push(
      entry(
        'Pending',
        `Change set ${query.changeSet} not applied on ${pending.length} of ${plural(total, 'node')}`,
        pending.map((node) => node.effective?.appliedAt ?? null),
        {
          ChangeSet: query.changeSet,
          Nodes: total,
          PendingNodes: pending.map((node) => node.facts.id),
          LowestAppliedChangeSet: lowest,
          MaxBehindBy: Math.max(...pending.map((node) => query.changeSet - (node.effective?.applied ?? 0))),
          SafeToPruneChangeSet: safeToPrune,
        },
      ),
    );
  }
  for (const type of ['Lag', 'Stale', 'Error', 'Unknown'] as const) {
    const affected = nodes.filter((node) => node.times.has(type));
    if (affected.length === 0) continue;
    const timestamps = affected.flatMap((node) => node.times.get(type) ?? []);
    info.push(
      entry(
        type,
        `${ROLLUP_MESSAGES[type](query)} on ${affected.length} of ${plural(total, 'node')}`,
        timestamps,
        {
          Nodes: affected.map((node) => node.facts.id),
        },
      ),
    );
  }
  return info;
}

function lowestWatermark(servers: readonly ServerFacts[], query: StateQuery): number | null {
  let lowest: number | null = null;
  for (const server of servers) {
    for (const node of server.nodes) {
      const applied =
        effectiveApplied(node.id, query.origin, query.announced, node.watermark?.applied ?? null) ?? 0;
      lowest = lowest === null ? applied : Math.min(lowest, applied);
    }
  }
  return lowest;
}

function entry(
  type: InfoType,
  message: string,
  timestamps: ReadonlyArray<Date | null>,
  data: Record<string, unknown>,
): InfoEntry {
  return {
    IsError: type === 'Error',
    Type: type,
    Message: message,
    Data: JSON.stringify(data),
    Timestamps: newestFirst(timestamps),
  };
}

/** Deduplicated (same instant once), newest first, at most MAX_TIMESTAMPS; unknown times are left out. */
export function newestFirst(timestamps: ReadonlyArray<Date | null>): string[] {
  if (timestamps.length === 1) {
    const only = timestamps[0];
    return only === null || Number.isNaN(only.getTime()) ? [] : [isoOf(only.getTime())];
  }
  const unique = new Set<number>();
  for (const timestamp of timestamps) {
    if (timestamp !== null && !Number.isNaN(timestamp.getTime())) unique.add(timestamp.getTime());
  }
  return [...unique]
    .sort((a, b) => b - a)
    .slice(0, MAX_TIMESTAMPS)
    .map(isoOf);
}

function newestOf(timestamps: ReadonlyArray<Date | null>): Date | null {
  let newest: Date | null = null;
  for (const timestamp of timestamps)
    if (timestamp !== null && (newest === null || timestamp.getTime() > newest.getTime())) newest = timestamp;
  return newest;
}

// Formatting instants dominates the cost of a 2,000-node answer, and the same instant recurs (a node's apply time
// in Data and Timestamps, its server's roll-ups, the change set's creation time on every node): remember them.
const ISO_CACHE = new Map<number, string>();
const ISO_CACHE_LIMIT = 100_000;

function isoOf(ms: number): string {
  let text = ISO_CACHE.get(ms);
  if (text === undefined) {
    if (ISO_CACHE.size >= ISO_CACHE_LIMIT) ISO_CACHE.clear();
    text = new Date(ms).toISOString();
    ISO_CACHE.set(ms, text);
  }
  return text;
}

function iso(date: Date | null): string | null {
  return date === null ? null : isoOf(date.getTime());
}

function seconds(ms: number): number {
  return Math.round(ms) / 1000;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** Code-unit order, so the answer's order does not depend on a database's collation. */
function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
