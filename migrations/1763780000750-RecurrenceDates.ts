import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * RDATE and EXDATE lists of a recurrence: JSON arrays of the date-time texts as sent. Plain ADD COLUMN
 * on both engines: TypeORM's SQLite addColumns rebuilds the table, which would run the cascades of the foreign
 * keys that point at it.
 */
export class RecurrenceDates1763780000750 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE recurrences ADD COLUMN recurrence_dates text NULL');
    await queryRunner.query('ALTER TABLE recurrences ADD COLUMN exception_dates text NULL');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE recurrences DROP COLUMN exception_dates');
    await queryRunner.query('ALTER TABLE recurrences DROP COLUMN recurrence_dates');
  }
}
