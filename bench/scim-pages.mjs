// SCIM list pages among 100,000 users (goal: ≤ 5 ms for any page among 100,000 users, both engines), end to
// end over HTTP to the real app (createApp from dist/, LOG_LEVEL=warn, rate limit off) on 127.0.0.1: sequential
// keep-alive GETs (fetch, in the same process: a client in a worker thread measured slower on this 2-core host),
// each timed from send to the answer's last byte, then parsed and checked: exact totalResults, the page's length,
// and the first user of the page being the one at that position in (created, id) order.
//   positions: startIndex 1, 1,001, the middle, and the last page; sizes: count=1 (Okta's step), 10 and 100.
// The users are inserted straight into scim_users (Entra-shaped: name, displayName, two e-mails for a third of them,
// the enterprise extension with a manager), 50 groups with each user a member of 0–2 of them (so every page renders
// the read-only `groups` attribute); the user count in scim_user_stats follows by trigger.
// SQLite by default (a temp file); PostgreSQL when DATABASE_URL=postgres://…/<db> (a scratch database next to it,
// dropped afterwards). Run after `npm run build`:
// `node bench/scim-pages.mjs [--users 100000] [--runs 60] [--dist dist]`.
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { sample } from './support/http-sampler-client.mjs';
import { describeStretches, watchStretches } from './support/loop-stretches.mjs';
import { builtService, hostLine, scratchDatabase, stats } from './support/scratch-database.mjs';

const GOAL_PAGE_MS = 5;

const { values: args } = parseArgs({
  options: {
    users: { type: 'string', default: '100000' },
    runs: { type: 'string', default: '60' },
    dist: { type: 'string', default: 'dist' },
  },
});
const userCount = Number(args.users);
const runs = Number(args.runs);

const dist = builtService(args.dist);
const { loadConfig } = await import(dist('src/config/config.js'));
const { createApp } = await import(dist('src/create-app.js'));
const { createRootLogger } = await import(dist('src/logging/logger.js'));
const { ScimUserEntity } = await import(dist('src/scim/entities/scim-user.entity.js'));
const { ScimGroupEntity, ScimGroupMemberEntity } = await import(
  dist('src/scim/entities/scim-group.entity.js')
);

const scratch = await scratchDatabase('scim-pages');
const apiKey = randomUUID();
const config = loadConfig({
  DATA_DIR: scratch.dataDir,
  DATABASE_URL: scratch.databaseUrl,
  API_KEYS: apiKey,
  RATE_LIMIT: '0',
  LOG_LEVEL: 'warn',
  MODULES: 'users',
});
const { app, dataSource } = await createApp(config, createRootLogger('warn'));
const dialect = config.database.type;

// ---- seed ----------------------------------------------------------------------------------------------------------

const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
const epoch = Date.UTC(2026, 0, 1);
const groups = Array.from({ length: 50 }, (_, index) =>
  Object.assign(new ScimGroupEntity(), {
    id: randomUUID(),
    displayName: `Team ${index}`,
    displayNameLower: `team ${index}`,
    externalId: null,
    version: 1,
    createdAt: new Date(epoch),
    lastModified: new Date(epoch),
  }),
);
/** Every user's id in list order: created one second apart, so (created, id) order is index order. */
const ids = [];
const seedStart = performance.now();
await dataSource.transaction(async (manager) => {
  await manager.getRepository(ScimGroupEntity).insert(groups);
  for (let start = 0; start < userCount; start += 500) {
    const users = [];
    const members = [];
    for (let index = start; index < Math.min(start + 500, userCount); index++) {
      const id = randomUUID();
      ids.push(id);
      const userName = `user${String(index).padStart(6, '0')}@example.com`;
      users.push(
        Object.assign(new ScimUserEntity(), {
          id,
          userName,
          userNameLower: userName,
          externalId: randomUUID(),
          attributes: {
            name: { givenName: `Given${index % 997}`, familyName: `Family${index % 1013}` },
            displayName: `Given${index % 997} Family${index % 1013}`,
            active: index % 10 !== 0,
            emails: [
              { type: 'work', value: userName, primary: true },
              ...(index % 3 === 0 ? [{ type: 'home', value: `home${index}@mail.example.org` }] : []),
            ],
            title: 'Engineer',
            [ENTERPRISE]: { department: `Dept ${index % 40}`, manager: { value: `m${index % 500}` } },
          },
          version: 1,
          createdAt: new Date(epoch + index * 1000),
          lastModified: new Date(epoch + index * 1000),
        }),
      );
      for (let g = 0; g < index % 3; g++)
        members.push({ groupId: groups[(index + g * 17) % 50].id, userId: id });
    }
    await manager.getRepository(ScimUserEntity).insert(users);
    if (members.length > 0) await manager.getRepository(ScimGroupMemberEntity).insert(members);
  }
});
await dataSource.query(dialect === 'postgres' ? 'VACUUM ANALYZE' : 'ANALYZE');
// Write the seeding's WAL out now, not during the measurements (needs a superuser; skipped otherwise).
if (dialect === 'postgres') await dataSource.query('CHECKPOINT').catch(() => undefined);
console.log(
  `${dialect}: seeded ${userCount.toLocaleString('en')} users in 50 groups in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`,
);

// ---- measure -------------------------------------------------------------------------------------------------------

await app.listen(0, '127.0.0.1');
const { port } = app.getHttpServer().address();

const cases = [];
for (const count of [1, 10, 100]) {
  for (const [position, startIndex] of [
    ['first', 1],
    ['1,001st', 1_001],
    ['middle', Math.floor(userCount / 2)],
    ['last', userCount - count + 1],
  ]) {
    // Five warm-up requests a case (the first deep page starts building the position directory).
    cases.push({ label: `count=${count}, ${position} page (startIndex=${startIndex})`, startIndex, count });
  }
}
const answers = await sample({
  origin: `http://127.0.0.1:${port}`,
  headers: { authorization: `Bearer ${apiKey}` },
  digest: 'scim-list',
  cases: cases.map(({ startIndex, count }) => ({
    path: `/api/v1/scim/Users?startIndex=${startIndex}&count=${count}`,
    warmup: 5,
    runs,
  })),
});
const results = cases.map(({ label, startIndex, count }, index) => {
  const expected = Math.min(count, userCount - startIndex + 1);
  for (const { status, body } of answers[index].answers) {
    if (
      status !== 200 ||
      body.totalResults !== userCount ||
      body.resources !== expected ||
      body.firstId !== ids[startIndex - 1]
    ) {
      throw new Error(`startIndex=${startIndex}&count=${count}: ${status} ${JSON.stringify(body)}`);
    }
  }
  return { label, ...stats(answers[index].ms) };
});

// The largest page (count=1000, ServiceProviderConfig maxResults) from the middle: time, and the stretches of this
// process's event loop (only the service runs here) while it was served — the goal: no request may hold the loop
// much longer than ~20 ms.
const stretches = watchStretches();
const [largest] = await sample({
  origin: `http://127.0.0.1:${port}`,
  headers: { authorization: `Bearer ${apiKey}` },
  digest: 'scim-list',
  cases: [
    { path: `/api/v1/scim/Users?startIndex=${Math.floor(userCount / 2)}&count=1000`, warmup: 3, runs: 20 },
  ],
});
const largestStretches = stretches.stop();
if (largest.answers.some(({ status, body }) => status !== 200 || body.resources !== 1000))
  throw new Error('count=1000: not a full page');

await app.close();
await scratch.drop();

// ---- report --------------------------------------------------------------------------------------------------------

console.log(`\n${hostLine()}`);
console.log(
  `database: ${dialect}, ${userCount.toLocaleString('en')} users; sequential keep-alive HTTP GETs, ${runs} each`,
);
const big = stats(largest.ms);
console.log(
  `count=1000, middle page: median ${big.median.toFixed(1)} ms, p90 ${big.p90.toFixed(1)} ms; while served: ` +
    describeStretches(largestStretches),
);
for (const r of results) {
  const verdict = r.median <= GOAL_PAGE_MS ? 'met' : 'NOT met';
  console.log(
    `${r.label.padEnd(44)} median ${r.median.toFixed(2).padStart(6)} ms  p90 ${r.p90.toFixed(2).padStart(6)} ms  max ${r.max
      .toFixed(2)
      .padStart(7)} ms  goal ≤ ${GOAL_PAGE_MS} ms median: ${verdict}`,
  );
}
