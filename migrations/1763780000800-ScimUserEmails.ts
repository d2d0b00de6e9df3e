import { Table, TableForeignKey, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { portableTypes } from './portable-types.js';

const KEY_LENGTH = 200;
const BATCH = 500;

interface EmailRow {
  userId: string;
  position: number;
  value: string | null;
  valueKey: string | null;
  type: string | null;
  primary: boolean | null;
}

// A copy of src/scim/user-email-rows.ts as it was when this migration landed (a migration never changes after).
function valueKey(value: string): string {
  if (value.length <= KEY_LENGTH) return value;
  const cut = value.slice(0, KEY_LENGTH);
  const last = cut.charCodeAt(cut.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut;
}

function rowsOf(userId: string, attributes: unknown): EmailRow[] {
  const document: unknown = typeof attributes === 'string' ? JSON.parse(attributes) : attributes;
  if (typeof document !== 'object' || document === null) return [];
  const emails = (document as Record<string, unknown>)['emails'];
  if (!Array.isArray(emails)) return [];
  const rows: EmailRow[] = [];
  emails.forEach((element: unknown, position) => {
    if (typeof element !== 'object' || element === null || Array.isArray(element)) return;
    const email = element as Record<string, unknown>;
    const value = typeof email['value'] === 'string' ? email['value'].toLowerCase() : null;
    const type = typeof email['type'] === 'string' ? email['type'].toLowerCase() : null;
    const primary = typeof email['primary'] === 'boolean' ? email['primary'] : null;
    rows.push({ userId, position, value, valueKey: value === null ? null : valueKey(value), type, primary });
  });
  return rows;
}

/**
 * The elements of every user's `emails` in a table of their own (src/scim/entities/scim-user-email.entity.ts), so
 * that e-mail filters are index lookups instead of a scan of every user's JSON (the scan took ~74–100 ms among 100,000
 * users). Backfilled here from the users already stored; on PostgreSQL a pg_trgm GIN index on `value` serves
 * `co`/`sw`/`ew` when the extension can be created (it is trusted since PostgreSQL 13; without it those filters
 * scan the narrow table instead).
 */
export class ScimUserEmails1763780000800 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const t = portableTypes(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'scim_user_emails',
        columns: [
          { name: 'user_id', ...t.uuid, isPrimary: true },
          { name: 'position', type: 'integer', isPrimary: true },
          { name: 'value', type: 'text', isNullable: true },
          { name: 'value_key', type: 'varchar', length: String(KEY_LENGTH), isNullable: true },
          { name: 'type', type: 'text', isNullable: true },
          { name: 'is_primary', type: 'boolean', isNullable: true },
        ],
        indices: [new TableIndex({ name: 'IX_scim_user_emails_value_key', columnNames: ['value_key'] })],
        foreignKeys: [
          new TableForeignKey({
            name: 'FK_scim_user_emails_user',
            columnNames: ['user_id'],
            referencedTableName: 'scim_users',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          }),
        ],
      }),
    );
    await this.backfill(queryRunner, t.dialect);
    if (t.dialect === 'postgres' && (await this.createTrigramExtension(queryRunner))) {
      await queryRunner.query(
        'CREATE INDEX "IX_scim_user_emails_value_trgm" ON "scim_user_emails" USING gin ("value" gin_trgm_ops)',
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('scim_user_emails');
  }

  /** True when pg_trgm is (now) installed; a refusal (no privilege, not available) leaves the transaction usable. */
  private async createTrigramExtension(queryRunner: QueryRunner): Promise<boolean> {
    const guarded = queryRunner.isTransactionActive;
    if (guarded) await queryRunner.query('SAVEPOINT scim_user_emails_trgm');
    try {
      await queryRunner.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
      if (guarded) await queryRunner.query('RELEASE SAVEPOINT scim_user_emails_trgm');
      return true;
    } catch {
      if (guarded) await queryRunner.query('ROLLBACK TO SAVEPOINT scim_user_emails_trgm');
      return false;
    }
  }

  private async backfill(queryRunner: QueryRunner, dialect: 'sqlite' | 'postgres'): Promise<void> {
    const placeholder = (index: number): string => (dialect === 'postgres' ? `$${String(index + 1)}` : '?');
    let after: string | null = null;
    for (;;) {
      const users = (await queryRunner.query(
        after === null
          ? `SELECT "id", "attributes" FROM "scim_users" ORDER BY "id" LIMIT ${String(BATCH)}`
          : `SELECT "id", "attributes" FROM "scim_users" WHERE "id" > ${placeholder(0)} ORDER BY "id" LIMIT ${String(BATCH)}`,
        after === null ? [] : [after],
      )) as Array<{ id: string; attributes: unknown }>;
      if (users.length === 0) return;
      after = users[users.length - 1]?.id ?? null;
      const rows = users.flatMap((user) => rowsOf(user.id, user.attributes));
      for (let start = 0; start < rows.length; start += 100) {
        const chunk = rows.slice(start, start + 100);
        const parameters: unknown[] = [];
        const tuples = chunk.map((row) => {
          const values = [
            row.userId,
            row.position,
            row.value,
            row.valueKey,
            row.type,
            dialect === 'sqlite' && row.primary !== null ? Number(row.primary) : row.primary,
          ];
          const at = parameters.length;
          parameters.push(...values);
          return `(${values.map((_, index) => placeholder(at + index)).join(', ')})`;
        });
        await queryRunner.query(
          `INSERT INTO "scim_user_emails" ("user_id", "position", "value", "value_key", "type", "is_primary") VALUES ${tuples.join(', ')}`,
          parameters,
        );
      }
    }
  }
}
