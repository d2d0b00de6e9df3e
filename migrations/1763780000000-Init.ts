import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { portableTypes } from './portable-types.js';

/** API keys and the migration-run history. */
export class Init1763780000000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const t = portableTypes(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'api_keys',
        columns: [
          { name: 'id', ...t.uuid, isPrimary: true },
          { name: 'name', type: 'varchar', length: '100' },
          { name: 'key_hash', type: 'varchar', length: '64' },
          { name: 'key_prefix', type: 'varchar', length: '16' },
          { name: 'scopes', type: 'varchar', length: '200' },
          { name: 'created_at', ...t.instant },
          { name: 'revoked_at', ...t.instant, isNullable: true },
        ],
        indices: [
          new TableIndex({ name: 'UQ_api_keys_key_hash', columnNames: ['key_hash'], isUnique: true }),
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'migration_runs',
        columns: [
          { name: 'id', ...t.uuid, isPrimary: true },
          { name: 'migration', type: 'varchar', length: '255' },
          { name: 'migration_source', type: 'varchar', length: '500' },
          { name: 'started_at', ...t.instant },
          { name: 'status', type: 'varchar', length: '20' },
          { name: 'details', ...t.json },
        ],
        indices: [
          new TableIndex({
            name: 'IX_migration_runs_migration_started',
            columnNames: ['migration', 'started_at'],
          }),
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('migration_runs');
    await queryRunner.dropTable('api_keys');
  }
}
