import { Column, Entity, Index } from 'typeorm';
import { InstantColumn, JsonColumn, UuidPrimaryColumn } from '../../database/portable-columns.js';

/**
 * One SMTP sending configuration of a tenant. Identity: (tenant, host, port, username), enforced by a
 * unique index so concurrent ensures cannot create two. Secrets are stored only as EncryptionService ciphertexts.
 */
@Entity({ name: 'smtp_configurations' })
@Index('UQ_smtp_configurations_identity', ['tenant', 'host', 'port', 'username'], { unique: true })
export class SmtpConfiguration {
  @UuidPrimaryColumn()
  id!: string;

  /** Context.Domain, lower-cased; 'default' when absent. */
  @Column({ type: 'varchar', length: 253 })
  tenant!: string;

  /** Lower-cased, without a trailing dot. */
  @Column({ type: 'varchar', length: 253 })
  host!: string;

  @Column({ type: 'integer' })
  port!: number;

  /** '' when there is none: a NULL would make the unique index treat every such row as distinct. */
  @Column({ type: 'varchar', length: 255 })
  username!: string;

  @Column({ type: 'boolean' })
  ssl!: boolean;

  @Column({ name: 'auth_required', type: 'boolean' })
  authRequired!: boolean;

  @Column({ name: 'allow_invalid_certificate', type: 'boolean' })
  allowInvalidCertificate!: boolean;

  @Column({ name: 'password_ciphertext', type: 'text', nullable: true })
  passwordCiphertext!: string | null;

  @Column({ name: 'internal_password_ciphertext', type: 'text', nullable: true })
  internalPasswordCiphertext!: string | null;

  @Column({ name: 'sender_address', type: 'varchar', length: 320 })
  senderAddress!: string;

  @Column({ type: 'integer' })
  priority!: number;

  @Column({ type: 'boolean' })
  enabled!: boolean;

  @JsonColumn()
  bcc!: string[];

  @InstantColumn({ name: 'created_at' })
  createdAt!: Date;

  @InstantColumn({ name: 'updated_at' })
  updatedAt!: Date;
}
