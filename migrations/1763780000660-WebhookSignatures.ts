import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/** Replay protection of the device webhook: each accepted (keyId, signature) for 600 s, shared by instances. */
export class WebhookSignatures1763780000660 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'webhook_signatures',
        columns: [
          { name: 'id', type: 'varchar', length: '64', isPrimary: true },
          { name: 'expires_at', type: 'bigint' },
          { name: 'reply', type: 'text', isNullable: true },
        ],
        indices: [new TableIndex({ name: 'IX_webhook_signatures_expires_at', columnNames: ['expires_at'] })],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('webhook_signatures');
  }
}
