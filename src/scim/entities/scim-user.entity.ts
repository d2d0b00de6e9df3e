import { Column, Entity, Index } from 'typeorm';
import {
  CodePointTextColumn,
  InstantColumn,
  JsonColumn,
  UuidPrimaryColumn,
} from '../../database/portable-columns.js';

/** JSON members of the document; not the recursive JSON type, which TypeORM's partial-entity types cannot expand. */
export type ScimStoredAttributes = Record<string, string | number | boolean | null | object>;

/**
 * A SCIM User. `userName` and `externalId` have their own columns because clients look users up by
 * them (Entra and Okta filter on userName before every create); `user_name_lower` carries the case-insensitive
 * uniqueness of userName in a plain unique index that both SQLite and PostgreSQL can use for `eq`. Every other
 * attribute lives in `attributes`, the user in SCIM core-schema form (RFC 7643 §4.1, enterprise extension under
 * its URN), so the one attribute table in `schema/user-schema.ts` decides what is stored, and list filters read
 * it with json_extract/json_each (SQLite) or ->>/jsonb_array_elements (PostgreSQL).
 */
@Entity({ name: 'scim_users' })
@Index('IX_scim_users_created_at_id', ['createdAt', 'id'])
export class ScimUserEntity {
  @UuidPrimaryColumn()
  id!: string;

  @Column({ name: 'user_name', type: 'varchar', length: 256 })
  userName!: string;

  /** userName.toLowerCase(), computed by the service on every write. */
  @Index('UQ_scim_users_user_name_lower', { unique: true })
  @CodePointTextColumn({ name: 'user_name_lower', length: 256 })
  userNameLower!: string;

  @Index('IX_scim_users_external_id')
  @CodePointTextColumn({ name: 'external_id', length: 256, nullable: true })
  externalId!: string | null;

  /** The rest of the User: every attribute except id, meta, schemas, userName and externalId. */
  @JsonColumn()
  attributes!: ScimStoredAttributes;

  /** Incremented on every change; the ETag and meta.version are W/"<version>". */
  @Column({ type: 'integer' })
  version!: number;

  @InstantColumn({ name: 'created_at' })
  createdAt!: Date;

  @InstantColumn({ name: 'last_modified' })
  lastModified!: Date;
}
