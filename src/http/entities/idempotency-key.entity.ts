import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { InstantColumn } from '../../database/portable-columns.js';

export type IdempotencyState = 'pending' | 'done';

/**
 * One `Idempotency-Key` a caller sent to a creating POST (src/http/idempotency.ts). Claimed `pending` and made
 * `done` with the answer (status, the headers that matter, the body) in the same transaction as the resource it
 * created, so a committed resource always has its answer and a repeat gets that answer again. A committed `pending`
 * record was left by an earlier version, which stored the answer after the commit (decideKey). Kept at least 24 h,
 * then deleted by the retention job.
 */
@Entity({ name: 'idempotency_keys' })
@Index('IX_idempotency_keys_created_at', ['createdAt'])
export class IdempotencyKeyRecord {
  /** The verified API key's id (`Principal.keyId`): keys are the caller's own. */
  @PrimaryColumn({ type: 'varchar', length: 100 })
  caller!: string;

  /** Method and route pattern, e.g. `POST /api/v1/Schedule`. */
  @PrimaryColumn({ type: 'varchar', length: 200 })
  route!: string;

  @PrimaryColumn({ name: 'idempotency_key', type: 'varchar', length: 255 })
  key!: string;

  /** SHA-256 (hex) of the request: method, route, query and body. */
  @Column({ type: 'varchar', length: 64 })
  fingerprint!: string;

  @Column({ type: 'varchar', length: 16 })
  state!: IdempotencyState;

  @Column({ name: 'status_code', type: 'integer', nullable: true })
  statusCode!: number | null;

  /** JSON object of the answer's headers that a replay repeats (content-type, location, etag). */
  @Column({ name: 'response_headers', type: 'text', nullable: true })
  responseHeaders!: string | null;

  @Column({ name: 'response_body', type: 'text', nullable: true })
  responseBody!: string | null;

  @InstantColumn({ name: 'created_at' })
  createdAt!: Date;

  @InstantColumn({ name: 'completed_at', nullable: true })
  completedAt!: Date | null;
}
