import type { MigrationInterface, QueryRunner } from 'typeorm';
import { portableTypes } from './portable-types.js';

/** The SCIM columns lists sort by, and their indexes, in code-point order whatever the database's collation. */
const COLUMNS: ReadonlyArray<[table: string, column: string]> = [
  ['scim_users', 'user_name_lower'],
  ['scim_users', 'external_id'],
  ['scim_groups', 'display_name_lower'],
  ['scim_groups', 'external_id'],
];

/**
 * PostgreSQL: the SCIM sort columns take collation "C" (src/database/portable-columns.ts, CodePointTextColumn).
 * `sortBy=userName` or `externalId` followed the database's default collation, so an `en_US` or ICU database
 * sorted `_z` first and `B` between `a` and `b`, where RFC 7644 §3.4.2.3 (caseExact externalId) and SQLite give
 * code-point order; a COLLATE in the query instead would leave the indexes unusable for the order. PostgreSQL
 * rebuilds the columns' indexes. Nothing to do on SQLite, whose default collation is already code-point order.
 */
export class ScimCodePointOrder1763780001000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    if (portableTypes(queryRunner).dialect !== 'postgres') return;
    for (const [table, column] of COLUMNS) {
      await queryRunner.query(`ALTER TABLE ${table} ALTER COLUMN ${column} TYPE varchar(256) COLLATE "C"`);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (portableTypes(queryRunner).dialect !== 'postgres') return;
    for (const [table, column] of COLUMNS) {
      await queryRunner.query(
        `ALTER TABLE ${table} ALTER COLUMN ${column} TYPE varchar(256) COLLATE pg_catalog."default"`,
      );
    }
  }
}
