import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * iCalendar import of whole calendars: `schedules.ical_key`, the SHA-256 of the series an import created
 * the schedule for (its UID, docs/schedules.md), so a re-import updates that schedule rather than adding a copy;
 * `schedule_items.all_day`, set for items imported from date-only (all-day) events. Plain ADD COLUMN on both engines
 * (TypeORM's SQLite addColumns rebuilds the table, which would run the cascades of the foreign keys that point at it).
 */
export class IcalImportKeys1763780001200 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE schedules ADD COLUMN ical_key varchar(64) NULL');
    await queryRunner.query('CREATE UNIQUE INDEX "UQ_schedules_ical_key" ON schedules (ical_key)');
    // The default as each engine's schema reader prints it for the entity's `default: false` (SQLite stores 0).
    const falseValue = queryRunner.connection.driver.options.type === 'postgres' ? 'false' : '0';
    await queryRunner.query(
      `ALTER TABLE schedule_items ADD COLUMN all_day boolean NOT NULL DEFAULT ${falseValue}`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE schedule_items DROP COLUMN all_day');
    await queryRunner.query('DROP INDEX "UQ_schedules_ical_key"');
    await queryRunner.query('ALTER TABLE schedules DROP COLUMN ical_key');
  }
}
