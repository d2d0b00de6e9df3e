// The shared store behind Idempotency-Key (src/http/idempotency.ts): the `idempotency_keys` table, read before a
// creating POST runs (the claim and its answer are written in the POST's own transaction), the answers' storage
// format (serialiseAnswer), and pruned after IDEMPOTENCY_KEEP_MS (by the database's clock) by a periodic job that one
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

/** Headers of the first answer that a replay repeats. */
const KEPT_HEADERS = ['content-type', 'location', 'etag', 'content-location'] as const;
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

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
        const deleted = await this.prune(IDEMPOTENCY_KEEP_MS, () => signal.aborted);
        if (deleted > 0)
          log.info({ deleted, keptMs: IDEMPOTENCY_KEEP_MS }, 'idempotency retention: old keys deleted');
        return { rescheduleInMs: RETENTION_EVERY_MS };
      },
    });
    this.jobs.schedulePeriodic(IDEMPOTENCY_RETENTION_JOB, RETENTION_EVERY_MS);
  }

  find(id: RecordId): Promise<IdempotencyKeyRecord | null> {
    return this.records.findOneBy({ caller: id.caller, route: id.route, key: id.key });
  }

  /**
   * Deletes the keys claimed more than `keepMs` ago by the database's clock, batch by batch; answers how many went.
   * Both ends of the age are the database's (the claim is stamped with it, see databaseNow), so a step of an
   * instance's clock neither deletes a key early nor keeps it for days.
   */
  async prune(keepMs: number, stop: () => boolean = () => false): Promise<number> {
    const dialect = this.records.manager.connection.options.type;
    const seconds = Math.floor(keepMs / 1000);
    const cutoff =
      dialect === 'postgres'
        ? `CURRENT_TIMESTAMP - make_interval(secs => ${seconds})`
        : `strftime('%Y-%m-%d %H:%M:%f', 'now', '-${seconds} seconds')`;
    let total = 0;
    for (let deleted = RETENTION_BATCH; deleted === RETENTION_BATCH && !stop();) {
      const result = await this.records
        .createQueryBuilder()
        .delete()
        .where(
          `(caller, route, idempotency_key) IN (SELECT caller, route, idempotency_key FROM idempotency_keys
             WHERE created_at < ${cutoff} LIMIT ${RETENTION_BATCH})`,
        )
        .execute();
      deleted = result.affected ?? 0;
      total += deleted;
    }
    return total;
  }
}

/**
 * The database's clock as SQL, in the form its instant columns hold (SQLite: TypeORM's UTC text with milliseconds):
 * what an Idempotency-Key's claim is stamped with, so its age is measured on one clock whichever instance claimed it.
 */
export function databaseNow(dialect: string): string {
  return dialect === 'postgres' ? 'CURRENT_TIMESTAMP' : "strftime('%Y-%m-%d %H:%M:%f', 'now')";
}

/**
 * The one place an answer becomes what is stored (and sent): status, the kept headers, the body as JSON text.
 * A bound on stored answers belongs here.
 */
export function serialiseAnswer(answer: {
  statusCode: number;
  headers?: Record<string, string>;
  body: unknown;
}): StoredAnswer {
  const headers: Record<string, string> = { 'content-type': JSON_CONTENT_TYPE };
  for (const name of KEPT_HEADERS) {
    const value = answer.headers?.[name];
    if (value !== undefined) headers[name] = value;
  }
  return { statusCode: answer.statusCode, headers, body: JSON.stringify(answer.body) };
}

/**
 * The largest answer body an Idempotency-Key keeps whole (an import once answered 277 MiB, stored for
 * 24 h). Every route's answer is bounded by its own caps (an import lists at most 20,000 schedules and 100 skipped
 * components), so this is a backstop: a larger answer is kept as a reference — its status and kept headers
 * (`Location`) with a small envelope saying where the rest is — never as the body itself.
 */
export const MAX_STORED_ANSWER_BYTES = 4 * 1024 * 1024;

/** The record's columns that hold an answer: the answer itself, or its reference when it is over the bound. */
export function storedColumnsOf(
  answer: StoredAnswer,
  maxBytes = MAX_STORED_ANSWER_BYTES,
): Pick<IdempotencyKeyRecord, 'statusCode' | 'responseHeaders' | 'responseBody'> {
  const bytes = Buffer.byteLength(answer.body);
  const body =
    bytes <= maxBytes
      ? answer.body
      : JSON.stringify({
          Succeeded: true,
          Message:
            `Carried out; its answer (${bytes.toLocaleString('en')} bytes) was larger than an Idempotency-Key ` +
            'keeps, so this replay gives its status and Location only: read what it created with a GET.',
          Code: 'AnswerNotKept',
        });
  return {
    statusCode: answer.statusCode,
    responseHeaders: JSON.stringify(answer.headers),
    responseBody: body,
  };
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
