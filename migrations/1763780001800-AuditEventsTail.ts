import type { MigrationInterface, QueryRunner } from 'typeorm';
import { portableTypes } from './portable-types.js';

/**
 * The audit trail's unindexed tail (src/audit/audit-fold.ts). A change's event is written into
 * `audit_events_tail`, which has the columns of `audit_events` and only its primary key, so the write's transaction
 * adds one B-tree entry instead of seven; a background fold moves the tail into `audit_events` (and its six
 * filter indexes) in batches, keeping the ids, so ids must never collide between the two: on PostgreSQL each table
 * keeps its own sequence (as its entity declares it) and the two step by 2 on opposite parities from audit_events'
 * last id; on SQLite (one writer at a time, no old instance beside it) the tail's AUTOINCREMENT starts after every
 * id audit_events has used. Append-only like audit_events: PostgreSQL refuses UPDATE, DELETE and
 * TRUNCATE unless the transaction set `platform.audit_maintenance` (the fold, a bulk copy), SQLite refuses UPDATE.
 */
export class AuditEventsTail1763780001800 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const { dialect } = portableTypes(queryRunner);
    if (dialect === 'postgres') {
      await queryRunner.query(
        'CREATE TABLE audit_events_tail (LIKE audit_events INCLUDING CONSTRAINTS, PRIMARY KEY (id))',
      );
      await queryRunner.query('CREATE SEQUENCE audit_events_tail_id_seq OWNED BY audit_events_tail.id');
      await queryRunner.query(
        "ALTER TABLE audit_events_tail ALTER COLUMN id SET DEFAULT nextval('audit_events_tail_id_seq')",
      );
      // Both sequences go on by 2 from here, audit_events' from its last id, the tail's from one past it: ids still
      // grow with time and never collide, also with an instance still on the previous version (which writes into
      // audit_events) during a rolling upgrade.
      await queryRunner.query(`DO $$
        DECLARE events text := pg_get_serial_sequence('audit_events', 'id'); last bigint;
        BEGIN
          last := nextval(events);
          EXECUTE format('ALTER SEQUENCE %s INCREMENT BY 2', events);
          ALTER SEQUENCE audit_events_tail_id_seq INCREMENT BY 2;
          PERFORM setval('audit_events_tail_id_seq', last + 1, false);
        END $$`);
      await queryRunner.query(
        `CREATE TRIGGER audit_events_tail_append_only BEFORE UPDATE OR DELETE ON audit_events_tail
         FOR EACH ROW EXECUTE FUNCTION audit_events_append_only()`,
      );
      await queryRunner.query(
        `CREATE TRIGGER audit_events_tail_no_truncate BEFORE TRUNCATE ON audit_events_tail
         FOR EACH STATEMENT EXECUTE FUNCTION audit_events_append_only()`,
      );
      return;
    }
    // The same column definitions as audit_events (its CREATE statement under the tail's name), no index.
    const [{ sql }] = (await queryRunner.query(
      "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'audit_events'",
    )) as Array<{ sql: string }>;
    await queryRunner.query(sql.replace(/^CREATE TABLE "audit_events"/, 'CREATE TABLE "audit_events_tail"'));
    await queryRunner.query(
      `INSERT INTO sqlite_sequence (name, seq) SELECT 'audit_events_tail', MAX(
         COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'audit_events'), 0),
         COALESCE((SELECT MAX(id) FROM audit_events), 0))`,
    );
    await queryRunner.query(
      `CREATE TRIGGER audit_events_tail_append_only BEFORE UPDATE ON audit_events_tail
       BEGIN SELECT RAISE(ABORT, 'audit_events is append-only: UPDATE refused'); END`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const { dialect } = portableTypes(queryRunner);
    // Running instances fold the tail meanwhile (PostgreSQL; on SQLite the writer's lock orders the two): the lock
    // waits for a fold under way to commit and keeps the next one out until this transaction ends, so the INSERT
    // below never copies an event a concurrent fold also moves (a duplicate key in audit_events, seen once in CI).
    if (dialect === 'postgres') await queryRunner.query('LOCK TABLE audit_events_tail IN EXCLUSIVE MODE');
    // The unfolded tail goes into audit_events first, so reverting loses no event.
    await queryRunner.query('INSERT INTO audit_events SELECT * FROM audit_events_tail');
    if (dialect === 'postgres') {
      await queryRunner.query(`DO $$
        DECLARE events text := pg_get_serial_sequence('audit_events', 'id');
        BEGIN
          EXECUTE format('ALTER SEQUENCE %s INCREMENT BY 1', events);
          PERFORM setval(events, GREATEST((SELECT COALESCE(MAX(id), 0) FROM audit_events), 1));
        END $$`);
    }
    if (dialect === 'sqlite') {
      await queryRunner.query(
        `UPDATE sqlite_sequence SET seq = MAX(seq,
           COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'audit_events_tail'), 0))
         WHERE name = 'audit_events'`,
      );
    }
    await queryRunner.query('DROP TABLE audit_events_tail');
  }
}
