// Column types for migrations that run on both SQLite and PostgreSQL (mirrors src/database/portable-columns.ts).
import type { QueryRunner } from 'typeorm';
import { columnType, type Dialect } from '../src/database/portable-columns.js';

export function portableTypes(queryRunner: QueryRunner) {
  const dialect: Dialect = queryRunner.connection.driver.options.type === 'postgres' ? 'postgres' : 'sqlite';
  return {
    dialect,
    instant: { type: columnType('instant', dialect) },
    uuid: dialect === 'postgres' ? { type: 'uuid' } : { type: 'varchar', length: '36' },
    json: { type: columnType('json', dialect) },
  };
}
