import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { portableTypes } from './portable-types.js';

/** The SmartThings webhook's installed apps (tokens encrypted) and the events they received. */
export class DeviceWebhook1763780000500 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const t = portableTypes(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'webhook_installed_apps',
        columns: [
          { name: 'id', ...t.uuid, isPrimary: true },
          { name: 'domain', type: 'varchar', length: '253' },
          { name: 'installed_app_id', type: 'varchar', length: '100' },
          { name: 'app_id', type: 'varchar', length: '100', isNullable: true },
          { name: 'location_id', type: 'varchar', length: '100', isNullable: true },
          { name: 'config', ...t.json },
          { name: 'permissions', ...t.json },
          { name: 'auth_token', type: 'text', isNullable: true },
          { name: 'auth_token_expires_at', ...t.instant, isNullable: true },
          { name: 'refresh_token', type: 'text', isNullable: true },
          { name: 'installed_at', ...t.instant },
          { name: 'updated_at', ...t.instant },
        ],
        indices: [
          new TableIndex({
            name: 'UQ_webhook_installed_apps_domain_app',
            columnNames: ['domain', 'installed_app_id'],
            isUnique: true,
          }),
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'webhook_device_events',
        columns: [
          { name: 'id', ...t.uuid, isPrimary: true },
          { name: 'domain', type: 'varchar', length: '253' },
          { name: 'installed_app_id', type: 'varchar', length: '100' },
          { name: 'event_id', type: 'varchar', length: '200' },
          { name: 'event_type', type: 'varchar', length: '50' },
          { name: 'event_time', type: 'varchar', length: '64', isNullable: true },
          { name: 'received_at', ...t.instant },
          { name: 'payload', ...t.json },
        ],
        indices: [
          new TableIndex({
            name: 'UQ_webhook_device_events_app_event',
            columnNames: ['domain', 'installed_app_id', 'event_id'],
            isUnique: true,
          }),
          new TableIndex({
            name: 'IX_webhook_device_events_app_received',
            columnNames: ['domain', 'installed_app_id', 'received_at'],
          }),
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('webhook_device_events');
    await queryRunner.dropTable('webhook_installed_apps');
  }
}
