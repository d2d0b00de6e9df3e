import { Column, Entity, Index } from 'typeorm';
import { InstantColumn, JsonColumn, UuidPrimaryColumn } from './portable-columns.js';

export enum MigrationRunStatus {
  Running = 'Running',
  Succeeded = 'Succeeded',
  Failed = 'Failed',
  Reverted = 'Reverted',
  /** A Running run whose process went away before it finished: reported so, not left Running forever. */
  Abandoned = 'Abandoned',
}

export type MigrationTrigger = 'startup' | 'cli';
export type MigrationDirection = 'up' | 'down';

export interface MigrationRunDetails {
  Direction: MigrationDirection;
  Trigger: MigrationTrigger;
  DurationMs: number | null;
  Host: string;
  ProcessId: number;
  AppVersion: string;
  Checksum: string;
  Error: string | null;
}

/** One run (up or down) of one schema migration, recorded whatever its outcome. */
@Entity({ name: 'migration_runs' })
@Index('IX_migration_runs_migration_started', ['migration', 'startedAt'])
export class MigrationRun {
  @UuidPrimaryColumn()
  id!: string;

  @Column({ type: 'varchar', length: 255 })
  migration!: string;

  @Column({ name: 'migration_source', type: 'varchar', length: 500 })
  migrationSource!: string;

  @InstantColumn({ name: 'started_at' })
  startedAt!: Date;

  @Column({ type: 'varchar', length: 20 })
  status!: MigrationRunStatus;

  @JsonColumn()
  details!: MigrationRunDetails;
}
