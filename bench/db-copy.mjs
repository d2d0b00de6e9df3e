// db:copy and db:backup at size, the built CLI (dist/src/cli.js) run as an operator would, in
// its own process:
//   seed    a SQLite database (a temp file) migrated by the service (createApp from dist/), then written straight
//           into the tables: 100,000 schedules (1 item, a weekly rule, 1 exception each; support/seed-schedules.mjs),
//           100,000 SCIM users with one e-mail each, 1,000 groups of 100 members — all × --scale;
//   copy    `db:copy --to <fresh PostgreSQL database>`: wall time from spawn to exit (CLI start, migrating the
//           target, loading, the verification against the snapshot) and the copy's own `seconds=`; the CLI
//           process's peak RSS, VmHWM of /proc/<pid>/status read every 50 ms (the last reading before it exits);
//   anchor  `pg_dump -Fc <that database> | pg_restore --no-owner -d <another fresh database>` of the same data in
//           the same run: wall time of the pipe;
//   backup  the service listens on 127.0.0.1; `db:backup <file>` alone (idle), then 8 clients (one process,
//           support/http-load.mjs) POST schedules back to back for 6 s without a backup (their p99), then again
//           while `db:backup` runs: the backup's wall time and the p99 of the requests sent while it ran.
// Goals: copy ≤ 30 s; backup ≤ 10 s; p99 during the backup ≤ 2× p99 without; peak RSS < ~300 MB and
// ≤ ~20% more at --scale 5 (run `--scale 5 --only copy` once and compare the two peak RSS lines).
// PostgreSQL: scratch databases on the server of DATABASE_URL (default postgres://postgres@127.0.0.1:5432/
// postgres), named after its database, dropped at the end (--keep keeps them and the SQLite file).
// Run after `npm run build`: `node bench/db-copy.mjs [--scale 1] [--only copy,anchor,backup] [--keep]`.
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { load } from './support/http-sampler-client.mjs';
import { builtService, hostLine, scratchDatabase } from './support/scratch-database.mjs';
import { seedSchedules } from './support/seed-schedules.mjs';

const { values: args } = parseArgs({
  options: {
    scale: { type: 'string', default: '1' },
    only: { type: 'string', default: 'copy,anchor,backup' },
    dist: { type: 'string', default: 'dist' },
    keep: { type: 'boolean', default: false },
  },
});
const scale = Number(args.scale);
const only = new Set(args.only.split(','));
const pgServer = process.env.DATABASE_URL?.startsWith('postgres')
  ? process.env.DATABASE_URL
  : 'postgres://postgres@127.0.0.1:5432/postgres';
const counts = { schedules: 100_000 * scale, users: 100_000 * scale, groups: 1_000 * scale, members: 100 };
const GOALS = { copySeconds: 30, backupSeconds: 10, p99Ratio: 2, rssMb: 300 };

const dist = builtService(args.dist);
const cli = dist('src/cli.js');
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { loadConfig } = await import(dist('src/config/config.js'));
const { createApp } = await import(dist('src/create-app.js'));
const { createRootLogger } = await import(dist('src/logging/logger.js'));
const { ScimUserEntity } = await import(dist('src/scim/entities/scim-user.entity.js'));
const { ScimUserEmailEntity } = await import(dist('src/scim/entities/scim-user-email.entity.js'));
const { ScimGroupEntity, ScimGroupMemberEntity } = await import(
  dist('src/scim/entities/scim-group.entity.js')
);
const { userEmailRows } = await import(dist('src/scim/user-email-rows.js'));

console.log(`db:copy / db:backup bench, scale ${scale}; ${hostLine()}`);
const source = await scratchDatabase('db-copy', 'sqlite');
const sourceFile = source.databaseUrl.slice('sqlite:'.length);
const apiKey = randomBytes(24).toString('base64url');
const env = { DATABASE_URL: source.databaseUrl, DATA_DIR: source.dataDir, LOG_LEVEL: 'warn' };
const { app, dataSource } = await createApp(
  loadConfig({ ...env, API_KEYS: apiKey, RATE_LIMIT: '0' }),
  createRootLogger('warn'),
);
const cleanups = [() => source.drop()];

// ---- seed ----------------------------------------------------------------------------------------------------------

const seedStart = performance.now();
await seedSchedules(dist, dataSource, counts.schedules);
const userIds = await seedUsers(counts.users);
await seedGroups(userIds);
await dataSource.query('ANALYZE');
await dataSource.query('PRAGMA wal_checkpoint(TRUNCATE)');
console.log(
  `seeded ${counts.schedules.toLocaleString('en')} schedules (1 item, weekly rule, 1 exception each), ` +
    `${counts.users.toLocaleString('en')} SCIM users with an e-mail each, ${counts.groups.toLocaleString('en')} ` +
    `groups of ${counts.members} members in ${seconds(seedStart)} s; ` +
    `SQLite file ${(fs.statSync(sourceFile).size / 2 ** 20).toFixed(0)} MiB`,
);

async function seedUsers(count) {
  const ids = [];
  const epoch = Date.UTC(2026, 0, 1);
  await dataSource.transaction(async (manager) => {
    for (let start = 0; start < count; start += 500) {
      const users = [];
      const emails = [];
      for (let index = start; index < Math.min(start + 500, count); index++) {
        const id = randomUUID();
        ids.push(id);
        const userName = `user${String(index).padStart(7, '0')}@example.com`;
        const attributes = {
          displayName: `User ${index}`,
          emails: [{ type: 'work', value: userName, primary: true }],
        };
        const at = new Date(epoch + index * 1000);
        users.push(
          Object.assign(new ScimUserEntity(), {
            ...{ id, userName, userNameLower: userName, externalId: null, attributes, version: 1 },
            ...{ createdAt: at, lastModified: at },
          }),
        );
        for (const row of userEmailRows(attributes))
          emails.push(Object.assign(new ScimUserEmailEntity(), { userId: id, ...row }));
      }
      await manager.getRepository(ScimUserEntity).insert(users);
      await manager.getRepository(ScimUserEmailEntity).insert(emails);
    }
  });
  return ids;
}

async function seedGroups(users) {
  const now = new Date();
  await dataSource.transaction(async (manager) => {
    for (let group = 0; group < counts.groups; group++) {
      const id = randomUUID();
      const displayName = `Group ${group}`;
      await manager.getRepository(ScimGroupEntity).insert({
        ...{ id, displayName, displayNameLower: displayName.toLowerCase(), externalId: null, version: 1 },
        ...{ createdAt: now, lastModified: now },
      });
      const members = Array.from({ length: counts.members }, (_, index) => ({
        groupId: id,
        userId: users[(group * counts.members + index) % users.length],
      }));
      await manager.getRepository(ScimGroupMemberEntity).insert(members);
    }
  });
}

// ---- measurements --------------------------------------------------------------------------------------------------

const results = {};
try {
  if (only.has('copy') || only.has('anchor')) await measureCopy();
  if (only.has('backup')) await measureBackup();
} finally {
  await app.close();
  if (args.keep) console.log(`kept: ${source.databaseUrl} and the PostgreSQL databases named above`);
  else for (const cleanup of cleanups.reverse()) await cleanup();
}
summarise();

async function scratchPostgres(name) {
  const database = await scratchDatabase(name, pgServer);
  fs.rmSync(database.dataDir, { recursive: true, force: true });
  cleanups.push(() => database.drop());
  return database.databaseUrl;
}

async function measureCopy() {
  const target = await scratchPostgres('db-copy');
  const copy = await runCli(['db:copy', '--to', target]);
  results.copy = copy;
  const copied = /^copied tables=(\d+) rows=(\d+) /m.exec(copy.stdout);
  console.log(
    `\ncopy SQLite → PostgreSQL (${redact(target)}): ${copy.seconds.toFixed(1)} s from spawn to exit; the ` +
      `command's own figure ${ownSeconds(copy, 'copied')} s for ${Number(copied?.[2] ?? 0).toLocaleString('en')} rows ` +
      `in ${copied?.[1] ?? '?'} tables; peak RSS (VmHWM) ${copy.peakMb.toFixed(0)} MB`,
  );
  for (const line of copy.stdout.split('\n')) {
    const table = /^table=(\S+) rows=(\d+) seconds=([\d.]+)/.exec(line);
    if (table && Number(table[2]) > 0)
      console.log(`  ${table[1].padEnd(26)} ${table[2].padStart(9)} rows ${table[3]} s`);
  }
  if (copy.code !== 0) throw new Error(`db:copy exited with ${copy.code}: ${copy.stderr}`);
  if (!only.has('anchor')) return;
  const restored = await scratchPostgres('db-copy-restore');
  const started = performance.now();
  const pipe = await run('bash', [
    '-c',
    'set -o pipefail; pg_dump -Fc "$1" | pg_restore --no-owner -d "$2"',
    '--',
    target,
    restored,
  ]);
  if (pipe.code !== 0) throw new Error(`pg_dump | pg_restore exited with ${pipe.code}: ${pipe.stderr}`);
  results.anchor = seconds(started);
  console.log(`anchor pg_dump -Fc | pg_restore --no-owner of the same PostgreSQL data: ${results.anchor} s`);
}

async function measureBackup() {
  await app.listen(0, '127.0.0.1');
  // The seeding held the event loop: let two of under-pressure's one-second samples pass (see schedules-scale).
  await sleep(2_100);
  const { port } = app.getHttpServer().address();
  const file = (name) => path.join(source.dataDir, name);
  const idle = await runCli(['db:backup', file('idle.backup.sqlite')]);
  if (idle.code !== 0) throw new Error(`db:backup exited with ${idle.code}: ${idle.stderr}`);
  console.log(
    `\nbackup, no writers: ${idle.seconds.toFixed(1)} s from spawn to exit (the command's own figure ` +
      `${ownSeconds(idle, 'backup')} s), peak RSS ${idle.peakMb.toFixed(0)} MB`,
  );
  const writes = {
    origin: `http://127.0.0.1:${port}`,
    headers: { authorization: `Bearer ${apiKey}` },
    clients: 8,
    path: '/api/v1/Schedule',
    body: { ScheduleItems: [scheduleItem()] },
    sentAt: true,
  };
  const without = await load({ ...writes, durationMs: 6_000 });
  const startAt = Date.now() + 300;
  const loaded = load({ ...writes, startAt, durationMs: 3_000 + Math.max(6_000, 2_000 * idle.seconds) });
  await sleep(startAt + 1_500 - Date.now());
  const began = Date.now();
  const backup = await runCli(['db:backup', file('loaded.backup.sqlite')]);
  const ended = Date.now();
  const during = await loaded;
  if (backup.code !== 0) throw new Error(`db:backup exited with ${backup.code}: ${backup.stderr}`);
  const inWindow = during.ms.filter(
    (_, index) => during.sentAt[index] >= began && during.sentAt[index] <= ended,
  );
  const after = during.sentAt.filter((at) => at > ended).length;
  results.backup = {
    seconds: backup.seconds,
    own: ownSeconds(backup, 'backup'),
    p99: p99(inWindow),
    p99Without: p99(without.ms),
  };
  console.log(
    `8 clients POSTing schedules, 6 s without a backup: ${without.served} answers ${JSON.stringify(without.statuses)}, ` +
      `p99 ${p99(without.ms).toFixed(1)} ms, median ${median(without.ms).toFixed(1)} ms`,
  );
  console.log(
    `backup under those writers: ${backup.seconds.toFixed(1)} s from spawn to exit (the command's own figure ` +
      `${ownSeconds(backup, 'backup')} s), peak RSS ` +
      `${backup.peakMb.toFixed(0)} MB; ${inWindow.length} requests sent while it ran: p99 ` +
      `${p99(inWindow).toFixed(1)} ms, median ${median(inWindow).toFixed(1)} ms (whole load ` +
      `${JSON.stringify(during.statuses)}, ${after} requests after it ended)`,
  );
}

function summarise() {
  const verdict = (ok) => (ok ? 'met' : 'MISSED');
  console.log(`\nsummary (scale ${scale}; ${hostLine()}):`);
  if (results.copy) {
    const own = ownSeconds(results.copy, 'copied');
    console.log(
      `  copy ${results.copy.seconds.toFixed(1)} s from spawn to exit, the command's own ${own} s (goal ≤ ` +
        `${GOALS.copySeconds} s at scale 1): ${scale === 1 ? verdict(results.copy.seconds <= GOALS.copySeconds) : 'n/a'}`,
    );
    console.log(
      `  copy peak RSS ${results.copy.peakMb.toFixed(0)} MB (goal < ~${GOALS.rssMb} MB at scale 1, ≤ +20% at ` +
        `scale 5: compare with the other scale's line)`,
    );
  }
  if (results.anchor) console.log(`  anchor pg_dump | pg_restore ${results.anchor} s`);
  if (results.backup) {
    const { seconds: taken, own, p99: during, p99Without } = results.backup;
    console.log(
      `  backup under writers ${taken.toFixed(1)} s from spawn to exit, the command's own ${own} s ` +
        `(goal ≤ ${GOALS.backupSeconds} s): ${verdict(taken <= GOALS.backupSeconds)} / ` +
        `${verdict(Number(own) <= GOALS.backupSeconds)}`,
    );
    console.log(
      `  writers' p99 ${during.toFixed(1)} ms during / ${p99Without.toFixed(1)} ms without = ` +
        `${(during / p99Without).toFixed(2)}× (goal ≤ ${GOALS.p99Ratio}×): ${verdict(during <= GOALS.p99Ratio * p99Without)}`,
    );
  }
}

// ---- helpers -------------------------------------------------------------------------------------------------------

function scheduleItem() {
  return {
    Name: 'written during the bench',
    Start: '2026-01-05T09:00:00+01:00',
    End: '2026-01-05T09:15:00+01:00',
    StartTimeZone: 'Europe/Berlin',
    Recurrence: { RecurrenceType: 'Weekly', Interval: '1', Pattern: 'FREQ=WEEKLY;BYDAY=MO,WE,FR' },
  };
}

/** The built CLI with the source's settings; wall seconds, output and the process's peak RSS (VmHWM). */
async function runCli(cliArgs) {
  const started = performance.now();
  const result = await run(process.execPath, [cli, ...cliArgs], { env: { PATH: process.env.PATH, ...env } });
  return { ...result, seconds: (performance.now() - started) / 1000 };
}

function run(command, commandArgs, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, commandArgs, { cwd: root, ...options });
    let stdout = '';
    let stderr = '';
    let peakKb = 0;
    const status = `/proc/${child.pid}/status`;
    const poll = setInterval(() => {
      try {
        const match = /^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync(status, 'utf8'));
        if (match) peakKb = Math.max(peakKb, Number(match[1]));
      } catch {
        // Gone already: the last reading stands.
      }
    }, 50);
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      clearInterval(poll);
      resolve({ code, stdout, stderr, peakMb: peakKb / 1024 });
    });
  });
}

/** The `seconds=` of the command's closing line (`copied …` / `backup …`): its work without the CLI's start. */
function ownSeconds(result, verb) {
  return new RegExp(`^${verb} .*seconds=([\\d.]+)`, 'm').exec(result.stdout)?.[1] ?? '?';
}

function seconds(since) {
  return ((performance.now() - since) / 1000).toFixed(1);
}

function p99(samples) {
  return quantile(samples, 0.99);
}

function median(samples) {
  return quantile(samples, 0.5);
}

function quantile(samples, q) {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

function redact(url) {
  return url.replace(/\/\/[^@/]*@/, '//…@');
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
