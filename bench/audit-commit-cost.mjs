// What one audit event adds to a commit, without the HTTP layer: the real, migrated database
// of the built service, transactions through its DataSource, each inserting one ~120-byte row into a scratch
// table, and then, alternating per round (so load from other processes falls on all three alike):
//   none:    nothing more
//   indexed: the event INSERTed into a copy of audit_events (table + its six filter indexes: the write path before
//            the tail)
//   tail:    the event INSERTed into audit_events_tail (primary key only: the write path now; folded later)
// The fold's timer runs as in the service, so its cost lands in the rounds it runs in; with --fold-between-rounds
// the timer is stopped and the tail folded between rounds, untimed (the write path alone, and the fold's own time
// per event, printed apart).
// Run after `npm run build`:  node bench/audit-commit-cost.mjs [--rounds 20] [--commits 200] [--fold-between-rounds]
// DATABASE_URL=postgres://… runs on a fresh PostgreSQL database created next to the one it names (dropped after).
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { builtService, hostLine, scratchDatabase } from './support/scratch-database.mjs';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '20' },
    commits: { type: 'string', default: '200' },
    'fold-between-rounds': { type: 'boolean', default: false },
  },
});
const ROUNDS = Number(values.rounds);
const COMMITS = Number(values.commits);

const dist = builtService();
const { loadConfig } = await import(dist('src/config/config.js'));
const { createApp } = await import(dist('src/create-app.js'));
const { createRootLogger } = await import(dist('src/logging/logger.js'));
const { writeAuditEvent, AUDIT_TAIL } = await import(dist('src/audit/audit-trail.js'));
const { systemSource } = await import(dist('src/audit/audit-source.js'));
const { AuditFold } = await import(dist('src/audit/audit-fold.js'));

const database = await scratchDatabase('audit-commit-cost');
const config = loadConfig({
  DATA_DIR: database.dataDir,
  DATABASE_URL: database.databaseUrl,
  API_KEYS: 'bench-admin-key-0123456789abcdef',
  LOG_LEVEL: 'warn',
});
const { app, dataSource } = await createApp(config, createRootLogger('warn'));
await dataSource.query('CREATE TABLE bench_rows (id varchar(36) PRIMARY KEY, payload text)');
const postgres = dataSource.options.type === 'postgres';
// A copy of audit_events with its six indexes, for the "indexed" mode: writing into audit_events itself would take
// ids the tail has not folded yet (SQLite), and the fold would then meet them.
const INDEXED = 'bench_audit_indexed';
if (postgres) {
  await dataSource.query(`CREATE TABLE ${INDEXED} (LIKE audit_events INCLUDING ALL)`);
} else {
  const schema = await dataSource.query(
    "SELECT sql FROM sqlite_master WHERE tbl_name = 'audit_events' AND type IN ('table', 'index') AND sql IS NOT NULL ORDER BY type DESC",
  );
  for (const { sql } of schema)
    await dataSource.query(
      sql.replaceAll('"audit_events"', `"${INDEXED}"`).replaceAll('IX_audit_events', `IX_${INDEXED}`),
    );
}
const payload = 'x'.repeat(84);
const by = systemSource('bench');

const modes = { none: undefined, indexed: INDEXED, tail: AUDIT_TAIL };
/** Mean µs per commit of `COMMITS` sequential transactions. */
async function round(table) {
  const started = performance.now();
  for (let index = 0; index < COMMITS; index++) {
    await dataSource.transaction(async (manager) => {
      const id = crypto.randomUUID();
      await manager.query(`INSERT INTO bench_rows (id, payload) VALUES (${postgres ? '$1, $2' : '?, ?'})`, [
        id,
        payload,
      ]);
      if (table !== undefined)
        await writeAuditEvent(
          manager,
          { by, action: 'schedule.create', resourceType: 'Schedule', resourceId: id, detail: { items: 1 } },
          table,
        );
    });
  }
  return ((performance.now() - started) * 1000) / COMMITS;
}

const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
console.log(`audit-commit-cost: ${hostLine()}, ${config.database.type}`);
console.log(`${ROUNDS} rounds × ${COMMITS} commits per mode, modes rotated each round`);
for (const table of Object.values(modes)) await round(table); // warm-up, discarded
const results = { none: [], indexed: [], tail: [] };
const folder = app.get(AuditFold).folder;
const foldApart = values['fold-between-rounds'];
if (foldApart) await folder.stop();
let foldMs = 0;
let folded = 0;
const names = Object.keys(modes);
for (let index = 0; index < ROUNDS; index++) {
  for (let step = 0; step < names.length; step++) {
    const name = names[(index + step) % names.length];
    results[name].push(await round(modes[name]));
    if (foldApart) {
      const started = performance.now();
      folded += await folder.fold();
      foldMs += performance.now() - started;
    }
  }
}
const none = median(results.none);
for (const name of names) {
  const value = median(results[name]);
  const added = value - none;
  console.log(
    `${name.padEnd(8)} ${value.toFixed(0).padStart(6)} µs per commit   ${added >= 0 ? '+' : ''}${added.toFixed(0)} µs (${((value / none - 1) * 100).toFixed(1)}%)  (median of round means)`,
  );
}
if (foldApart)
  console.log(`fold: ${((foldMs * 1000) / Math.max(folded, 1)).toFixed(0)} µs per event (${folded} events)`);
await app.close();
await database.drop();
