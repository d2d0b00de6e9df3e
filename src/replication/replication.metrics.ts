// Prometheus gauges of replication lag, on the app's registry (GET /metrics): per live node and (collection,
// origin) its lag in change sets and seconds, and per (collection, origin) the safe-to-prune point. Computed when
// scraped (three queries over all collections, shared by the three gauges), so they are current without any
// background job and cost nothing between scrapes.
import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { Gauge } from 'prom-client';
import { ROOT_LOGGER } from '../core/core.module.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { ReplicationStore } from './replication.store.js';
import { computeReplicationGauges, type ReplicationGauges } from './state/replication-gauges.js';

/** The three gauges are collected one after the other in a scrape: they share one load. */
const SNAPSHOT_TTL_MS = 1_000;

interface SnapshotGauges extends ReplicationGauges {
  silence: Array<{ serverId: string; nodeId: string; seconds: number }>;
}

@Injectable()
export class ReplicationMetrics {
  private snapshot: { at: number; gauges: Promise<SnapshotGauges | undefined> } | undefined;

  constructor(
    metrics: MetricsService,
    private readonly store: ReplicationStore,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
  ) {
    const registers = [metrics.registry];
    const nodeLabels = ['collection', 'origin', 'server', 'node'] as const;
    const lagChangeSets = new Gauge({
      name: 'replication_node_lag_change_sets',
      help: 'Change sets a live node lacks behind the latest of an origin, per collection',
      labelNames: nodeLabels,
      registers,
      collect: async () => {
        lagChangeSets.reset();
        for (const lag of (await this.gauges())?.lags ?? []) lagChangeSets.set(labels(lag), lag.changeSets);
      },
    });
    const lagSeconds = new Gauge({
      name: 'replication_node_lag_seconds',
      help: 'Age of the oldest change set a live node lacks (0 when caught up; absent when unknown)',
      labelNames: nodeLabels,
      registers,
      collect: async () => {
        lagSeconds.reset();
        for (const lag of (await this.gauges())?.lags ?? [])
          if (lag.seconds !== null) lagSeconds.set(labels(lag), lag.seconds);
      },
    });
    const silent = new Gauge({
      name: 'replication_node_silent_seconds',
      help:
        'Seconds since a live node last showed a sign of life (heartbeat or report); +Inf when it never did. ' +
        'Over REPLICATION_STALE_SECONDS the node is Stale in changeSetState',
      labelNames: ['server', 'node'] as const,
      registers,
      collect: async () => {
        silent.reset();
        for (const node of (await this.gauges())?.silence ?? [])
          silent.set({ server: node.serverId, node: node.nodeId }, node.seconds);
      },
    });
    const safeToPrune = new Gauge({
      name: 'replication_safe_to_prune_change_set',
      help: 'Highest change set of an origin that every live node has applied (lowest watermark), per collection',
      labelNames: ['collection', 'origin'] as const,
      registers,
      collect: async () => {
        safeToPrune.reset();
        for (const point of (await this.gauges())?.safeToPrune ?? [])
          safeToPrune.set({ collection: point.collection, origin: point.origin }, point.changeSet);
      },
    });
  }

  private gauges(): Promise<SnapshotGauges | undefined> {
    const now = Date.now();
    if (this.snapshot && now - this.snapshot.at < SNAPSHOT_TTL_MS) return this.snapshot.gauges;
    const gauges = this.store.loadGaugeInputs().then(
      ({ pairs, nodes, watermarks }) => ({
        ...computeReplicationGauges(pairs, nodes, watermarks, new Date(now)),
        silence: nodes.map((node) => ({
          serverId: node.serverId,
          nodeId: node.id,
          seconds:
            node.lastSeenAt === undefined || node.lastSeenAt === null
              ? Number.POSITIVE_INFINITY
              : Math.max(0, (now - node.lastSeenAt.getTime()) / 1000),
        })),
      }),
      (error: unknown) => {
        // A scrape must not fail because of these gauges; they are simply absent this time.
        this.logger.warn(
          { err: error instanceof Error ? error.message : String(error) },
          'Replication gauges not available',
        );
        return undefined;
      },
    );
    this.snapshot = { at: now, gauges };
    return gauges;
  }
}

function labels(lag: { collection: string; origin: string; serverId: string; nodeId: string }) {
  return { collection: lag.collection, origin: lag.origin, server: lag.serverId, node: lag.nodeId };
}
