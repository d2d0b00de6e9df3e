import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/** Tenant-bound API keys: the tenants (domains) a key may act for; null = every tenant. */
export class ApiKeyDomains1763780000650 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn(
      'api_keys',
      new TableColumn({ name: 'domains', type: 'varchar', length: '2000', isNullable: true }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumn('api_keys', 'domains');
  }
}
