// Schedule 1—n ScheduleItem 1—0..1 Recurrence 1—n RecurrenceException. Date-time fields keep the text
// the client sent: StartTime and NewStart may be local wall times whose meaning depends on the item's zone.
import { Column, Entity, Index, JoinColumn, ManyToOne, OneToMany } from 'typeorm';
import { InstantColumn, UuidColumn, UuidPrimaryColumn } from '../../database/portable-columns.js';

/** A list of date-time texts kept as a JSON array in one text column (no list is ever queried by SQL). */
const JSON_LIST = {
  to: (value: readonly string[] | null | undefined): string | null =>
    value === undefined || value === null || value.length === 0 ? null : JSON.stringify(value),
  from: (value: string | null): string[] | null => (value === null ? null : (JSON.parse(value) as string[])),
};

@Entity({ name: 'schedules' })
@Index('IX_schedules_created', ['createdAt', 'id'])
export class Schedule {
  @UuidPrimaryColumn()
  id!: string;

  /** Bumped on every change, so cached compiled series can be checked cheaply (also across instances). */
  @Column({ type: 'integer', default: 1 })
  version!: number;

  @InstantColumn({ name: 'created_at' })
  createdAt!: Date;

  /**
   * Set on schedules an iCalendar import created: SHA-256 (hex) of the series' key (its UID, docs/schedules.md), so
   * a re-import of the calendar updates the schedule. Null for schedules written as JSON.
   */
  @Index('UQ_schedules_ical_key', { unique: true })
  @Column({ name: 'ical_key', type: 'varchar', length: 64, nullable: true })
  icalKey?: string | null;

  /** The UID an iCalendar import read for the series (migrations/1763780001700-IcalUids.ts); the export writes it. */
  @Column({ name: 'ical_uid', type: 'text', nullable: true })
  icalUid?: string | null;

  /** The SEQUENCE the import read for the series' master; written back by the export. */
  @Column({ name: 'ical_sequence', type: 'integer', nullable: true })
  icalSequence?: number | null;

  @OneToMany(() => ScheduleItem, (item) => item.schedule, { cascade: true })
  items!: ScheduleItem[];
}

@Entity({ name: 'schedule_items' })
@Index('IX_schedule_items_schedule', ['scheduleId', 'position'])
export class ScheduleItem {
  @UuidPrimaryColumn()
  id!: string;

  @UuidColumn({ name: 'schedule_id' })
  scheduleId!: string;

  @ManyToOne(() => Schedule, (schedule) => schedule.items, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'schedule_id', foreignKeyConstraintName: 'FK_schedule_items_schedule' })
  schedule!: Schedule;

  @Column({ type: 'integer' })
  position!: number;

  @Column({ type: 'varchar', length: 500, nullable: true })
  name!: string | null;

  @Column({ name: 'start_at', type: 'varchar', length: 40 })
  start!: string;

  @Column({ name: 'end_at', type: 'varchar', length: 40, nullable: true })
  end!: string | null;

  @Column({ name: 'start_time_zone', type: 'varchar', length: 100, nullable: true })
  startTimeZone!: string | null;

  /** An all-day item (an iCalendar date-only event): Start/End are local midnights of its days. */
  @Column({ name: 'all_day', type: 'boolean', default: false })
  allDay?: boolean;

  /** At most one (unique index on recurrences.schedule_item_id); a list only because of how TypeORM maps 0..1. */
  @OneToMany(() => Recurrence, (recurrence) => recurrence.item, { cascade: true })
  recurrences!: Recurrence[];
}

@Entity({ name: 'recurrences' })
export class Recurrence {
  @UuidPrimaryColumn()
  id!: string;

  @Index('UQ_recurrences_item', { unique: true })
  @UuidColumn({ name: 'schedule_item_id' })
  scheduleItemId!: string;

  @ManyToOne(() => ScheduleItem, (item) => item.recurrences, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'schedule_item_id', foreignKeyConstraintName: 'FK_recurrences_item' })
  item!: ScheduleItem;

  @Column({ name: 'start_time', type: 'varchar', length: 40, nullable: true })
  startTime!: string | null;

  @Column({ name: 'end_time', type: 'varchar', length: 40, nullable: true })
  endTime!: string | null;

  @Column({ name: 'offset_duration', type: 'varchar', length: 40, nullable: true })
  offset!: string | null;

  @Column({ name: 'end_count', type: 'integer', nullable: true })
  endCount!: number | null;

  @Column({ name: 'recurrence_type', type: 'varchar', length: 20, nullable: true })
  recurrenceType!: string | null;

  @Column({ name: 'interval_text', type: 'varchar', length: 20, nullable: true })
  interval!: string | null;

  @Column({ type: 'varchar', length: 40, nullable: true })
  duration!: string | null;

  @Column({ type: 'varchar', length: 1000, nullable: true })
  pattern!: string | null;

  /** RDATE (RFC 5545 §3.8.5.2): extra occurrence starts, as sent; null when none. */
  @Column({ name: 'recurrence_dates', type: 'text', nullable: true, transformer: JSON_LIST })
  recurrenceDates!: string[] | null;

  /** EXDATE (RFC 5545 §3.8.5.1): starts removed from the set, as sent; null when none. */
  @Column({ name: 'exception_dates', type: 'text', nullable: true, transformer: JSON_LIST })
  exceptionDates!: string[] | null;

  @OneToMany(() => RecurrenceException, (exception) => exception.recurrence, { cascade: true })
  exceptions!: RecurrenceException[];
}

@Entity({ name: 'recurrence_exceptions' })
@Index('IX_recurrence_exceptions_recurrence', ['recurrenceId', 'position'])
export class RecurrenceException {
  @UuidPrimaryColumn()
  id!: string;

  @UuidColumn({ name: 'recurrence_id' })
  recurrenceId!: string;

  @ManyToOne(() => Recurrence, (recurrence) => recurrence.exceptions, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'recurrence_id', foreignKeyConstraintName: 'FK_recurrence_exceptions_recurrence' })
  recurrence!: Recurrence;

  @Column({ type: 'integer' })
  position!: number;

  @Column({ name: 'original_time', type: 'varchar', length: 40, nullable: true })
  originalTime!: string | null;

  @Column({ name: 'is_deleted', type: 'boolean' })
  isDeleted!: boolean;

  @Column({ name: 'new_start', type: 'varchar', length: 40, nullable: true })
  newStart!: string | null;

  @Column({ name: 'new_end', type: 'varchar', length: 40, nullable: true })
  newEnd!: string | null;

  @Column({ name: 'new_start_time', type: 'varchar', length: 40, nullable: true })
  newStartTime!: string | null;

  @Column({ name: 'new_end_time', type: 'varchar', length: 40, nullable: true })
  newEndTime!: string | null;
}
