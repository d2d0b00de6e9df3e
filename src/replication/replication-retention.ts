// Retention (REPLICATION_RETENTION_DAYS): change sets and node reports (apply history, reported errors) older
// than the cutoff are deleted by a periodic job that one instance of the fleet runs at a time (src/jobs/). Rows go in
// batches of RETENTION_BATCH per statement, so no delete holds a lock for long. The newest change set of every
// (collection, origin) is kept whatever its age, so "Increment 0 = latest" still resolves for a quiet collection;
// watermarks (each node's current state) are never pruned.
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config.js';
import { JobsService } from '../jobs/jobs.service.js';
import { ReplicationStore } from './replication.store.js';

export const REPLICATION_RETENTION_JOB = 'replication.retention';
const RETENTION_BATCH = 1_000;
const RETENTION_EVERY_MS = 3_600_000;
const DAY_MS = 86_400_000;

@Injectable()
export class ReplicationRetention implements OnModuleInit {
  constructor(
    private readonly store: ReplicationStore,
    private readonly jobs: JobsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.jobs.register({
      kind: REPLICATION_RETENTION_JOB,
      maxAttempts: 3,
      retryDelayMs: () => 60_000,
      handle: async ({ log, signal }) => {
        const cutoff = new Date(Date.now() - this.config.retention.replicationDays * DAY_MS);
        const deleted = await this.prune(cutoff, () => signal.aborted);
        if (deleted > 0)
          log.info({ deleted, cutoff }, 'replication retention: old change sets and reports deleted');
        return { rescheduleInMs: RETENTION_EVERY_MS };
      },
    });
    this.jobs.schedulePeriodic(REPLICATION_RETENTION_JOB, RETENTION_EVERY_MS);
  }

  /** Deletes what is older than `cutoff`, batch by batch; answers the number of rows deleted. */
  async prune(cutoff: Date, stop: () => boolean = () => false): Promise<number> {
    const at = this.store.sql.instant(cutoff);
    const statements = [
      `DELETE FROM replication_change_sets WHERE (collection, origin, number) IN (
         SELECT c.collection, c.origin, c.number FROM replication_change_sets c
         WHERE c.created_at < ? AND c.number < (
           SELECT MAX(m.number) FROM replication_change_sets m WHERE m.collection = c.collection AND m.origin = c.origin)
         LIMIT ${RETENTION_BATCH})`,
      `DELETE FROM replication_applies WHERE (collection, origin, node_id, applied) IN (
         SELECT collection, origin, node_id, applied FROM replication_applies WHERE applied_at < ? LIMIT ${RETENTION_BATCH})`,
      `DELETE FROM replication_errors WHERE id IN (
         SELECT id FROM replication_errors WHERE received_at < ? LIMIT ${RETENTION_BATCH})`,
    ];
    let total = 0;
    for (const sql of statements) {
      for (let deleted = RETENTION_BATCH; deleted === RETENTION_BATCH && !stop();) {
        [deleted] = await this.store.sql.transaction([{ sql, params: [at] }]);
        total += deleted;
      }
    }
    return total;
  }
}
