import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { portableTypes } from './portable-types.js';

/** SCIM users (docs/scim.md): lookup columns plus the User's other attributes as one JSON document. */
export class ScimUsers1763780000200 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const t = portableTypes(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'scim_users',
        columns: [
          { name: 'id', ...t.uuid, isPrimary: true },
          { name: 'user_name', type: 'varchar', length: '256' },
          { name: 'user_name_lower', type: 'varchar', length: '256' },
          { name: 'external_id', type: 'varchar', length: '256', isNullable: true },
          { name: 'attributes', ...t.json },
          { name: 'version', type: 'integer' },
          { name: 'created_at', ...t.instant },
          { name: 'last_modified', ...t.instant },
        ],
        indices: [
          new TableIndex({
            name: 'UQ_scim_users_user_name_lower',
            columnNames: ['user_name_lower'],
            isUnique: true,
          }),
          new TableIndex({ name: 'IX_scim_users_external_id', columnNames: ['external_id'] }),
          new TableIndex({ name: 'IX_scim_users_created_at_id', columnNames: ['created_at', 'id'] }),
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('scim_users');
  }
}
