import { Column, Entity, Index } from 'typeorm';
import { InstantColumn, UuidPrimaryColumn } from '../../database/portable-columns.js';

/** An API key. Only a SHA-256 hash of the key is stored: keys are 256-bit random, so a slow hash adds nothing. */
@Entity({ name: 'api_keys' })
export class ApiKey {
  @UuidPrimaryColumn()
  id!: string;

  @Column({ type: 'varchar', length: 100 })
  name!: string;

  @Index('UQ_api_keys_key_hash', { unique: true })
  @Column({ name: 'key_hash', type: 'varchar', length: 64 })
  keyHash!: string;

  /** The first characters of the key, so an operator can tell keys apart without the secret. */
  @Column({ name: 'key_prefix', type: 'varchar', length: 16 })
  keyPrefix!: string;

  /** Comma-separated scopes. */
  @Column({ type: 'varchar', length: 200 })
  scopes!: string;

  /** Comma-separated tenants (lower-case domains) the key may act for; null = every tenant. */
  @Column({ type: 'varchar', length: 2000, nullable: true })
  domains!: string | null;

  @InstantColumn({ name: 'created_at' })
  createdAt!: Date;

  @InstantColumn({ name: 'revoked_at', nullable: true })
  revokedAt!: Date | null;
}
