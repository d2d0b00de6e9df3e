import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * One row (id 1) holding the number of rows in scim_users, kept exact by database triggers on every insert and
 * delete (migration 1763780000900), in the transaction that changes the users. `GET /Users` without a filter
 * reads its totalResults here: on PostgreSQL a COUNT(*) of 100,000 users is an index-only scan of ~6 ms, over the
 * 5 ms a page may take; SQLite counts a b-tree without reading rows, and reads the same row for uniformity.
 */
@Entity({ name: 'scim_user_stats' })
export class ScimUserStatsEntity {
  @PrimaryColumn({ type: 'integer' })
  id!: number;

  @Column({ name: 'user_count', type: 'integer' })
  userCount!: number;

  /**
   * Bumped by every statement that inserts or deletes users: the only changes to the list order (created_at and id
   * never change). A 64-bit counter, read as a decimal string on both engines.
   */
  @Column({
    name: 'order_generation',
    type: 'bigint',
    default: 0,
    transformer: { from: (value: unknown) => String(value), to: (value: unknown) => value },
  })
  orderGeneration!: string;
}
