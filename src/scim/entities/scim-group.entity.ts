import { Column, Entity, Index, JoinColumn, ManyToOne } from 'typeorm';
import { CodePointTextColumn, InstantColumn, UuidPrimaryColumn } from '../../database/portable-columns.js';
import { ScimUserEntity } from './scim-user.entity.js';

/**
 * A SCIM Group (RFC 7643 §4.2). `display_name_lower` serves the case-insensitive `displayName eq` filter Entra and
 * Okta send before creating a group and keeps displayName unique (Entra matches groups by it); members live in scim_group_members.
 */
@Entity({ name: 'scim_groups' })
@Index('IX_scim_groups_created_at_id', ['createdAt', 'id'])
export class ScimGroupEntity {
  @UuidPrimaryColumn()
  id!: string;

  @Column({ name: 'display_name', type: 'varchar', length: 256 })
  displayName!: string;

  @Index('UQ_scim_groups_display_name_lower', { unique: true })
  @CodePointTextColumn({ name: 'display_name_lower', length: 256 })
  displayNameLower!: string;

  @Index('IX_scim_groups_external_id')
  @CodePointTextColumn({ name: 'external_id', length: 256, nullable: true })
  externalId!: string | null;

  /** Incremented on every change, membership changes included. */
  @Column({ type: 'integer' })
  version!: number;

  @InstantColumn({ name: 'created_at' })
  createdAt!: Date;

  @InstantColumn({ name: 'last_modified' })
  lastModified!: Date;
}

/** One member of one group; the primary key (group_id, user_id) is the membership check's index. */
@Entity({ name: 'scim_group_members' })
export class ScimGroupMemberEntity {
  @UuidPrimaryColumn({ name: 'group_id' })
  groupId!: string;

  @Index('IX_scim_group_members_user_id')
  @UuidPrimaryColumn({ name: 'user_id' })
  userId!: string;

  @ManyToOne(() => ScimGroupEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'group_id', foreignKeyConstraintName: 'FK_scim_group_members_group' })
  group?: ScimGroupEntity;

  @ManyToOne(() => ScimUserEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'FK_scim_group_members_user' })
  user?: ScimUserEntity;
}
