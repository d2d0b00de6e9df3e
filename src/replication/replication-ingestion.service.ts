import { Injectable } from '@nestjs/common';
import type {
  ChangeSetCreatedRequest,
  HeartbeatRequest,
  ReportedErrorDto,
  ReportRequest,
} from './dto/agent.dto.js';
import { ReplicationNotifier } from './replication.notifier.js';
import { ReplicationStore, type ReportedError } from './replication.store.js';

export interface IngestionOutcome {
  code: 'Created' | 'Unchanged' | 'Advanced' | 'Recorded';
  message: string;
}

/** The agent side of replication diagnostics: every call is idempotent and safe to retry in any order. */
@Injectable()
export class ReplicationIngestionService {
  constructor(
    private readonly store: ReplicationStore,
    private readonly notifier: ReplicationNotifier,
  ) {}

  async changeSetCreated(body: ChangeSetCreatedRequest): Promise<IngestionOutcome> {
    const created = await this.store.recordChangeSet(
      {
        collection: body.Collection,
        origin: body.Node,
        changeSet: body.ChangeSet,
        createdAt: new Date(body.CreatedAt),
      },
      this.notifier.payload(body.Collection, body.Node),
    );
    this.notifier.publish(body.Collection, body.Node);
    const subject = `Change set ${body.ChangeSet} of origin "${body.Node}" in "${body.Collection}"`;
    return created
      ? { code: 'Created', message: `${subject} recorded.` }
      : { code: 'Unchanged', message: `${subject} was already recorded; its first CreatedAt is kept.` };
  }

  async report(body: ReportRequest): Promise<IngestionOutcome> {
    const errors: ReportedError[] = uniqueErrors(body.Errors ?? []);
    const advanced = await this.store.recordReport(
      {
        server: body.Server,
        node: body.Node,
        collection: body.Collection,
        origin: body.Origin,
        applied: body.AppliedChangeSet,
        appliedAt: new Date(body.AppliedAt),
        errors,
      },
      new Date(),
      this.notifier.payload(body.Collection, body.Origin),
    );
    this.notifier.publish(body.Collection, body.Origin);
    const subject = `Watermark of node "${body.Node}" for origin "${body.Origin}" in "${body.Collection}"`;
    const recordedErrors = errors.length === 0 ? '' : ` ${errors.length} error(s) recorded.`;
    return advanced
      ? { code: 'Advanced', message: `${subject} moved to ${body.AppliedChangeSet}.${recordedErrors}` }
      : {
          code: 'Unchanged',
          message: `${subject} is already at or beyond ${body.AppliedChangeSet}; watermarks never move back.${recordedErrors}`,
        };
  }

  async heartbeat(body: HeartbeatRequest): Promise<IngestionOutcome> {
    await this.store.recordHeartbeat(
      {
        server: body.Server,
        node: body.Node,
        at: new Date(body.At),
        agentVersion: body.AgentVersion ?? null,
      },
      new Date(),
    );
    return {
      code: 'Recorded',
      message: `Heartbeat of node "${body.Node}" on server "${body.Server}" recorded.`,
    };
  }
}

/** The same failure listed twice in one report is one occurrence (the unique index would also drop it). */
function uniqueErrors(errors: readonly ReportedErrorDto[]): ReportedError[] {
  const seen = new Map<string, ReportedError>();
  for (const error of errors) {
    const changeSet = error.ChangeSet ?? null;
    const key = JSON.stringify([error.Code, changeSet]);
    if (!seen.has(key))
      seen.set(key, { code: error.Code, message: error.Message, changeSet, data: error.Data ?? null });
  }
  return [...seen.values()];
}
