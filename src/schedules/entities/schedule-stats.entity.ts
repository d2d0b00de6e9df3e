import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Read as a decimal string on both engines (a 64-bit counter). */
const BIGINT_TEXT = { from: (value: unknown) => String(value), to: (value: unknown) => value };

/**
 * One row (id 1) about the schedules table, kept exact by database triggers in the transaction that changes the
 * schedules (migration 1763780001250); read with plain SQL by schedule-reader.ts and series-cache.ts. Declared so the
 * schema matches the entities.
 */
@Entity({ name: 'schedule_stats' })
export class ScheduleStats {
  @PrimaryColumn({ type: 'integer' })
  id!: number;

  /** The number of schedules: operation 2's total. */
  @Column({ name: 'schedule_count', type: 'integer' })
  scheduleCount!: number;

  /** Bumped by every statement inserting or deleting schedules (the list order changes only then). */
  @Column({ name: 'order_generation', type: 'bigint', default: 0, transformer: BIGINT_TEXT })
  orderGeneration!: string;

  /** Bumped by every statement updating or deleting schedules (the series cache's check). */
  @Column({ name: 'change_generation', type: 'bigint', default: 0, transformer: BIGINT_TEXT })
  changeGeneration!: string;
}
