import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';
import { columnType } from '../src/database/portable-columns.js';
import { portableTypes } from './portable-types.js';

/**
 * Before this migration, on PostgreSQL every statement writing schedules (or SCIM users) updated the one stats row
 * (1763780001250, 1763780000900), so each writer waited for the row lock of the longest open writer — a 20,000-event
 * import held every POST /Schedule of every instance for its ~5 s. The statement-level triggers now INSERT a delta
 * row (count delta, generation bumps) into a table of their own instead: inserts never wait for one another. Readers
 * add the deltas to the base row in one statement (one snapshot: exact), and a background fold
 * (src/database/counter-deltas.ts) moves them into the base row so the delta tables stay small.
 *
 * A trigger writes no delta while the base row is missing (as the UPDATE … WHERE id = 1 it replaces touched
 * nothing): db:copy loads the counted tables before the stats tables, and the source's deltas are then copied as
 * they are (migrations/tables.ts). SQLite keeps its row triggers (one writer at a time anyway); its delta tables
 * exist so that both engines share the readers' SQL and the entities, and receive rows only from a copy.
 */
interface Counter {
  /** The counted table. */
  table: string;
  stats: string;
  deltas: string;
  /** The column counting rows, then the generations. */
  count: string;
  generations: readonly string[];
  /** Each trigger function: its transition table and, per column, what one statement adds (`n`: rows changed). */
  functions: ReadonlyArray<{ name: string; transition: string; adds: readonly string[] }>;
  truncated: string;
}

const COUNTERS: readonly Counter[] = [
  {
    table: 'schedules',
    stats: 'schedule_stats',
    deltas: 'schedule_stats_deltas',
    count: 'schedule_count',
    generations: ['order_generation', 'change_generation'],
    functions: [
      { name: 'schedule_stats_inserted', transition: 'inserted_schedules', adds: ['n', '1', '0'] },
      { name: 'schedule_stats_deleted', transition: 'deleted_schedules', adds: ['-n', '1', '1'] },
      { name: 'schedule_stats_updated', transition: 'updated_schedules', adds: ['0', '0', '1'] },
    ],
    truncated: 'schedule_stats_truncated',
  },
  {
    table: 'scim_users',
    stats: 'scim_user_stats',
    deltas: 'scim_user_stats_deltas',
    count: 'user_count',
    generations: ['order_generation'],
    functions: [
      { name: 'scim_user_stats_inserted', transition: 'inserted_users', adds: ['n', '1'] },
      { name: 'scim_user_stats_deleted', transition: 'deleted_users', adds: ['-n', '1'] },
    ],
    truncated: 'scim_user_stats_truncated',
  },
];

const columnsOf = (counter: Counter) => [counter.count, ...counter.generations];

/** A statement-level trigger function whose body runs `statement` when the statement changed rows (`n` of them). */
const triggerFunction = (name: string, transition: string, statement: string) => `
  CREATE OR REPLACE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE n integer;
  BEGIN
    SELECT COUNT(*) INTO n FROM ${transition};
    IF n > 0 THEN ${statement}; END IF;
    RETURN NULL;
  END $$`;

const plainFunction = (name: string, statement: string) => `
  CREATE OR REPLACE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN ${statement}; RETURN NULL; END $$`;

/** Moves every delta into the base row (one statement); `reset` also sets the count to 0 and bumps generations. */
function foldStatement(counter: Counter, reset: boolean): string {
  const sets = columnsOf(counter).map((column) => {
    const folded = `COALESCE((SELECT SUM(${column}) FROM folded), 0)`;
    if (!reset) return `${column} = ${column} + ${folded}`;
    return column === counter.count ? `${column} = 0` : `${column} = ${column} + 1 + ${folded}`;
  });
  return `WITH folded AS (DELETE FROM ${counter.deltas} RETURNING ${columnsOf(counter).join(', ')})
          UPDATE ${counter.stats} SET ${sets.join(', ')} WHERE id = 1`;
}

export class CounterDeltas1763780001600 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const { dialect } = portableTypes(queryRunner);
    for (const counter of COUNTERS) {
      await queryRunner.createTable(
        new Table({
          name: counter.deltas,
          columns: [
            {
              name: 'id',
              type: columnType('identity', dialect),
              isPrimary: true,
              isGenerated: true,
              generationStrategy: 'increment',
            },
            { name: counter.count, type: 'integer' },
            ...counter.generations.map((name) => ({ name, type: 'bigint' })),
          ],
        }),
      );
      if (dialect !== 'postgres') continue;
      for (const { name, transition, adds } of counter.functions) {
        const insert = `IF EXISTS (SELECT 1 FROM ${counter.stats} WHERE id = 1) THEN
            INSERT INTO ${counter.deltas} (${columnsOf(counter).join(', ')}) VALUES (${adds.join(', ')}); END IF`;
        await queryRunner.query(triggerFunction(name, transition, insert));
      }
      await queryRunner.query(plainFunction(counter.truncated, foldStatement(counter, true)));
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const { dialect } = portableTypes(queryRunner);
    for (const counter of COUNTERS) {
      if (dialect === 'postgres') {
        // No writer of the counted table may add a delta between the fold and the drop.
        await queryRunner.query(`LOCK TABLE ${counter.table} IN SHARE MODE`);
        for (const { name, transition, adds } of counter.functions) {
          const sets = columnsOf(counter)
            .map((column, index) => [column, adds[index]])
            .filter(([, add]) => add !== '0')
            .map(([column, add]) => `${column} = ${column} + ${add}`);
          await queryRunner.query(
            triggerFunction(name, transition, `UPDATE ${counter.stats} SET ${sets.join(', ')} WHERE id = 1`),
          );
        }
        const resets = columnsOf(counter).map((column) =>
          column === counter.count ? `${column} = 0` : `${column} = ${column} + 1`,
        );
        await queryRunner.query(
          plainFunction(counter.truncated, `UPDATE ${counter.stats} SET ${resets.join(', ')} WHERE id = 1`),
        );
        await queryRunner.query(foldStatement(counter, false));
      } else {
        const sets = columnsOf(counter).map(
          (column) => `${column} = ${column} + COALESCE((SELECT SUM(${column}) FROM ${counter.deltas}), 0)`,
        );
        await queryRunner.query(`UPDATE ${counter.stats} SET ${sets.join(', ')} WHERE id = 1`);
      }
      await queryRunner.dropTable(counter.deltas);
    }
  }
}
