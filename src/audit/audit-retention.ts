// Retention (AUDIT_RETENTION_DAYS, default 365): events older than the cutoff are deleted by a periodic job that one
// instance of the fleet runs at a time (src/jobs/), in batches so no delete holds a lock for long. On PostgreSQL the
// append-only trigger lets a DELETE through only in a transaction that set `platform.audit_maintenance`, which
// this job (and nothing else the service does) sets, transaction-locally.
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/config.js';
import { inTransaction } from '../database/transaction.js';
import { JobsService } from '../jobs/jobs.service.js';
import { AuditEvent } from './entities/audit-event.entity.js';

export const AUDIT_RETENTION_JOB = 'audit.retention';
const RETENTION_BATCH = 1_000;
const RETENTION_EVERY_MS = 3_600_000;
const DAY_MS = 86_400_000;

@Injectable()
export class AuditRetention implements OnModuleInit {
  constructor(
    private readonly dataSource: DataSource,
    private readonly jobs: JobsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.jobs.register({
      kind: AUDIT_RETENTION_JOB,
      maxAttempts: 3,
      retryDelayMs: () => 60_000,
      handle: async ({ log, signal }) => {
        const cutoff = new Date(Date.now() - this.config.retention.auditDays * DAY_MS);
        const deleted = await this.prune(cutoff, () => signal.aborted);
        if (deleted > 0) log.info({ deleted, cutoff }, 'audit retention: old events deleted');
        return { rescheduleInMs: RETENTION_EVERY_MS };
      },
    });
    this.jobs.schedulePeriodic(AUDIT_RETENTION_JOB, RETENTION_EVERY_MS);
  }

  /** Deletes the events that occurred before `cutoff`, batch by batch; answers how many went. */
  async prune(cutoff: Date, stop: () => boolean = () => false): Promise<number> {
    let total = 0;
    for (let deleted = RETENTION_BATCH; deleted === RETENTION_BATCH && !stop();) {
      deleted = await inTransaction(this.dataSource, async (manager) => {
        await allowAuditMaintenance(manager);
        const result = await manager
          .createQueryBuilder()
          .delete()
          .from(AuditEvent)
          .where(
            `id IN (SELECT id FROM audit_events WHERE occurred_at < :cutoff ORDER BY occurred_at LIMIT ${RETENTION_BATCH})`,
            { cutoff },
          )
          .execute();
        return result.affected ?? 0;
      });
      total += deleted;
    }
    return total;
  }
}

/**
 * Lets this transaction delete from (or truncate) audit_events on PostgreSQL: retention, and a bulk copy or restore
 * that replaces the table's content. No-op on SQLite, whose trigger refuses only UPDATE.
 */
export async function allowAuditMaintenance(manager: {
  connection: DataSource;
  query: (sql: string) => Promise<unknown>;
}): Promise<void> {
  if (manager.connection.options.type !== 'postgres') return;
  await manager.query("SELECT set_config('platform.audit_maintenance', 'on', true)");
}
