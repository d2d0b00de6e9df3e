// The audit trail's fold (migration 1763780001800). A change's transaction writes its event into
// `audit_events_tail`, which has only its primary key: one B-tree entry per commit instead of seven. Every instance
// moves the tail into `audit_events` (and its six filter indexes) every FOLD_INTERVAL_MS, in batches of FOLD_BATCH,
// keeping each event's id, so an event's index entries are written with many others' instead of in its write's
// commit. The reader (audit-events.reader.ts) reads both tables in one statement, so an event is visible to every
// filter from its commit on, folded or not, and never twice.
//
// Safe on a fleet: on PostgreSQL one statement deletes a batch from the tail (rows another instance's fold has
// locked are skipped) and inserts what it deleted, so an event moves exactly once; on SQLite one write transaction
// does the same. Safe after kill -9: the tail is a table, and a fold is one transaction, so an unfolded tail is
// folded by the next fold after the restart, and until then the reader covers it.
import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import { DataSource, type EntityManager } from 'typeorm';
import { ROOT_LOGGER } from '../core/tokens.js';
import { PeriodicFold } from '../database/counter-deltas.js';
import { inTransaction } from '../database/transaction.js';
import { allowAuditMaintenance } from './audit-retention.js';
import { AUDIT_EVENTS, AUDIT_TAIL } from './audit-trail.js';

/** Events per fold transaction: a ~10–50 ms transaction that never holds SQLite's writer lock for long. */
export const FOLD_BATCH = 1_000;

@Injectable()
export class AuditFold implements OnModuleInit, OnModuleDestroy {
  readonly folder: PeriodicFold;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.folder = new PeriodicFold(
      dataSource,
      () => this.foldAll(),
      (error) => logger.warn({ err: error }, 'audit: folding the trail tail failed'),
    );
  }

  onModuleInit(): void {
    this.folder.start();
  }

  /** No last fold: the tail is durable, and the next start (of any instance) folds it. */
  async onModuleDestroy(): Promise<void> {
    await this.folder.stop();
  }

  /** Moves the whole tail, batch by batch; answers how many events it moved. */
  private async foldAll(): Promise<number> {
    // An empty tail opens no transaction: on SQLite an empty write transaction would take the writer's lock every
    // second, and its COMMIT would count as a write that succeeded (DatabaseHealth), ending a full-storage state
    // that nothing had shown to be over (the full-disk fault spec saw the metric drop to 0 while still full).
    const [any] = await this.dataSource.query<unknown[]>(`SELECT 1 AS one FROM ${AUDIT_TAIL} LIMIT 1`);
    if (any === undefined) return 0;
    let total = 0;
    for (let moved = FOLD_BATCH; moved === FOLD_BATCH; total += moved) {
      // SQLite's driver is synchronous: a turn of the event loop between batches keeps requests answered.
      if (total > 0) await new Promise((resolve) => setImmediate(resolve));
      moved = await inTransaction(this.dataSource, (manager) => this.foldBatch(manager));
    }
    return total;
  }

  private async foldBatch(manager: EntityManager): Promise<number> {
    if (this.dataSource.options.type === 'postgres') {
      await allowAuditMaintenance(manager);
      const [row] = await manager.query<Array<{ folded: number }>>(
        `WITH moved AS (DELETE FROM ${AUDIT_TAIL} WHERE id IN (
                          SELECT id FROM ${AUDIT_TAIL} ORDER BY id LIMIT ${FOLD_BATCH} FOR UPDATE SKIP LOCKED)
                        RETURNING *),
              folded AS (INSERT INTO ${AUDIT_EVENTS} SELECT * FROM moved RETURNING 1)
         SELECT COUNT(*)::int AS folded FROM folded`,
      );
      return row?.folded ?? 0;
    }
    const [row] = await manager.query<Array<{ upto: number | null; n: number }>>(
      `SELECT MAX(id) AS upto, COUNT(*) AS n FROM (SELECT id FROM ${AUDIT_TAIL} ORDER BY id LIMIT ${FOLD_BATCH})`,
    );
    if (row === undefined || row.upto === null) return 0;
    await manager.query(`INSERT INTO ${AUDIT_EVENTS} SELECT * FROM ${AUDIT_TAIL} WHERE id <= ?`, [row.upto]);
    await manager.query(`DELETE FROM ${AUDIT_TAIL} WHERE id <= ?`, [row.upto]);
    return row.n;
  }
}
