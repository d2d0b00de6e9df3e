import { Column, Entity } from 'typeorm';
import { IdentityPrimaryColumn } from '../../database/portable-columns.js';

/**
 * A change to scim_user_stats not yet folded into its row (PostgreSQL's triggers insert one per statement, migration
 * 1763780001600; src/database/counter-deltas.ts folds them). Readers add them to the row. Declared so the schema
 * matches the entities.
 */
@Entity({ name: 'scim_user_stats_deltas' })
export class ScimUserStatsDeltaEntity {
  @IdentityPrimaryColumn()
  id!: string;

  @Column({ name: 'user_count', type: 'integer' })
  userCount!: number;

  @Column({ name: 'order_generation', type: 'bigint' })
  orderGeneration!: string;
}
