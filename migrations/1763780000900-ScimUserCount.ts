import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';
import { portableTypes } from './portable-types.js';

/**
 * The exact number of SCIM users in one row (src/scim/entities/scim-user-stats.entity.ts), maintained by triggers
 * so that every writer (the service, the CLI, a bulk INSERT) keeps it right within its own transaction, and an
 * `order_generation` that every statement inserting or deleting users bumps (the list order changes only then:
 * created_at and id never change), which tells an instance when its directory of list positions is stale.
 * PostgreSQL: statement-level triggers with transition tables (one UPDATE per statement, none when no row
 * changed, so a DELETE that matched nothing takes no lock on the counter) and TRUNCATE resets it. SQLite: row
 * triggers (it has no statement-level ones, and no TRUNCATE).
 */
export class ScimUserCount1763780000900 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const { dialect } = portableTypes(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'scim_user_stats',
        columns: [
          { name: 'id', type: 'integer', isPrimary: true },
          { name: 'user_count', type: 'integer' },
          { name: 'order_generation', type: 'bigint', default: 0 },
        ],
      }),
    );
    if (dialect === 'postgres') {
      await queryRunner.query(`
        CREATE FUNCTION scim_user_stats_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE added integer;
        BEGIN
          SELECT COUNT(*) INTO added FROM inserted_users;
          IF added > 0 THEN UPDATE scim_user_stats SET user_count = user_count + added, order_generation = order_generation + 1
            WHERE id = 1; END IF;
          RETURN NULL;
        END $$`);
      await queryRunner.query(`
        CREATE FUNCTION scim_user_stats_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE removed integer;
        BEGIN
          SELECT COUNT(*) INTO removed FROM deleted_users;
          IF removed > 0 THEN UPDATE scim_user_stats SET user_count = user_count - removed, order_generation = order_generation + 1
            WHERE id = 1; END IF;
          RETURN NULL;
        END $$`);
      await queryRunner.query(`
        CREATE FUNCTION scim_user_stats_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          UPDATE scim_user_stats SET user_count = 0, order_generation = order_generation + 1 WHERE id = 1;
          RETURN NULL;
        END $$`);
      // Taken before the count is read, so that no user written meanwhile is missed or counted twice.
      await queryRunner.query('LOCK TABLE scim_users IN SHARE MODE');
      await queryRunner.query(
        `CREATE TRIGGER scim_users_count_insert AFTER INSERT ON scim_users REFERENCING NEW TABLE AS inserted_users
         FOR EACH STATEMENT EXECUTE FUNCTION scim_user_stats_inserted()`,
      );
      await queryRunner.query(
        `CREATE TRIGGER scim_users_count_delete AFTER DELETE ON scim_users REFERENCING OLD TABLE AS deleted_users
         FOR EACH STATEMENT EXECUTE FUNCTION scim_user_stats_deleted()`,
      );
      await queryRunner.query(
        `CREATE TRIGGER scim_users_count_truncate AFTER TRUNCATE ON scim_users
         FOR EACH STATEMENT EXECUTE FUNCTION scim_user_stats_truncated()`,
      );
    } else {
      await queryRunner.query(
        `CREATE TRIGGER scim_users_count_insert AFTER INSERT ON scim_users
         BEGIN
           UPDATE scim_user_stats SET user_count = user_count + 1, order_generation = order_generation + 1 WHERE id = 1;
         END`,
      );
      await queryRunner.query(
        `CREATE TRIGGER scim_users_count_delete AFTER DELETE ON scim_users
         BEGIN
           UPDATE scim_user_stats SET user_count = user_count - 1, order_generation = order_generation + 1 WHERE id = 1;
         END`,
      );
    }
    await queryRunner.query(
      'INSERT INTO scim_user_stats (id, user_count) SELECT 1, COUNT(*) FROM scim_users',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const { dialect } = portableTypes(queryRunner);
    await queryRunner.query(
      'DROP TRIGGER IF EXISTS scim_users_count_insert' + (dialect === 'postgres' ? ' ON scim_users' : ''),
    );
    await queryRunner.query(
      'DROP TRIGGER IF EXISTS scim_users_count_delete' + (dialect === 'postgres' ? ' ON scim_users' : ''),
    );
    if (dialect === 'postgres') {
      await queryRunner.query('DROP TRIGGER IF EXISTS scim_users_count_truncate ON scim_users');
      await queryRunner.query('DROP FUNCTION IF EXISTS scim_user_stats_inserted()');
      await queryRunner.query('DROP FUNCTION IF EXISTS scim_user_stats_deleted()');
      await queryRunner.query('DROP FUNCTION IF EXISTS scim_user_stats_truncated()');
    }
    await queryRunner.dropTable('scim_user_stats');
  }
}
