import { Column, Entity, Index, PrimaryColumn, PrimaryGeneratedColumn, type ValueTransformer } from 'typeorm';

/** PostgreSQL returns bigint as text; epoch milliseconds stay below 2^53. */
const epochMs: ValueTransformer = {
  to: (value: unknown) => value,
  from: (value: unknown) => (value === null || value === undefined ? value : Number(value)),
};

export type JobState = 'queued' | 'running' | 'failed' | 'dead';
export const JOB_STATES: readonly JobState[] = ['queued', 'running', 'failed', 'dead'];

/**
 * One piece of accepted work that finishes later (any instance may finish it). `queued`: waiting for its
 * first attempt; `running`: claimed by `locked_by` until `locked_until` (renewed while it runs); `failed`: an
 * attempt failed and another is due at `run_at`; `dead`: gave up, kept with its last error for an operator
 * (`jobs:retry`). A finished job is deleted. Jobs sharing a `queue_key` run one at a time, oldest first.
 */
@Entity({ name: 'jobs' })
@Index('IX_jobs_state_run_at', ['state', 'runAt'])
@Index('IX_jobs_queue_key_id', ['queueKey', 'id'])
@Index('UQ_jobs_unique_key', ['uniqueKey'], { unique: true })
export class Job {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id!: number;

  @Column({ type: 'varchar', length: 100 })
  kind!: string;

  @Column({ name: 'queue_key', type: 'varchar', length: 400, nullable: true })
  queueKey!: string | null;

  @Column({ name: 'unique_key', type: 'varchar', length: 400, nullable: true })
  uniqueKey!: string | null;

  /** JSON text. */
  @Column({ type: 'text' })
  payload!: string;

  @Column({ type: 'varchar', length: 16 })
  state!: JobState;

  @Column({ type: 'integer', default: 0 })
  attempts!: number;

  @Column({ name: 'run_at', type: 'bigint', transformer: epochMs })
  runAt!: number;

  @Column({ name: 'locked_by', type: 'varchar', length: 200, nullable: true })
  lockedBy!: string | null;

  @Column({ name: 'locked_until', type: 'bigint', nullable: true, transformer: epochMs })
  lockedUntil!: number | null;

  @Column({ name: 'last_error', type: 'text', nullable: true })
  lastError!: string | null;

  @Column({ name: 'correlation_id', type: 'varchar', length: 128, nullable: true })
  correlationId!: string | null;

  @Column({ name: 'created_at', type: 'bigint', transformer: epochMs })
  createdAt!: number;

  @Column({ name: 'updated_at', type: 'bigint', transformer: epochMs })
  updatedAt!: number;
}

/** The shared rate-limit store's table (rate-limiter-flexible's PostgreSQL layout), for RATE_LIMIT_STORE=database. */
@Entity({ name: 'rate_limits' })
export class RateLimitRow {
  @PrimaryColumn({ type: 'varchar', length: 255 })
  key!: string;

  @Column({ type: 'integer', default: 0 })
  points!: number;

  @Column({ type: 'bigint', nullable: true, transformer: epochMs })
  expire!: number | null;
}
