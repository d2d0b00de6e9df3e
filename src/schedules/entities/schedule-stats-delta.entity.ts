import { Column, Entity } from 'typeorm';
import { IdentityPrimaryColumn } from '../../database/portable-columns.js';

/**
 * A change to schedule_stats not yet folded into its row (PostgreSQL's triggers insert one per statement, migration
 * 1763780001600; src/database/counter-deltas.ts folds them). Readers add them to the row. Declared so the schema
 * matches the entities.
 */
@Entity({ name: 'schedule_stats_deltas' })
export class ScheduleStatsDelta {
  @IdentityPrimaryColumn()
  id!: string;

  @Column({ name: 'schedule_count', type: 'integer' })
  scheduleCount!: number;

  @Column({ name: 'order_generation', type: 'bigint' })
  orderGeneration!: string;

  @Column({ name: 'change_generation', type: 'bigint' })
  changeGeneration!: string;
}
