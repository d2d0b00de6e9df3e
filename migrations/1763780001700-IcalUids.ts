import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The iCalendar identity an import gives a schedule: `schedules.ical_uid`, the series' UID as the file
 * wrote it (or derived for an event without one), and `schedules.ical_sequence`, its SEQUENCE, so the export writes
 * them back and a re-import of the export updates instead of duplicating. Null for schedules written as JSON, whose
 * UID is derived from their id (docs/decisions.md). Plain ADD COLUMN on both engines (see IcalImportKeys).
 */
export class IcalUids1763780001700 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE schedules ADD COLUMN ical_uid text NULL');
    await queryRunner.query('ALTER TABLE schedules ADD COLUMN ical_sequence integer NULL');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE schedules DROP COLUMN ical_sequence');
    await queryRunner.query('ALTER TABLE schedules DROP COLUMN ical_uid');
  }
}
