import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { portableTypes } from './portable-types.js';

/**
 * `Idempotency-Key` records of the creating POSTs (src/http/idempotency.ts): one per caller, route and key, written
 * in the transaction that creates the resource and completed with the answer; deleted after 24 h.
 */
export class IdempotencyKeys1763780001100 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const types = portableTypes(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'idempotency_keys',
        columns: [
          { name: 'caller', type: 'varchar', length: '100', isPrimary: true },
          { name: 'route', type: 'varchar', length: '200', isPrimary: true },
          { name: 'idempotency_key', type: 'varchar', length: '255', isPrimary: true },
          { name: 'fingerprint', type: 'varchar', length: '64' },
          { name: 'state', type: 'varchar', length: '16' },
          { name: 'status_code', type: 'integer', isNullable: true },
          { name: 'response_headers', type: 'text', isNullable: true },
          { name: 'response_body', type: 'text', isNullable: true },
          { name: 'created_at', ...types.instant },
          { name: 'completed_at', ...types.instant, isNullable: true },
        ],
        indices: [new TableIndex({ name: 'IX_idempotency_keys_created_at', columnNames: ['created_at'] })],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('idempotency_keys');
  }
}
