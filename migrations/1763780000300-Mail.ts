import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { portableTypes } from './portable-types.js';

/** SMTP configurations of the mail area (docs/mail.md). */
export class Mail1763780000300 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const t = portableTypes(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'smtp_configurations',
        columns: [
          { name: 'id', ...t.uuid, isPrimary: true },
          { name: 'tenant', type: 'varchar', length: '253' },
          { name: 'host', type: 'varchar', length: '253' },
          { name: 'port', type: 'integer' },
          { name: 'username', type: 'varchar', length: '255' },
          { name: 'ssl', type: 'boolean' },
          { name: 'auth_required', type: 'boolean' },
          { name: 'allow_invalid_certificate', type: 'boolean' },
          { name: 'password_ciphertext', type: 'text', isNullable: true },
          { name: 'internal_password_ciphertext', type: 'text', isNullable: true },
          { name: 'sender_address', type: 'varchar', length: '320' },
          { name: 'priority', type: 'integer' },
          { name: 'enabled', type: 'boolean' },
          { name: 'bcc', ...t.json },
          { name: 'created_at', ...t.instant },
          { name: 'updated_at', ...t.instant },
        ],
        indices: [
          new TableIndex({
            name: 'UQ_smtp_configurations_identity',
            columnNames: ['tenant', 'host', 'port', 'username'],
            isUnique: true,
          }),
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('smtp_configurations');
  }
}
