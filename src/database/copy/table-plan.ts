// Which tables a copy or a comparison covers, with which columns and kinds: the declared list
// (migrations/tables.ts) as it exists on both databases.
import { TABLES, type TableSpec } from '../../../migrations/tables.js';
import { mergeKinds } from './column-values.js';
import type { ColumnInfo, Schema } from './raw-database.js';

export interface PlannedTable {
  spec: TableSpec;
  columns: ColumnInfo[];
  primaryKey: string[];
}

/** Tables in declared order present in `b`; a table or column only one side has is an error (schema drift). */
export function planTables(a: Schema, b: Schema, aName: string, bName: string): PlannedTable[] {
  const plan: PlannedTable[] = [];
  for (const spec of TABLES) {
    const left = a.get(spec.name);
    const right = b.get(spec.name);
    if (!left && !right) continue;
    if (!left || !right) {
      throw new Error(
        `table ${spec.name} exists in ${left ? aName : bName} only (different schema versions?)`,
      );
    }
    const kinds = new Map(left.columns.map((column) => [column.name, column.kind]));
    const columns = right.columns
      .map((column) => {
        const kind = kinds.get(column.name);
        if (kind === undefined) throw new Error(`column ${spec.name}.${column.name} is missing in ${aName}`);
        return { name: column.name, kind: mergeKinds(kind, column.kind) };
      })
      .sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
    if (columns.length !== left.columns.length) {
      throw new Error(`table ${spec.name} has columns in ${aName} that ${bName} lacks`);
    }
    plan.push({ spec, columns, primaryKey: right.primaryKey });
  }
  return plan;
}
