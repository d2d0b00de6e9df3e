import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { portableTypes } from './portable-types.js';

/** Replication diagnostics (docs/replication.md): servers, nodes, change sets, watermarks, apply history, apply errors. */
export class Replication1763780000400 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const t = portableTypes(queryRunner);
    const name = (column: string, primary = false) => ({
      name: column,
      type: 'varchar',
      length: '200',
      ...(primary ? { isPrimary: true } : {}),
    });
    await queryRunner.createTable(
      new Table({
        name: 'replication_servers',
        columns: [
          name('id', true),
          name('name'),
          { name: 'registered_at', ...t.instant },
          { name: 'decommissioned_at', ...t.instant, isNullable: true },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'replication_nodes',
        columns: [
          name('id', true),
          name('server_id'),
          name('name'),
          { name: 'registered_at', ...t.instant },
          { name: 'last_seen_at', ...t.instant, isNullable: true },
          { name: 'last_heartbeat_at', ...t.instant, isNullable: true },
          { name: 'agent_version', type: 'varchar', length: '100', isNullable: true },
          { name: 'decommissioned_at', ...t.instant, isNullable: true },
        ],
        indices: [new TableIndex({ name: 'IX_replication_nodes_server_id', columnNames: ['server_id'] })],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'replication_change_sets',
        withoutRowid: true,
        columns: [
          name('collection', true),
          name('origin', true),
          { name: 'number', type: 'bigint', isPrimary: true },
          { name: 'created_at', ...t.instant },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'replication_watermarks',
        withoutRowid: true,
        columns: [
          name('node_id', true),
          name('collection', true),
          name('origin', true),
          { name: 'applied', type: 'bigint' },
          { name: 'applied_at', ...t.instant },
        ],
        indices: [
          new TableIndex({
            name: 'IX_replication_watermarks_collection_origin',
            columnNames: ['collection', 'origin', 'applied'],
          }),
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'replication_applies',
        withoutRowid: true,
        columns: [
          name('collection', true),
          name('origin', true),
          name('node_id', true),
          { name: 'applied', type: 'bigint', isPrimary: true },
          { name: 'applied_at', ...t.instant },
        ],
        indices: [
          new TableIndex({
            name: 'IX_replication_applies_collection_origin_applied',
            columnNames: ['collection', 'origin', 'applied'],
          }),
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'replication_errors',
        columns: [
          { name: 'id', ...t.uuid, isPrimary: true },
          name('node_id'),
          name('collection'),
          name('origin'),
          { name: 'change_set', type: 'bigint' },
          { name: 'code', type: 'varchar', length: '100' },
          { name: 'message', type: 'varchar', length: '2000' },
          { name: 'data', type: 'text', isNullable: true },
          { name: 'occurred_at', ...t.instant },
          { name: 'received_at', ...t.instant },
        ],
        indices: [
          new TableIndex({
            name: 'UQ_replication_errors_occurrence',
            columnNames: ['node_id', 'collection', 'origin', 'change_set', 'code', 'occurred_at'],
            isUnique: true,
          }),
          new TableIndex({
            name: 'IX_replication_errors_collection_origin',
            columnNames: ['collection', 'origin', 'change_set'],
          }),
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of [
      'replication_errors',
      'replication_applies',
      'replication_watermarks',
      'replication_change_sets',
      'replication_nodes',
      'replication_servers',
    ]) {
      await queryRunner.dropTable(table);
    }
  }
}
