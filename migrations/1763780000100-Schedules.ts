import { Table, TableForeignKey, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { portableTypes } from './portable-types.js';

/** Schedules with their items, recurrences and exceptions (docs/schedules.md). */
export class Schedules1763780000100 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const t = portableTypes(queryRunner);
    const text = (name: string, length: number, isNullable = true) => ({
      name,
      type: 'varchar',
      length: String(length),
      isNullable,
    });
    await queryRunner.createTable(
      new Table({
        name: 'schedules',
        columns: [
          { name: 'id', ...t.uuid, isPrimary: true },
          { name: 'version', type: 'integer', default: 1 },
          { name: 'created_at', ...t.instant },
        ],
        indices: [new TableIndex({ name: 'IX_schedules_created', columnNames: ['created_at', 'id'] })],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'schedule_items',
        columns: [
          { name: 'id', ...t.uuid, isPrimary: true },
          { name: 'schedule_id', ...t.uuid },
          { name: 'position', type: 'integer' },
          text('name', 500),
          text('start_at', 40, false),
          text('end_at', 40),
          text('start_time_zone', 100),
        ],
        indices: [
          new TableIndex({ name: 'IX_schedule_items_schedule', columnNames: ['schedule_id', 'position'] }),
        ],
        foreignKeys: [
          new TableForeignKey({
            name: 'FK_schedule_items_schedule',
            columnNames: ['schedule_id'],
            referencedTableName: 'schedules',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          }),
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'recurrences',
        columns: [
          { name: 'id', ...t.uuid, isPrimary: true },
          { name: 'schedule_item_id', ...t.uuid },
          text('start_time', 40),
          text('end_time', 40),
          text('offset_duration', 40),
          { name: 'end_count', type: 'integer', isNullable: true },
          text('recurrence_type', 20),
          text('interval_text', 20),
          text('duration', 40),
          text('pattern', 1000),
        ],
        indices: [
          new TableIndex({ name: 'UQ_recurrences_item', columnNames: ['schedule_item_id'], isUnique: true }),
        ],
        foreignKeys: [
          new TableForeignKey({
            name: 'FK_recurrences_item',
            columnNames: ['schedule_item_id'],
            referencedTableName: 'schedule_items',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          }),
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'recurrence_exceptions',
        columns: [
          { name: 'id', ...t.uuid, isPrimary: true },
          { name: 'recurrence_id', ...t.uuid },
          { name: 'position', type: 'integer' },
          text('original_time', 40),
          { name: 'is_deleted', type: 'boolean' },
          text('new_start', 40),
          text('new_end', 40),
          text('new_start_time', 40),
          text('new_end_time', 40),
        ],
        indices: [
          new TableIndex({
            name: 'IX_recurrence_exceptions_recurrence',
            columnNames: ['recurrence_id', 'position'],
          }),
        ],
        foreignKeys: [
          new TableForeignKey({
            name: 'FK_recurrence_exceptions_recurrence',
            columnNames: ['recurrence_id'],
            referencedTableName: 'recurrences',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          }),
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('recurrence_exceptions');
    await queryRunner.dropTable('recurrences');
    await queryRunner.dropTable('schedule_items');
    await queryRunner.dropTable('schedules');
  }
}
