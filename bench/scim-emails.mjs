// SCIM e-mail filters and the count=1 page among 100,000 users, end to end over HTTP to the real app
// (createApp from dist/, LOG_LEVEL=warn, rate limit off) on 127.0.0.1: sequential keep-alive GETs (fetch), each
// timed from send to the parsed body and checked (an eq lookup must find exactly its user).
//   Entra:  emails[type eq "work"].value eq "<existing address, random letter case>"
//   eq:     emails.value eq "…", emails eq "…"
//   co:     emails co "<4 digits>." (~10 matches), emails co "<2 characters>" (too short for trigrams)
//   page:   GET /Users?count=1 at the first, middle and last position (no filter; exact totalResults included)
// The users are inserted straight into scim_users and their rows into scim_user_emails (userEmailRows, as the
// repository writes them; the user count in scim_user_stats follows by trigger); the create endpoint would take
// minutes and is not what is measured. It prints the query plans (EXPLAIN QUERY PLAN / EXPLAIN ANALYZE) of the
// Entra lookup, of the total GET /Users reads, and of the COUNT(*) that total replaces.
// SQLite by default (a temp file); PostgreSQL when DATABASE_URL=postgres://…/<db> (a scratch database next to it,
// dropped afterwards; `--keep` keeps it for a look with sqlite3/psql). Run after `npm run build`:
// `node bench/scim-emails.mjs [--users 100000] [--runs 200] [--keep] [--dist dist]`.
import { randomBytes, randomUUID } from 'node:crypto';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { builtService, scratchDatabase } from './support/scratch-database.mjs';

const GOAL_EQ_MS = 5;
const GOAL_CO_MS = 30;
const GOAL_PAGE_MS = 5;

const { values: args } = parseArgs({
  options: {
    users: { type: 'string', default: '100000' },
    runs: { type: 'string', default: '200' },
    dist: { type: 'string', default: 'dist' },
    keep: { type: 'boolean', default: false },
  },
});
const userCount = Number(args.users);
const runs = Number(args.runs);

const dist = builtService(args.dist);
const { loadConfig } = await import(dist('src/config/config.js'));
const { createApp } = await import(dist('src/create-app.js'));
const { createRootLogger } = await import(dist('src/logging/logger.js'));
const { ScimUserEntity } = await import(dist('src/scim/entities/scim-user.entity.js'));
const { ScimUserEmailEntity } = await import(dist('src/scim/entities/scim-user-email.entity.js'));
const { userEmailRows } = await import(dist('src/scim/user-email-rows.js'));
const { parseListFilter } = await import(dist('src/scim/scim-list-filter.js'));
const { filterToSql } = await import(dist('src/scim/scim-filter-sql.js'));

// ---- database ----------------------------------------------------------------------------------------------------

const { dataDir, databaseUrl, drop: dropDatabase } = await scratchDatabase('scim-emails');

const apiKey = randomBytes(24).toString('base64url');
const config = loadConfig({
  DATA_DIR: dataDir,
  DATABASE_URL: databaseUrl,
  API_KEYS: apiKey,
  RATE_LIMIT: '0',
  LOG_LEVEL: 'warn',
  MODULES: 'users',
});
const { app, dataSource } = await createApp(config, createRootLogger('warn'));
const dialect = config.database.type;

// ---- seed ----------------------------------------------------------------------------------------------------------

const workEmails = [];
const epoch = Date.UTC(2026, 0, 1);
const seedStart = performance.now();
await dataSource.transaction(async (manager) => {
  for (let start = 0; start < userCount; start += 500) {
    const users = [];
    const emails = [];
    for (let index = start; index < Math.min(start + 500, userCount); index++) {
      const id = randomUUID();
      const userName = `User${String(index).padStart(6, '0')}.${randomBytes(3).toString('hex')}@Example.com`;
      const work = userName.toLowerCase();
      workEmails.push(work);
      const attributes = {
        name: { givenName: `Given${index % 997}`, familyName: `Family${index % 1013}` },
        displayName: `Given${index % 997} Family${index % 1013}`,
        active: index % 10 !== 0,
        emails: [
          { type: 'work', value: work, primary: true },
          // A third of the users have a second address without primary, some without type.
          ...(index % 3 === 0
            ? [{ ...(index % 2 === 0 ? { type: 'home' } : {}), value: `home${index}@mail.example.org` }]
            : []),
        ],
        locale: 'en-US',
      };
      users.push(
        Object.assign(new ScimUserEntity(), {
          id,
          userName,
          userNameLower: work,
          externalId: randomUUID(),
          attributes,
          version: 1,
          createdAt: new Date(epoch + index * 1000),
          lastModified: new Date(epoch + index * 1000),
        }),
      );
      for (const row of userEmailRows(attributes))
        emails.push(Object.assign(new ScimUserEmailEntity(), { userId: id, ...row }));
    }
    await manager.getRepository(ScimUserEntity).insert(users);
    await manager.getRepository(ScimUserEmailEntity).insert(emails);
  }
});
if (dialect === 'postgres') await dataSource.query('VACUUM ANALYZE');
else await dataSource.query('ANALYZE');
const emailRows = await dataSource.getRepository(ScimUserEmailEntity).count();
console.log(
  `${dialect}: seeded ${userCount.toLocaleString('en')} users (${emailRows.toLocaleString('en')} e-mail rows) in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`,
);
if (dialect === 'postgres') {
  const [trgm] = await dataSource.query(
    `SELECT COUNT(*)::int AS n FROM pg_indexes WHERE indexname = 'IX_scim_user_emails_value_trgm'`,
  );
  console.log(`pg_trgm index on scim_user_emails.value: ${trgm.n === 1 ? 'present' : 'ABSENT'}`);
}

// ---- plans ---------------------------------------------------------------------------------------------------------

async function plan(label, builder) {
  const [sql, parameters] = builder.getQueryAndParameters();
  const prefix = dialect === 'postgres' ? 'EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF)' : 'EXPLAIN QUERY PLAN';
  const rows = await dataSource.query(`${prefix} ${sql}`, parameters);
  console.log(`plan of ${label}:\n  ${rows.map((row) => row['QUERY PLAN'] ?? row.detail).join('\n  ')}`);
}
function usersWhere(filterText) {
  const builder = dataSource.getRepository(ScimUserEntity).createQueryBuilder('scim_user');
  if (filterText !== undefined) {
    const condition = filterToSql(parseListFilter(filterText), { dialect, alias: 'scim_user' });
    builder.where(condition.sql, condition.parameters);
  }
  return builder;
}
const sample = workEmails[4242 % userCount];
await plan(
  'the Entra lookup (count)',
  usersWhere(`emails[type eq "work"].value eq "${sample}"`).select('COUNT(*)', 'count'),
);
// What GET /Users?count=1 reads its total from, and what a COUNT(*) of every user would cost instead.
await plan(
  'the total of GET /Users (scim_user_stats)',
  dataSource.createQueryBuilder().select('user_count').from('scim_user_stats', 's').where('s.id = 1'),
);
await plan(
  'COUNT(*) of every user (not used by GET /Users)',
  usersWhere(undefined).select('COUNT(*)', 'count'),
);

// ---- measure -------------------------------------------------------------------------------------------------------

await app.listen(0, '127.0.0.1');
const { port } = app.getHttpServer().address();
const origin = `http://127.0.0.1:${port}/api/v1/scim`;

async function timed(query) {
  const started = performance.now();
  const response = await fetch(`${origin}/Users${query}`, {
    headers: { authorization: `Bearer ${apiKey}` },
  });
  const body = await response.json();
  const ms = performance.now() - started;
  if (response.status !== 200) throw new Error(`${query}: ${response.status} ${JSON.stringify(body)}`);
  return { ms, body };
}
const list = (filter, count = 100) => `?filter=${encodeURIComponent(filter)}&count=${count}`;

function stats(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { median: at(0.5), p90: at(0.9), max: sorted.at(-1) };
}
const results = [];
async function measure(label, goal, n, run) {
  for (let i = 0; i < 5; i++) await run(i); // warm-up
  const samples = [];
  let matched = 0;
  for (let i = 0; i < n; i++) {
    const { ms, totalResults } = await run(i);
    samples.push(ms);
    matched += totalResults;
  }
  const s = stats(samples);
  results.push({ label, goal, ...s, matched: matched / n, n });
}
function randomCase(text) {
  return [...text].map((char) => (Math.random() < 0.5 ? char.toUpperCase() : char.toLowerCase())).join('');
}
const pick = (i) => workEmails[(i * 7919 + 13) % workEmails.length];
async function lookup(filterOf, i) {
  const email = pick(i);
  const { ms, body } = await timed(list(filterOf(randomCase(email))));
  if (body.totalResults !== 1 || body.Resources[0].emails[0].value !== email)
    throw new Error(`lookup of ${email} found ${body.totalResults}`);
  return { ms, totalResults: body.totalResults };
}
async function search(filter) {
  const { ms, body } = await timed(list(filter));
  return { ms, totalResults: body.totalResults };
}
const digits = (i) => String((i * 7919) % 10000).padStart(4, '0');

await measure('emails[type eq "work"].value eq (Entra)', GOAL_EQ_MS, runs, (i) =>
  lookup((email) => `emails[type eq "work"].value eq "${email}"`, i),
);
await measure('emails.value eq', GOAL_EQ_MS, runs, (i) => lookup((email) => `emails.value eq "${email}"`, i));
await measure('emails eq', GOAL_EQ_MS, runs, (i) => lookup((email) => `emails eq "${email}"`, i));
await measure('emails co "<4 digits>." (~10 matches)', GOAL_CO_MS, Math.min(runs, 60), (i) =>
  search(`emails co "${digits(i)}."`),
);
await measure('emails co "<2 chars>" (short, ~1-3% match)', undefined, Math.min(runs, 30), (i) =>
  search(`emails co "${['e1', 'a2', 'f3', '9d', 'c0'][i % 5]}"`),
);
await measure('emails.primary eq false (~1/3 match)', undefined, Math.min(runs, 30), () =>
  search('emails.primary eq false'),
);
await measure('GET /Users?count=1', GOAL_PAGE_MS, runs, async () => {
  const { ms, body } = await timed('?count=1');
  if (body.totalResults !== userCount || body.Resources.length !== 1) throw new Error('count=1');
  return { ms, totalResults: body.totalResults };
});
// "Any page among 100,000 users": count=1 in the middle and at the very end (the OFFSET walk of the index).
for (const [label, startIndex] of [
  ['GET /Users?startIndex=<middle>&count=1', Math.floor(userCount / 2)],
  ['GET /Users?startIndex=<last>&count=1', userCount],
]) {
  await measure(label, GOAL_PAGE_MS, Math.min(runs, 50), async () => {
    const { ms, body } = await timed(`?startIndex=${startIndex}&count=1`);
    if (body.totalResults !== userCount || body.Resources.length !== 1) throw new Error(label);
    return { ms, totalResults: body.totalResults };
  });
}

await app.close();
if (args.keep) console.log(`kept the database: ${databaseUrl}`);
else {
  await dropDatabase();
}

// ---- report --------------------------------------------------------------------------------------------------------

const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
console.log(
  `\nnode ${process.version}, ${os.cpus().length} × ${cpu}, load ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
console.log(`database: ${dialect}, ${userCount.toLocaleString('en')} users; sequential keep-alive HTTP GETs`);
for (const r of results) {
  const verdict =
    r.goal === undefined ? '' : `  goal ≤ ${r.goal} ms median: ${r.median <= r.goal ? 'met' : 'NOT met'}`;
  console.log(
    `${r.label.padEnd(44)} n=${String(r.n).padStart(4)}  median ${r.median.toFixed(2).padStart(7)} ms  p90 ${r.p90
      .toFixed(2)
      .padStart(7)} ms  max ${r.max.toFixed(2).padStart(7)} ms  ~${r.matched.toFixed(1)} matches${verdict}`,
  );
}
