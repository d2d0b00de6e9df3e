import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { UuidPrimaryColumn } from '../../database/portable-columns.js';
import { ScimUserEntity } from './scim-user.entity.js';

/**
 * One element of a user's `emails`, copied out of the JSON document so that the e-mail filters Entra and Okta send
 * (`emails[type eq "work"].value eq "…"`, `emails.value eq`, `emails co`) are index lookups instead of a scan of
 * every document. Written in the same transaction as the user (see user-email-rows.ts for the exact mapping); the
 * document stays the source of truth for what is returned. `value` and `type` are lower-cased (their caseExact is
 * false); `value_key` is `value` cut to 200 characters, the b-tree key (PostgreSQL refuses index entries over
 * ~2.7 kB, and an e-mail value has no length limit), so `eq` reads `value_key = k AND value = v`. On PostgreSQL
 * `co`/`sw`/`ew` use a pg_trgm GIN index on `value` when the extension could be created (migration
 * 1763780000800); it is declared here with `synchronize: false` so that schema comparison neither adds nor drops it.
 */
@Entity({ name: 'scim_user_emails' })
@Index('IX_scim_user_emails_value_trgm', { synchronize: false })
export class ScimUserEmailEntity {
  @UuidPrimaryColumn({ name: 'user_id' })
  userId!: string;

  /** The element's index in the user's `emails` array. */
  @PrimaryColumn({ type: 'integer' })
  position!: number;

  @Column({ type: 'text', nullable: true })
  value!: string | null;

  @Index('IX_scim_user_emails_value_key')
  @Column({ name: 'value_key', type: 'varchar', length: 200, nullable: true })
  valueKey!: string | null;

  @Column({ type: 'text', nullable: true })
  type!: string | null;

  /** null when the element has no `primary` (which reads as false, RFC 7643 §2.4). */
  @Column({ name: 'is_primary', type: 'boolean', nullable: true })
  primary!: boolean | null;

  @ManyToOne(() => ScimUserEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'FK_scim_user_emails_user' })
  user?: ScimUserEntity;
}
