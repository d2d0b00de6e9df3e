import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config.js';
import {
  DEFAULT_LAG_THRESHOLD_CHANGE_SETS,
  DEFAULT_LAG_THRESHOLD_SECONDS,
  type ChangeSetStateRequest,
  type ChangeSetStateResponse,
} from './dto/change-set-state.dto.js';
import { ReplicationError } from './replication.errors.js';
import { ReplicationNotifier } from './replication.notifier.js';
import { ReplicationStore, type OriginFacts } from './replication.store.js';
import { computeChangeSetState, type ChangeSetState } from './state/change-set-state.js';
import { latestChangeSet, resolveChangeSet } from './state/resolve-change-set.js';

interface Evaluation {
  collection: string;
  origin: string;
  changeSet: number;
  localServerId: string | null;
  staleSeconds: number;
  lagThreshold: { changeSets: number; seconds: number };
}

/** Operation 5: load the facts (a fixed number of queries), diagnose (pure), optionally wait. */
@Injectable()
export class ChangeSetStateService {
  constructor(
    private readonly store: ReplicationStore,
    private readonly notifier: ReplicationNotifier,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async changeSetState(
    request: ChangeSetStateRequest,
    signal?: AbortSignal,
  ): Promise<ChangeSetStateResponse> {
    const collection = request.Collection;
    const origin = request.Node;
    const localServerId = request.LocalOnly ? (this.config.replication.serverId ?? null) : null;
    if (request.LocalOnly && localServerId === null)
      throw ReplicationError.localServerNotConfigured(collection, origin);

    const waitMs = (request.WaitSeconds ?? 0) * 1000;
    // Listen before the first read, so a report committed in between still wakes the wait.
    let woken = false;
    let wake: (() => void) | undefined;
    const unsubscribe =
      waitMs > 0
        ? this.notifier.subscribe(collection, origin, () => {
            woken = true;
            wake?.();
          })
        : undefined;
    const onAbort = (): void => wake?.();
    signal?.addEventListener('abort', onAbort);
    try {
      if (waitMs > 0) await this.notifier.ready();
      const started = performance.now();
      const deadline = started + waitMs;
      const originFacts = await this.store.loadOrigin(collection, origin);
      const resolution = resolveChangeSet(
        request.Increment ?? 0,
        latestChangeSet(originFacts.announced, originFacts.reported),
      );
      if (!resolution.found) throw ReplicationError.changeSetNotFound(collection, origin, resolution.reason);
      const evaluation: Evaluation = {
        collection,
        origin,
        changeSet: resolution.changeSet,
        localServerId,
        staleSeconds: this.config.replication.staleSeconds,
        lagThreshold: {
          changeSets: request.LagThresholdChangeSets ?? DEFAULT_LAG_THRESHOLD_CHANGE_SETS,
          seconds: request.LagThresholdSeconds ?? DEFAULT_LAG_THRESHOLD_SECONDS,
        },
      };
      let state = await this.evaluate(evaluation, originFacts);
      let waitedMs = 0;
      while (!state.fullyReplicated && !signal?.aborted && !this.notifier.closed) {
        const remaining = deadline - performance.now();
        if (remaining <= 0) break;
        if (!woken) {
          // Sleep until a report for this (collection, origin) is committed, the fallback re-check, or the end.
          await new Promise<void>((resolve) => {
            const done = (): void => {
              clearTimeout(timer);
              wake = undefined;
              resolve();
            };
            const timer = setTimeout(done, Math.min(remaining, this.notifier.recheckMs));
            wake = done;
          });
        }
        woken = false;
        if (signal?.aborted || this.notifier.closed) break;
        state = await this.evaluate(evaluation);
        waitedMs = Math.round(performance.now() - started);
      }
      return this.present(evaluation, state, waitMs > 0 ? waitedMs : null);
    } finally {
      unsubscribe?.();
      signal?.removeEventListener('abort', onAbort);
    }
  }

  private async evaluate(evaluation: Evaluation, knownOrigin?: OriginFacts): Promise<ChangeSetState> {
    const { collection, origin, changeSet } = evaluation;
    const originFacts = knownOrigin ?? (await this.store.loadOrigin(collection, origin));
    const facts = await this.store.loadFacts(collection, origin, changeSet);
    return computeChangeSetState(facts.servers, {
      collection,
      origin,
      changeSet,
      latest: latestChangeSet(originFacts.announced, originFacts.reported) ?? changeSet,
      announced: originFacts.announced,
      changeSetCreatedAt: facts.changeSetCreatedAt,
      now: new Date(),
      staleSeconds: evaluation.staleSeconds,
      lagThreshold: evaluation.lagThreshold,
      localServerId: evaluation.localServerId,
    });
  }

  private present(
    evaluation: Evaluation,
    state: ChangeSetState,
    waitedMs: number | null,
  ): ChangeSetStateResponse {
    const waited =
      waitedMs === null || state.fullyReplicated
        ? ''
        : ` Waited ${Math.round(waitedMs / 100) / 10} s; not fully replicated yet.`;
    return {
      Succeeded: true,
      Message: `${state.message}${waited}`,
      Code: null,
      Servers: state.servers,
      Collection: evaluation.collection,
      Node: evaluation.origin,
      ChangeSet: evaluation.changeSet,
      FullyReplicated: state.fullyReplicated,
    };
  }
}
