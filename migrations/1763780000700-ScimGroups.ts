import { Table, TableForeignKey, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { portableTypes } from './portable-types.js';

/**
 * SCIM groups (RFC 7643 §4.2) and their members. Membership is a table rather than a JSON array so that adding
 * 1,000 members is one multi-row insert, a membership check among 10,000 is one primary-key probe, and a user's
 * `groups` attribute is one lookup on (user_id).
 */
export class ScimGroups1763780000700 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const t = portableTypes(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'scim_groups',
        columns: [
          { name: 'id', ...t.uuid, isPrimary: true },
          { name: 'display_name', type: 'varchar', length: '256' },
          { name: 'display_name_lower', type: 'varchar', length: '256' },
          { name: 'external_id', type: 'varchar', length: '256', isNullable: true },
          { name: 'version', type: 'integer' },
          { name: 'created_at', ...t.instant },
          { name: 'last_modified', ...t.instant },
        ],
        indices: [
          new TableIndex({
            name: 'UQ_scim_groups_display_name_lower',
            columnNames: ['display_name_lower'],
            isUnique: true,
          }),
          new TableIndex({ name: 'IX_scim_groups_external_id', columnNames: ['external_id'] }),
          new TableIndex({ name: 'IX_scim_groups_created_at_id', columnNames: ['created_at', 'id'] }),
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'scim_group_members',
        columns: [
          { name: 'group_id', ...t.uuid, isPrimary: true },
          { name: 'user_id', ...t.uuid, isPrimary: true },
        ],
        indices: [new TableIndex({ name: 'IX_scim_group_members_user_id', columnNames: ['user_id'] })],
        foreignKeys: [
          new TableForeignKey({
            name: 'FK_scim_group_members_group',
            columnNames: ['group_id'],
            referencedTableName: 'scim_groups',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          }),
          new TableForeignKey({
            name: 'FK_scim_group_members_user',
            columnNames: ['user_id'],
            referencedTableName: 'scim_users',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          }),
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('scim_group_members');
    await queryRunner.dropTable('scim_groups');
  }
}
