// Every table the migrations create, in dependency order (a table after the tables its foreign keys name), with
// what db:copy / db:restore must do beyond copying its rows. Declared here, beside the migrations, so a new table
// is added in the same change that creates it: migrations/tables.spec.ts fails when a migrated database has a
// table this list does not name.
//
// How a copy uses it (src/database/copy/): the target is migrated to the source's schema version, every listed
// table is emptied (all at once on PostgreSQL, in reverse order on SQLite), then each table is loaded in this
// order inside one transaction, then every `afterLoad` statement runs, then the `sequence` columns are set.
//
// Trigger-kept tables (counters and generations written by triggers on other tables) are listed AFTER the tables
// whose triggers write them: while they are empty, those triggers' `UPDATE … WHERE id = 1` touch nothing, so
// loading never double-counts; their own rows (counts and generations) then come from the source, and `afterLoad`
// re-derives the counts from the loaded rows. A counter kept as delta rows (migration 1763780001600) lists its delta
// table after its base table; its triggers insert no delta while the base row is missing, so the delta rows are the
// source's, copied as they are (folding them here would make the target differ from the source snapshot the copy
// is verified against), and `afterLoad` re-derives the base count as COUNT(*) minus the deltas' sum.
export interface TableSpec {
  name: string;
  /** An auto-increment column: after the load its sequence continues after max(source sequence, max(column)). */
  sequence?: string;
  /** SQL run once after every table is loaded, in list order (the same text on SQLite and PostgreSQL). */
  afterLoad?: readonly string[];
  /** SQL run on a PostgreSQL target after every sequence is set, in list order. */
  afterSequencesOnPostgres?: readonly string[];
  /** The migrations themselves write rows here: rows in it do not make a database "hold data". */
  migrationRows?: true;
}

export const TABLES: readonly TableSpec[] = [
  // Schema history: copied, not recreated, so migration:status and getMigrationRuns answer as on the source.
  { name: 'migrations', sequence: 'id', migrationRows: true },
  { name: 'migration_runs', migrationRows: true },
  { name: 'api_keys' },
  { name: 'schedules' },
  { name: 'schedule_items' },
  { name: 'recurrences' },
  { name: 'recurrence_exceptions' },
  { name: 'scim_users' },
  { name: 'scim_user_emails' },
  { name: 'scim_groups' },
  { name: 'scim_group_members' },
  { name: 'smtp_configurations' },
  { name: 'replication_servers' },
  { name: 'replication_nodes' },
  { name: 'replication_change_sets' },
  { name: 'replication_watermarks' },
  { name: 'replication_applies' },
  { name: 'replication_errors' },
  { name: 'webhook_installed_apps' },
  { name: 'webhook_device_events' },
  { name: 'webhook_signatures' },
  { name: 'jobs', sequence: 'id' },
  { name: 'rate_limits' },
  { name: 'idempotency_keys' },
  // Append-only (PostgreSQL refuses UPDATE/DELETE/TRUNCATE unless `platform.audit_maintenance` is on, which the
  // copy sets before it empties the target); plain INSERTs keep the ids. Migrating a target records its migration
  // runs here too, so those rows do not make it "hold data".
  { name: 'audit_events', sequence: 'id', migrationRows: true },
  // Its unindexed tail (migration 1763780001800), copied as it is (the target's fold moves it on); its sequence is
  // the one new events draw from. On PostgreSQL the two sequences step by 2 on opposite parities so their ids never
  // collide (the fold keeps ids); each set from its own table could land on one parity (a SQLite source has one
  // sequence for both): as the migration does, audit_events' goes on from the last id of either table, the tail's
  // from one past it.
  {
    name: 'audit_events_tail',
    sequence: 'id',
    migrationRows: true,
    afterSequencesOnPostgres: [
      `DO $$
        DECLARE events text := pg_get_serial_sequence('audit_events', 'id');
          tail text := pg_get_serial_sequence('audit_events_tail', 'id'); last bigint;
        BEGIN
          EXECUTE format('SELECT GREATEST((SELECT last_value FROM %s), (SELECT last_value FROM %s))', events, tail)
            INTO last;
          PERFORM setval(events, last, true);
          PERFORM setval(tail, last + 1, false);
        END $$`,
    ],
  },
  // Trigger-kept (see above): after schedules and scim_users.
  {
    name: 'schedule_stats',
    migrationRows: true,
    afterLoad: [
      `UPDATE schedule_stats SET schedule_count = (SELECT COUNT(*) FROM schedules)
         - (SELECT COALESCE(SUM(schedule_count), 0) FROM schedule_stats_deltas)`,
    ],
  },
  // Derived, not data (like the base rows): deltas left after every schedule is deleted do not make a target "hold
  // data". Folded into the base row by the service (src/database/counter-deltas.ts).
  { name: 'schedule_stats_deltas', sequence: 'id', migrationRows: true },
  {
    name: 'scim_user_stats',
    migrationRows: true,
    afterLoad: [
      `UPDATE scim_user_stats SET user_count = (SELECT COUNT(*) FROM scim_users)
         - (SELECT COALESCE(SUM(user_count), 0) FROM scim_user_stats_deltas)`,
    ],
  },
  { name: 'scim_user_stats_deltas', sequence: 'id', migrationRows: true },
];

/** Tables of the engine or of db:backup itself, never part of the service's data (the SQLite schema read skips every
 * `sqlite_` name: sqlite_sequence, the sqlite_stat tables of ANALYZE). */
export const NOT_DATA_TABLES: readonly string[] = ['sqlite_sequence', 'backup_info'];
