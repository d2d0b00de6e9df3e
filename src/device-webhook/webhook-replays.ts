// Replay protection of the device webhook: a signed request is valid for ±300 s around its Date, so a
// captured one could be posted again inside that window. Each accepted signature is remembered for 600 s in the
// database (shared by every instance); a repeat gets the reply the first delivery got and changes nothing.
// RSA-SHA256 (PKCS #1 v1.5) signatures are deterministic, so the same bytes signed for the same Date are the same
// signature: that is exactly a replay. The signature alone is remembered, not with its keyId: the keyId is not
// signed, and several keyIds name one key (every `/SmartThings/…` id is the configured key), so a replay with
// another spelling of the keyId is the same signature and still a replay.
import { createHash } from 'node:crypto';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { portableQuery } from '../database/portable-sql.js';
import { JobsService } from '../jobs/jobs.service.js';

/** Longer than the whole window a signature's Date is accepted in (±300 s). */
export const REPLAY_MEMORY_MS = 600_000;
const PRUNE_BATCH = 1_000;
export const SIGNATURES_RETENTION_JOB = 'webhook.signatures-retention';
const PRUNE_EVERY_MS = 600_000;

export type ReplayClaim =
  /** First delivery: handle it, then `complete` (or `release` when handling failed). */
  | { kind: 'first'; id: string }
  /** Seen before: `reply` is the first delivery's reply, or null while that one is still being handled. */
  | { kind: 'repeat'; reply: string | null };

@Injectable()
export class WebhookReplays implements OnModuleInit {
  constructor(
    private readonly dataSource: DataSource,
    private readonly jobs: JobsService,
  ) {}

  onModuleInit(): void {
    // One instance of the fleet at a time deletes what can no longer be replayed.
    this.jobs.register({
      kind: SIGNATURES_RETENTION_JOB,
      maxAttempts: 3,
      retryDelayMs: () => 60_000,
      handle: async () => {
        await this.prune();
        return { rescheduleInMs: PRUNE_EVERY_MS };
      },
    });
    this.jobs.schedulePeriodic(SIGNATURES_RETENTION_JOB, PRUNE_EVERY_MS);
  }

  static idOf(signature: Buffer): string {
    return createHash('sha256').update(signature).digest('hex');
  }

  /** Atomically records the signature, unless it is remembered and not yet expired. */
  async claim(signature: Buffer, now = Date.now()): Promise<ReplayClaim> {
    const id = WebhookReplays.idOf(signature);
    const inserted = await portableQuery(
      this.dataSource,
      `INSERT INTO webhook_signatures (id, expires_at, reply) VALUES ($1, $2, NULL)
       ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at, reply = NULL
       WHERE webhook_signatures.expires_at <= $3
       RETURNING id`,
      [id, now + REPLAY_MEMORY_MS, now],
    );
    if (inserted.length > 0) return { kind: 'first', id };
    const rows = await portableQuery(this.dataSource, `SELECT reply FROM webhook_signatures WHERE id = $1`, [
      id,
    ]);
    const reply = rows[0]?.reply;
    return { kind: 'repeat', reply: typeof reply === 'string' ? reply : null };
  }

  async complete(id: string, reply: string): Promise<void> {
    await portableQuery(this.dataSource, `UPDATE webhook_signatures SET reply = $1 WHERE id = $2`, [
      reply,
      id,
    ]);
  }

  /** The first delivery failed: forget it, so SmartThings' redelivery is handled. */
  async release(id: string): Promise<void> {
    await portableQuery(this.dataSource, `DELETE FROM webhook_signatures WHERE id = $1`, [id]);
  }

  /** Deletes expired signatures in bounded batches; the number deleted. */
  async prune(now = Date.now()): Promise<number> {
    let deleted = 0;
    for (;;) {
      const rows = await portableQuery(
        this.dataSource,
        `DELETE FROM webhook_signatures WHERE id IN
           (SELECT id FROM webhook_signatures WHERE expires_at <= $1 LIMIT ${PRUNE_BATCH})
         RETURNING id`,
        [now],
      );
      deleted += rows.length;
      if (rows.length < PRUNE_BATCH) return deleted;
    }
  }
}
