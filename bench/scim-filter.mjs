// SCIM filter → SQL benchmark: median end-to-end latency of `GET /api/v1/scim/Users?filter=…` among
// 100,000 users. The real app (createApp from dist/, every global hook, LOG_LEVEL=warn, rate limit off) listens on
// 127.0.0.1; the users are inserted straight into scim_users in batches (the create endpoint would take minutes and
// is not what is measured). Each request is one sequential HTTP GET over a keep-alive connection (fetch), timed
// from send to the fully read and parsed JSON body, and checked (a lookup must find exactly its user).
//   lookups: `userName eq "<existing userName in a random letter case>"` — the unique index on user_name_lower
//   searches: `userName co "<digits>"` (a scan: LIKE '%…%' cannot use a b-tree index), and, for comparison,
//             `emails.value co "…"` (scim_user_emails: a scan of the narrow table on SQLite, the pg_trgm index on
//             PostgreSQL; bench/scim-emails.mjs measures the e-mail filters in full)
// SQLite by default (a temp file); PostgreSQL when DATABASE_URL=postgres://…/<db> (a fresh database named
// <db>_scim_bench_<random> is created next to it and dropped afterwards).
// Run after `npm run build`: `node bench/scim-filter.mjs [--users 100000] [--lookups 1000] [--searches 40]`.
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { scratchDatabase } from './support/scratch-database.mjs';

const GOAL_EQ_MS = 5;

const { values: args } = parseArgs({
  options: {
    users: { type: 'string', default: '100000' },
    lookups: { type: 'string', default: '1000' },
    searches: { type: 'string', default: '40' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (args.help) {
  console.log(
    'usage: [DATABASE_URL=postgres://…] node bench/scim-filter.mjs [--users N] [--lookups N] [--searches N]',
  );
  process.exit(0);
}
const userCount = Number(args.users);
const lookups = Number(args.lookups);
const searches = Number(args.searches);

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = (file) => path.join(root, 'dist', file);
if (!existsSync(dist('src/create-app.js'))) {
  console.error('dist/ is missing: run `npm run build` first.');
  process.exit(1);
}
const { loadConfig } = await import(dist('src/config/config.js'));
const { createApp } = await import(dist('src/create-app.js'));
const { createRootLogger } = await import(dist('src/logging/logger.js'));
const { ScimUserEntity } = await import(dist('src/scim/entities/scim-user.entity.js'));
const { ScimUserEmailEntity } = await import(dist('src/scim/entities/scim-user-email.entity.js'));
const { userEmailRows } = await import(dist('src/scim/user-email-rows.js'));

// ---- database ----------------------------------------------------------------------------------------------------

const { dataDir, databaseUrl, drop: dropDatabase } = await scratchDatabase('scim');

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

function randomCase(text) {
  return [...text].map((char) => (Math.random() < 0.5 ? char.toUpperCase() : char.toLowerCase())).join('');
}

function makeUser(index, created) {
  const userName = `User${String(index).padStart(6, '0')}.${randomBytes(3).toString('hex')}@Example.com`;
  const attributes = {
    name: {
      givenName: `Given${index % 997}`,
      familyName: `Family${index % 1013}`,
      formatted: `Given Family ${index}`,
    },
    displayName: `Given${index % 997} Family${index % 1013}`,
    active: index % 10 !== 0,
    emails: [
      { type: 'work', value: userName.toLowerCase(), primary: true },
      ...(index % 3 === 0 ? [{ type: 'home', value: `home${index}@mail.example.org` }] : []),
    ],
    ...(index % 5 === 0 ? { roles: [{ value: 'reader', display: 'Reader' }] } : {}),
    locale: 'en-US',
  };
  return Object.assign(new ScimUserEntity(), {
    id: randomUUID(),
    userName,
    userNameLower: userName.toLowerCase(),
    externalId: randomUUID(),
    attributes,
    version: 1,
    createdAt: created,
    lastModified: created,
  });
}

const userNames = [];
const seedStart = performance.now();
const repository = dataSource.getRepository(ScimUserEntity);
const BATCH = 500;
const epoch = Date.UTC(2026, 0, 1);
await dataSource.transaction(async (manager) => {
  for (let start = 0; start < userCount; start += BATCH) {
    const batch = [];
    const emails = [];
    for (let index = start; index < Math.min(start + BATCH, userCount); index++) {
      const user = makeUser(index, new Date(epoch + index * 1000));
      userNames.push(user.userName);
      batch.push(user);
      // The e-mail filters read scim_user_emails, which the repository writes with every user.
      for (const row of userEmailRows(user.attributes))
        emails.push(Object.assign(new ScimUserEmailEntity(), { userId: user.id, ...row }));
    }
    await manager.getRepository(ScimUserEntity).insert(batch);
    await manager.getRepository(ScimUserEmailEntity).insert(emails);
  }
});
if (dialect === 'postgres') await dataSource.query('ANALYZE scim_users');
else await dataSource.query('ANALYZE');
const seedSeconds = (performance.now() - seedStart) / 1000;
console.log(`seeded ${(await repository.count()).toLocaleString('en')} users in ${seedSeconds.toFixed(1)} s`);

// ---- plan: the eq lookup must use the unique index ---------------------------------------------------------------

const planSql =
  dialect === 'postgres'
    ? `EXPLAIN SELECT id FROM scim_users WHERE user_name_lower = 'user000042@example.com'`
    : `EXPLAIN QUERY PLAN SELECT id FROM scim_users WHERE user_name_lower = 'user000042@example.com'`;
const plan = (await dataSource.query(planSql)).map((row) => row['QUERY PLAN'] ?? row.detail).join(' | ');
console.log(`plan of the eq lookup: ${plan}`);

// ---- measure ----------------------------------------------------------------------------------------------------

await app.listen(0, '127.0.0.1');
const { port } = app.getHttpServer().address();
const origin = `http://127.0.0.1:${port}`;

async function timedList(filter) {
  const url = `${origin}/api/v1/scim/Users?filter=${encodeURIComponent(filter)}&count=100`;
  const t0 = performance.now();
  const response = await fetch(url, { headers: { authorization: `Bearer ${apiKey}` } });
  const body = await response.json();
  const ms = performance.now() - t0;
  if (response.status !== 200) throw new Error(`${filter}: ${response.status} ${JSON.stringify(body)}`);
  return { ms, body };
}

function stats(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { median: at(0.5), p90: at(0.9), p99: at(0.99), min: sorted[0], max: sorted.at(-1) };
}

const fmt = (ms) => `${ms.toFixed(2)} ms`;
const pickName = () => userNames[Math.floor(Math.random() * userNames.length)];

for (let index = 0; index < 100; index++) await timedList(`userName eq "${randomCase(pickName())}"`); // warm-up

const eqSamples = [];
for (let index = 0; index < lookups; index++) {
  const name = pickName();
  const { ms, body } = await timedList(`userName eq "${randomCase(name)}"`);
  if (body.totalResults !== 1 || body.Resources[0].userName !== name)
    throw new Error(`lookup of ${name} failed`);
  eqSamples.push(ms);
}

async function searchSeries(makeFilter) {
  const samples = [];
  let matched = 0;
  for (let index = 0; index < searches; index++) {
    const { ms, body } = await timedList(makeFilter(index));
    matched += body.totalResults;
    samples.push(ms);
  }
  return { samples, matched: matched / searches };
}
// Four digits out of the six-digit number: about 10 of 100,000 users match each.
const digits = (index) => String((index * 7919) % 10000).padStart(4, '0');
const coUser = await searchSeries((index) => `userName co "${digits(index)}."`);
const coEmail = await searchSeries((index) => `emails.value co "home${digits(index)}"`);

await app.close();
await dropDatabase();

// ---- report -----------------------------------------------------------------------------------------------------

const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
console.log(
  `\nnode ${process.version}, ${os.cpus().length} × ${cpu}, load ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
console.log(
  `database: ${dialect}, ${userCount.toLocaleString('en')} users; sequential keep-alive HTTP GETs on 127.0.0.1`,
);
const row = (label, samples, note = '') => {
  const s = stats(samples);
  console.log(
    `${label.padEnd(34)} n=${String(samples.length).padStart(5)}  median ${fmt(s.median).padStart(10)}  p90 ${fmt(s.p90).padStart(10)}  p99 ${fmt(s.p99).padStart(10)}  max ${fmt(s.max).padStart(10)}${note}`,
  );
};
row(
  'userName eq (random case)',
  eqSamples,
  `   goal ≤ ${GOAL_EQ_MS} ms median: ${stats(eqSamples).median <= GOAL_EQ_MS ? 'met' : 'NOT met'}`,
);
row('userName co "<4 digits>."', coUser.samples, `   ~${coUser.matched.toFixed(1)} matches each`);
row('emails.value co "home<4 digits>"', coEmail.samples, `   ~${coEmail.matched.toFixed(1)} matches each`);
