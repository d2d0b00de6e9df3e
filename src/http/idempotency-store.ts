// The shared store behind Idempotency-Key (src/http/idempotency.ts): the `idempotency_keys` table, read before a
// creating POST runs, completed with its answer, and pruned after IDEMPOTENCY_KEEP_MS by a periodic job that one
// instance of the fleet runs at a time (src/jobs/). On PostgreSQL every instance sees every key.
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { JobsService } from '../jobs/jobs.service.js';
import { IdempotencyKeyRecord } from './entities/idempotency-key.entity.js';

export const IDEMPOTENCY_RETENTION_JOB = 'idempotency.retention';
/** How long a key is remembered: the draft asks for at least 24 h (clients retry within hours, not days). */
export const IDEMPOTENCY_KEEP_MS = 24 * 3_600_000;
const RETENTION_EVERY_MS = 3_600_000;
const RETENTION_BATCH = 1_000;

export interface RecordId {
  caller: string;
  route: string;
  key: string;
}

/** What a replay repeats of the first answer. */
export interface StoredAnswer {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

@Injectable()
export class IdempotencyStore implements OnModuleInit {
  constructor(
    @InjectRepository(IdempotencyKeyRecord) private readonly records: Repository<IdempotencyKeyRecord>,
    private readonly jobs: JobsService,
  ) {}

  onModuleInit(): void {
    this.jobs.register({
      kind: IDEMPOTENCY_RETENTION_JOB,
      maxAttempts: 3,
      retryDelayMs: () => 60_000,
      handle: async ({ log, signal }) => {
        const cutoff = new Date(Date.now() - IDEMPOTENCY_KEEP_MS);
        const deleted = await this.prune(cutoff, () => signal.aborted);
        if (deleted > 0) log.info({ deleted, cutoff }, 'idempotency retention: old keys deleted');
        return { rescheduleInMs: RETENTION_EVERY_MS };
      },
    });
    this.jobs.schedulePeriodic(IDEMPOTENCY_RETENTION_JOB, RETENTION_EVERY_MS);
  }

  find(id: RecordId): Promise<IdempotencyKeyRecord | null> {
    return this.records.findOneBy({ caller: id.caller, route: id.route, key: id.key });
  }

  /** Stores the answer of a request whose record committed `pending`; a record rolled back matches nothing. */
  async complete(id: RecordId, answer: StoredAnswer): Promise<void> {
    await this.records.update(
      { caller: id.caller, route: id.route, key: id.key, state: 'pending' },
      {
        state: 'done',
        statusCode: answer.statusCode,
        responseHeaders: JSON.stringify(answer.headers),
        responseBody: answer.body,
        completedAt: new Date(),
      },
    );
  }

  /** Deletes the keys created before `cutoff`, batch by batch; answers how many went. */
  async prune(cutoff: Date, stop: () => boolean = () => false): Promise<number> {
    let total = 0;
    for (let deleted = RETENTION_BATCH; deleted === RETENTION_BATCH && !stop();) {
      const result = await this.records
        .createQueryBuilder()
        .delete()
        .where(
          `(caller, route, idempotency_key) IN (SELECT caller, route, idempotency_key FROM idempotency_keys
             WHERE created_at < :cutoff LIMIT ${RETENTION_BATCH})`,
          { cutoff },
        )
        .execute();
      deleted = result.affected ?? 0;
      total += deleted;
    }
    return total;
  }
}

/** The answer stored on a `done` record. */
export function storedAnswerOf(record: IdempotencyKeyRecord): StoredAnswer | undefined {
  if (record.state !== 'done' || record.statusCode === null || record.responseBody === null) return undefined;
  return {
    statusCode: record.statusCode,
    headers: JSON.parse(record.responseHeaders ?? '{}') as Record<string, string>,
    body: record.responseBody,
  };
}
