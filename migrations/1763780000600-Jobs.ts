import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Durable background work (src/jobs/): one row per job, claimed by one instance at a time. Instants are epoch
 * milliseconds, so claims compare numbers the same way on both engines. `rate_limits` is the shared rate-limit
 * store (rate-limiter-flexible's PostgreSQL layout) used when RATE_LIMIT_STORE=database.
 */
export class Jobs1763780000600 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'jobs',
        columns: [
          {
            name: 'id',
            type: 'integer',
            isPrimary: true,
            isGenerated: true,
            generationStrategy: 'increment',
          },
          { name: 'kind', type: 'varchar', length: '100' },
          { name: 'queue_key', type: 'varchar', length: '400', isNullable: true },
          { name: 'unique_key', type: 'varchar', length: '400', isNullable: true },
          { name: 'payload', type: 'text' },
          { name: 'state', type: 'varchar', length: '16' },
          { name: 'attempts', type: 'integer', default: 0 },
          { name: 'run_at', type: 'bigint' },
          { name: 'locked_by', type: 'varchar', length: '200', isNullable: true },
          { name: 'locked_until', type: 'bigint', isNullable: true },
          { name: 'last_error', type: 'text', isNullable: true },
          { name: 'correlation_id', type: 'varchar', length: '128', isNullable: true },
          { name: 'created_at', type: 'bigint' },
          { name: 'updated_at', type: 'bigint' },
        ],
        indices: [
          new TableIndex({ name: 'IX_jobs_state_run_at', columnNames: ['state', 'run_at'] }),
          new TableIndex({ name: 'IX_jobs_queue_key_id', columnNames: ['queue_key', 'id'] }),
          new TableIndex({ name: 'UQ_jobs_unique_key', columnNames: ['unique_key'], isUnique: true }),
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'rate_limits',
        columns: [
          { name: 'key', type: 'varchar', length: '255', isPrimary: true },
          { name: 'points', type: 'integer', default: 0 },
          { name: 'expire', type: 'bigint', isNullable: true },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('rate_limits');
    await queryRunner.dropTable('jobs');
  }
}
