// The jobs table's SQL (src/jobs/): one statement per state change, the same text on SQLite and PostgreSQL
// (src/database/portable-sql.ts). A claim is a single UPDATE … RETURNING, atomic on both engines;
// on PostgreSQL its candidate rows are taken `FOR UPDATE … SKIP LOCKED`, so instances claiming at once never get
// the same job and never wait for each other.
import type { DataSource, EntityManager } from 'typeorm';
import { portableQuery, type SqlParam, type SqlRow } from '../database/portable-sql.js';
import { JOB_STATES, type JobState } from './entities/job.entity.js';

/**
 * No job is set to run further ahead than this (the longest wait any kind asks for is an hour; a longer one is run
 * at the horizon and may ask again), so a run_at or lease beyond it can only come from a clock that was ahead.
 */
export const JOB_HORIZON_MS = 2 * 3_600_000;

function withinHorizon(runAt: number, now: number): number {
  return Math.min(runAt, now + JOB_HORIZON_MS);
}

export interface JobRecord {
  id: number;
  kind: string;
  queueKey: string | null;
  uniqueKey: string | null;
  payload: unknown;
  state: JobState;
  attempts: number;
  runAt: number;
  lockedBy: string | null;
  lockedUntil: number | null;
  lastError: string | null;
  correlationId: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface NewJob {
  kind: string;
  payload: unknown;
  /** Jobs with the same queue key run one at a time, in the order they were enqueued. */
  queueKey?: string;
  /** At most one job with this key exists (a second enqueue is ignored). */
  uniqueKey?: string;
  runAt?: number;
  correlationId?: string;
}

type Param = SqlParam;
type Row = SqlRow;

/** Longest error text kept on a job. */
const MAX_ERROR_LENGTH = 2_000;

export class JobStore {
  private readonly postgres: boolean;

  constructor(private readonly dataSource: DataSource) {
    this.postgres = dataSource.options.type === 'postgres';
  }

  /** Inserts a job; with `manager`, inside that transaction (the state change that caused the job). */
  async enqueue(job: NewJob, now: number, manager?: EntityManager): Promise<number | undefined> {
    const rows = await this.query(
      `INSERT INTO jobs (kind, queue_key, unique_key, payload, state, attempts, run_at, correlation_id, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 'queued', 0, $5, $6, $7, $7)
       ON CONFLICT (unique_key) DO NOTHING
       RETURNING id`,
      [
        job.kind,
        job.queueKey ?? null,
        job.uniqueKey ?? null,
        JSON.stringify(job.payload ?? null),
        withinHorizon(job.runAt ?? now, now),
        job.correlationId ?? null,
        now,
      ],
      manager,
    );
    return rows.length === 0 ? undefined : Number(rows[0].id);
  }

  /**
   * Claims up to `limit` due jobs of `kinds` for `owner` until `leaseUntil` (or only job `onlyId`). Due: queued or
   * failed with run_at reached, or running with an expired lease (its instance died). A job waits while an older
   * job of its queue key is unfinished. A run_at or lease further ahead than JOB_HORIZON_MS was written by a clock
   * ahead of this one (this instance's before a step back, or a wrong one): due now rather than days from now.
   */
  async claim(
    owner: string,
    kinds: readonly string[],
    now: number,
    leaseUntil: number,
    limit: number,
    onlyId?: number,
  ): Promise<JobRecord[]> {
    if (kinds.length === 0 || limit <= 0) return [];
    const params: Param[] = [
      owner,
      leaseUntil,
      now,
      limit,
      now + JOB_HORIZON_MS,
      leaseUntil + JOB_HORIZON_MS,
    ];
    const kindList = kinds.map((kind) => {
      params.push(kind);
      return `$${params.length}`;
    });
    let only = '';
    if (onlyId !== undefined) {
      params.push(onlyId);
      only = `AND j.id = $${params.length}`;
    }
    const rows = await this.query(
      `UPDATE jobs SET state = 'running', locked_by = $1, locked_until = $2, attempts = attempts + 1, updated_at = $3
       WHERE id IN (
         SELECT j.id FROM jobs j
         WHERE ((j.state IN ('queued', 'failed') AND (j.run_at <= $3 OR j.run_at > $5))
             OR (j.state = 'running' AND (j.locked_until < $3 OR j.locked_until > $6)))
           AND j.kind IN (${kindList.join(', ')}) ${only}
           AND NOT EXISTS (
             SELECT 1 FROM jobs e
             WHERE e.queue_key = j.queue_key AND e.id < j.id AND e.state IN ('queued', 'running', 'failed'))
         ORDER BY j.run_at, j.id
         LIMIT $4
         ${this.postgres ? 'FOR UPDATE OF j SKIP LOCKED' : ''})
       RETURNING *`,
      params,
    );
    return rows.map(toRecord).sort((a, b) => a.runAt - b.runAt || a.id - b.id);
  }

  /** Done: the job goes. */
  async complete(id: number, owner: string): Promise<void> {
    await this.query(`DELETE FROM jobs WHERE id = $1 AND locked_by = $2`, [id, owner]);
  }

  /** An attempt failed: try again at `runAt`, or (`dead`) give up, keeping the error for an operator. */
  async fail(
    id: number,
    owner: string,
    state: 'failed' | 'dead',
    runAt: number,
    error: string,
    now: number,
  ): Promise<void> {
    await this.query(
      `UPDATE jobs SET state = $1, run_at = $2, last_error = $3, locked_by = NULL, locked_until = NULL, updated_at = $4
       WHERE id = $5 AND locked_by = $6`,
      [state, withinHorizon(runAt, now), error.slice(0, MAX_ERROR_LENGTH), now, id, owner],
    );
  }

  /** A periodic job ran: it waits for its next turn with a clean slate. */
  async reschedule(id: number, owner: string, runAt: number, now: number): Promise<void> {
    await this.query(
      `UPDATE jobs SET state = 'queued', run_at = $1, attempts = 0, last_error = NULL, locked_by = NULL,
         locked_until = NULL, updated_at = $2
       WHERE id = $3 AND locked_by = $4`,
      [withinHorizon(runAt, now), now, id, owner],
    );
  }

  async saveProgress(id: number, owner: string, payload: unknown, now: number): Promise<void> {
    await this.query(`UPDATE jobs SET payload = $1, updated_at = $2 WHERE id = $3 AND locked_by = $4`, [
      JSON.stringify(payload ?? null),
      now,
      id,
      owner,
    ]);
  }

  /** Keeps the owner's running jobs claimed. */
  async renewLeases(owner: string, leaseUntil: number): Promise<void> {
    await this.query(`UPDATE jobs SET locked_until = $1 WHERE locked_by = $2 AND state = 'running'`, [
      leaseUntil,
      owner,
    ]);
  }

  /**
   * Shutdown: the owner's unfinished jobs go back for any instance to take at once; the interrupted attempt does
   * not count.
   */
  async release(owner: string, ids: readonly number[], now: number): Promise<void> {
    for (const id of ids) {
      await this.query(
        `UPDATE jobs SET state = CASE WHEN attempts > 1 THEN 'failed' ELSE 'queued' END,
           attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END,
           run_at = $1, locked_by = NULL, locked_until = NULL, updated_at = $1
         WHERE id = $2 AND locked_by = $3 AND state = 'running'`,
        [now, id, owner],
      );
    }
  }

  /** An operator's retry (jobs:retry): a dead or failed job is due now with its attempts reset. */
  async retry(id: number, now: number): Promise<boolean> {
    const rows = await this.query(
      `UPDATE jobs SET state = 'queued', attempts = 0, run_at = $1, updated_at = $1
       WHERE id = $2 AND state IN ('dead', 'failed')
       RETURNING id`,
      [now, id],
    );
    return rows.length > 0;
  }

  /** Drops the waiting jobs of a queue key (e.g. an uninstalled app's follow-ups). */
  async discard(queueKey: string, manager?: EntityManager): Promise<void> {
    await this.query(
      `DELETE FROM jobs WHERE queue_key = $1 AND state IN ('queued', 'failed')`,
      [queueKey],
      manager,
    );
  }

  async counts(): Promise<Array<{ kind: string; state: JobState; count: number }>> {
    const rows = await this.query(`SELECT kind, state, COUNT(*) AS n FROM jobs GROUP BY kind, state`, []);
    return rows
      .filter((row) => (JOB_STATES as readonly unknown[]).includes(row.state))
      .map((row) => ({ kind: String(row.kind), state: row.state as JobState, count: Number(row.n) }));
  }

  async list(filter: { state?: JobState; kind?: string; limit: number }): Promise<JobRecord[]> {
    const params: Param[] = [];
    const where: string[] = [];
    if (filter.state !== undefined) {
      params.push(filter.state);
      where.push(`state = $${params.length}`);
    }
    if (filter.kind !== undefined) {
      params.push(filter.kind);
      where.push(`kind = $${params.length}`);
    }
    params.push(filter.limit);
    const rows = await this.query(
      `SELECT * FROM jobs ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id LIMIT $${params.length}`,
      params,
    );
    return rows.map(toRecord);
  }

  async find(id: number): Promise<JobRecord | undefined> {
    const rows = await this.query(`SELECT * FROM jobs WHERE id = $1`, [id]);
    return rows.length === 0 ? undefined : toRecord(rows[0]);
  }

  private query(sql: string, params: readonly Param[], manager?: EntityManager): Promise<Row[]> {
    return portableQuery(this.dataSource, sql, params, manager);
  }
}

function toRecord(row: Row): JobRecord {
  const payloadText = row.payload;
  let payload: unknown = null;
  if (typeof payloadText === 'string') {
    try {
      payload = JSON.parse(payloadText);
    } catch {
      payload = null;
    }
  }
  const optionalNumber = (value: unknown) => (value === null || value === undefined ? null : Number(value));
  const optionalText = (value: unknown) =>
    typeof value === 'string' ? value : typeof value === 'number' ? String(value) : null;
  return {
    id: Number(row.id),
    kind: String(row.kind),
    queueKey: optionalText(row.queue_key),
    uniqueKey: optionalText(row.unique_key),
    payload,
    state: row.state as JobState,
    attempts: Number(row.attempts),
    runAt: Number(row.run_at),
    lockedBy: optionalText(row.locked_by),
    lockedUntil: optionalNumber(row.locked_until),
    lastError: optionalText(row.last_error),
    correlationId: optionalText(row.correlation_id),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}
