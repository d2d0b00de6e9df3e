import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';
import { portableTypes } from './portable-types.js';

/**
 * One row (id 1) about the schedules table, kept by triggers so that every writer (the service, the CLI, a bulk
 * INSERT) keeps it right within its own transaction, as scim_user_stats does for users (1763780000900):
 * - `schedule_count`: the exact number of schedules, operation 2's TotalPages without a COUNT(*);
 * - `order_generation`: bumped by every statement that inserts or deletes schedules (the only changes to the list
 *   order), which tells an instance when its directory of list positions is stale;
 * - `change_generation`: bumped by every statement that updates or deletes schedules (a replace bumps the
 *   schedule's version), which tells the series cache that none of its entries can be stale while it is unchanged.
 * PostgreSQL: statement-level triggers with transition tables (one UPDATE per statement, none when no row changed);
 * TRUNCATE resets it. SQLite: row triggers (it has neither statement-level triggers nor TRUNCATE).
 */
export class ScheduleStats1763780001250 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const { dialect } = portableTypes(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'schedule_stats',
        columns: [
          { name: 'id', type: 'integer', isPrimary: true },
          { name: 'schedule_count', type: 'integer' },
          { name: 'order_generation', type: 'bigint', default: 0 },
          { name: 'change_generation', type: 'bigint', default: 0 },
        ],
      }),
    );
    const bump = (count: string, order: boolean, change: boolean) =>
      [
        ...(count ? [`schedule_count = schedule_count ${count}`] : []),
        ...(order ? ['order_generation = order_generation + 1'] : []),
        ...(change ? ['change_generation = change_generation + 1'] : []),
      ].join(', ');
    if (dialect === 'postgres') {
      const fn = (name: string, table: string, set: string) =>
        queryRunner.query(`
          CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
          DECLARE changed integer;
          BEGIN
            SELECT COUNT(*) INTO changed FROM ${table};
            IF changed > 0 THEN UPDATE schedule_stats SET ${set} WHERE id = 1; END IF;
            RETURN NULL;
          END $$`);
      await fn('schedule_stats_inserted', 'inserted_schedules', bump('+ changed', true, false));
      await fn('schedule_stats_deleted', 'deleted_schedules', bump('- changed', true, true));
      await fn('schedule_stats_updated', 'updated_schedules', bump('', false, true));
      await queryRunner.query(`
        CREATE FUNCTION schedule_stats_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          UPDATE schedule_stats SET schedule_count = 0, order_generation = order_generation + 1,
                 change_generation = change_generation + 1 WHERE id = 1;
          RETURN NULL;
        END $$`);
      // Taken before the count is read, so that no schedule written meanwhile is missed or counted twice.
      await queryRunner.query('LOCK TABLE schedules IN SHARE MODE');
      for (const [event, transition, name] of [
        ['INSERT', 'NEW TABLE AS inserted_schedules', 'inserted'],
        ['DELETE', 'OLD TABLE AS deleted_schedules', 'deleted'],
        ['UPDATE', 'NEW TABLE AS updated_schedules', 'updated'],
      ]) {
        await queryRunner.query(
          `CREATE TRIGGER schedules_stats_${name} AFTER ${event} ON schedules REFERENCING ${transition}
           FOR EACH STATEMENT EXECUTE FUNCTION schedule_stats_${name}()`,
        );
      }
      await queryRunner.query(
        `CREATE TRIGGER schedules_stats_truncated AFTER TRUNCATE ON schedules
         FOR EACH STATEMENT EXECUTE FUNCTION schedule_stats_truncated()`,
      );
    } else {
      for (const [event, name, set] of [
        ['INSERT', 'inserted', bump('+ 1', true, false)],
        ['DELETE', 'deleted', bump('- 1', true, true)],
        ['UPDATE', 'updated', bump('', false, true)],
      ]) {
        await queryRunner.query(
          `CREATE TRIGGER schedules_stats_${name} AFTER ${event} ON schedules
           BEGIN UPDATE schedule_stats SET ${set} WHERE id = 1; END`,
        );
      }
    }
    await queryRunner.query(
      'INSERT INTO schedule_stats (id, schedule_count) SELECT 1, COUNT(*) FROM schedules',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const { dialect } = portableTypes(queryRunner);
    const on = dialect === 'postgres' ? ' ON schedules' : '';
    for (const name of ['inserted', 'deleted', 'updated', 'truncated'])
      await queryRunner.query(`DROP TRIGGER IF EXISTS schedules_stats_${name}${on}`);
    if (dialect === 'postgres') {
      for (const name of ['inserted', 'deleted', 'updated', 'truncated'])
        await queryRunner.query(`DROP FUNCTION IF EXISTS schedule_stats_${name}()`);
    }
    await queryRunner.dropTable('schedule_stats');
  }
}
