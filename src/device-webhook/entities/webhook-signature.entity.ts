import { Column, Entity, Index, PrimaryColumn, type ValueTransformer } from 'typeorm';

/** PostgreSQL returns bigint as text; epoch milliseconds stay below 2^53. */
const epochMs: ValueTransformer = {
  to: (value: unknown) => value,
  from: (value: unknown) => (value === null || value === undefined ? value : Number(value)),
};

/**
 * A signed webhook request already accepted (replay protection, docs/device-webhook.md): the SHA-256 of its
 * (keyId, signature), kept until the signature's Date can no longer be accepted, with the reply it got.
 */
@Entity({ name: 'webhook_signatures' })
@Index('IX_webhook_signatures_expires_at', ['expiresAt'])
export class WebhookSignature {
  @PrimaryColumn({ type: 'varchar', length: 64 })
  id!: string;

  @Column({ name: 'expires_at', type: 'bigint', transformer: epochMs })
  expiresAt!: number;

  /** The reply's JSON; null while the first delivery is being handled. */
  @Column({ type: 'text', nullable: true })
  reply!: string | null;
}
