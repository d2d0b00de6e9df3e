import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { portableTypes } from './portable-types.js';

/**
 * The audit trail (src/audit/): one row per change or refusal, written in the change's own transaction.
 * Append-only: on PostgreSQL a trigger refuses UPDATE, DELETE and TRUNCATE unless the transaction has set
 * `platform.audit_maintenance` to `on` (retention, and a bulk copy that must empty the table first); on SQLite,
 * which has no session settings, a trigger refuses UPDATE (retention deletes). Indexes end in `id`, so each filter
 * pages newest first by keyset in O(page).
 */
export class AuditEvents1763780001500 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const { dialect, instant } = portableTypes(queryRunner);
    const text = (name: string, length: number) =>
      ({ name, type: 'varchar', length: String(length), isNullable: true }) as const;
    await queryRunner.createTable(
      new Table({
        name: 'audit_events',
        columns: [
          {
            name: 'id',
            // bigint on PostgreSQL (a refusal flood over a year may pass 2^31); SQLite's INTEGER is 64-bit already.
            type: dialect === 'postgres' ? 'bigint' : 'integer',
            isPrimary: true,
            isGenerated: true,
            generationStrategy: 'increment',
          },
          { name: 'occurred_at', ...instant },
          { name: 'actor_type', type: 'varchar', length: '16' },
          text('actor_id', 300),
          text('actor_name', 200),
          text('actor_issuer', 500),
          { name: 'action', type: 'varchar', length: '64' },
          { name: 'resource_type', type: 'varchar', length: '64' },
          text('resource_id', 300),
          { name: 'outcome', type: 'varchar', length: '16' },
          text('correlation_id', 128),
          text('client_address', 64),
          { name: 'detail', type: 'text', isNullable: true },
        ],
        indices: [
          ['occurred_at', 'id'],
          ['actor_id', 'id'],
          ['actor_name', 'id'],
          ['action', 'id'],
          ['resource_type', 'id'],
          ['resource_id', 'id'],
        ].map((columnNames) => new TableIndex({ name: `IX_audit_events_${columnNames[0]}`, columnNames })),
      }),
    );
    if (dialect === 'postgres') {
      await queryRunner.query(`
        CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF current_setting('platform.audit_maintenance', true) = 'on' THEN
            RETURN CASE WHEN TG_OP = 'UPDATE' THEN NEW ELSE OLD END;
          END IF;
          RAISE EXCEPTION 'audit_events is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
        END $$`);
      await queryRunner.query(
        `CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events
         FOR EACH ROW EXECUTE FUNCTION audit_events_append_only()`,
      );
      await queryRunner.query(
        `CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events
         FOR EACH STATEMENT EXECUTE FUNCTION audit_events_append_only()`,
      );
    } else {
      await queryRunner.query(
        `CREATE TRIGGER audit_events_append_only BEFORE UPDATE ON audit_events
         BEGIN SELECT RAISE(ABORT, 'audit_events is append-only: UPDATE refused'); END`,
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const { dialect } = portableTypes(queryRunner);
    if (dialect === 'postgres') {
      await queryRunner.query('DROP TRIGGER IF EXISTS audit_events_no_truncate ON audit_events');
      await queryRunner.query('DROP TRIGGER IF EXISTS audit_events_append_only ON audit_events');
      await queryRunner.query('DROP FUNCTION IF EXISTS audit_events_append_only()');
    } else {
      await queryRunner.query('DROP TRIGGER IF EXISTS audit_events_append_only');
    }
    await queryRunner.dropTable('audit_events');
  }
}
