// SCIM Groups and paging benchmark: end-to-end latency over HTTP to the real app (createApp from dist/,
// LOG_LEVEL=warn, rate limit off) on 127.0.0.1, sequential keep-alive requests (fetch), each timed from send to the
// parsed body and checked. Users and the 10,000-member group are inserted straight into the tables (the endpoints
// would take minutes and are not what is measured); the 1,000-member PATCHes go through the API.
//   paging:     GET /Users?startIndex=…&count=100 (first, middle, last page) and count=1, among --users users
//   membership: GET /Groups?filter=id eq "<g>" and members eq "<u>"&excludedAttributes=members, group of 10,000
//   patch:      PATCH /Groups/<g> adding 1,000 new members in one operation (Entra's shape), 204
//   read:       GET /Groups/<g>?excludedAttributes=members and GET /Groups/<g> (10,000 members in the body)
// SQLite by default; PostgreSQL when DATABASE_URL=postgres://…/<db> (a scratch database next to it, dropped after).
// Run after `npm run build`: `node bench/scim-groups.mjs [--users 100000] [--members 10000]`.
import { randomBytes, randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { scratchDatabase } from './support/scratch-database.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = (file) => path.join(root, 'dist', file);
const { loadConfig } = await import(dist('src/config/config.js'));
const { createApp } = await import(dist('src/create-app.js'));
const { createRootLogger } = await import(dist('src/logging/logger.js'));
const { ScimUserEntity } = await import(dist('src/scim/entities/scim-user.entity.js'));
const { ScimGroupEntity, ScimGroupMemberEntity } = await import(
  dist('src/scim/entities/scim-group.entity.js')
);
const groupId = randomUUID();
const patchGroupId = randomUUID();

// ---- database ----------------------------------------------------------------------------------------------------

const { dataDir, databaseUrl, drop: dropDatabase } = await scratchDatabase('scim-groups');

const { values: args } = parseArgs({
  options: { users: { type: 'string', default: '100000' }, members: { type: 'string', default: '10000' } },
});
const userCount = Number(args.users);
const memberCount = Number(args.members);

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

const ids = [];
const epoch = Date.UTC(2026, 0, 1);
const seedStart = performance.now();
await dataSource.transaction(async (manager) => {
  for (let start = 0; start < userCount; start += 500) {
    const batch = [];
    for (let index = start; index < Math.min(start + 500, userCount); index++) {
      const id = randomUUID();
      ids.push(id);
      const userName = `user${String(index).padStart(6, '0')}@example.com`;
      batch.push(
        Object.assign(new ScimUserEntity(), {
          id,
          userName,
          userNameLower: userName,
          externalId: null,
          attributes: {
            displayName: `User ${index}`,
            emails: [{ type: 'work', value: userName, primary: true }],
          },
          version: 1,
          createdAt: new Date(epoch + index * 1000),
          lastModified: new Date(epoch + index * 1000),
        }),
      );
    }
    await manager.getRepository(ScimUserEntity).insert(batch);
  }
  const now = new Date();
  await manager.getRepository(ScimGroupEntity).insert([
    {
      id: groupId,
      displayName: 'Big',
      displayNameLower: 'big',
      externalId: null,
      version: 1,
      createdAt: now,
      lastModified: now,
    },
    {
      id: patchGroupId,
      displayName: 'Patched',
      displayNameLower: 'patched',
      externalId: null,
      version: 1,
      createdAt: now,
      lastModified: now,
    },
  ]);
  for (let start = 0; start < memberCount; start += 500) {
    await manager
      .getRepository(ScimGroupMemberEntity)
      .insert(ids.slice(start, Math.min(start + 500, memberCount)).map((userId) => ({ groupId, userId })));
  }
});
await dataSource.query(dialect === 'postgres' ? 'ANALYZE' : 'ANALYZE');
console.log(
  `${dialect}: seeded ${userCount.toLocaleString('en')} users and a group of ${memberCount.toLocaleString('en')} in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`,
);

await app.listen(0, '127.0.0.1');
const { port } = app.getHttpServer().address();
const base = `http://127.0.0.1:${port}/api/v1/scim`;
const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/scim+json' };

async function timed(method, url, body) {
  const started = performance.now();
  const response = await fetch(`${base}${url}`, {
    method,
    headers,
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  const ms = performance.now() - started;
  return { ms, status: response.status, json: text ? JSON.parse(text) : undefined };
}

function stats(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return `median ${at(0.5).toFixed(2)} ms  p90 ${at(0.9).toFixed(2)} ms  max ${sorted.at(-1).toFixed(2)} ms  (n=${sorted.length})`;
}

async function measure(label, n, run) {
  await run(); // warm-up
  const samples = [];
  for (let i = 0; i < n; i++) samples.push(await run());
  console.log(`${label.padEnd(58)} ${stats(samples)}`);
}

function check(condition, message) {
  if (!condition) {
    console.error(`check failed: ${message}`);
    process.exit(1);
  }
}

const lastStart = Math.max(1, userCount - 99);
for (const [label, query] of [
  ['GET /Users?startIndex=1&count=100', '?startIndex=1&count=100'],
  [
    `GET /Users?startIndex=${Math.floor(userCount / 2)}&count=100`,
    `?startIndex=${Math.floor(userCount / 2)}&count=100`,
  ],
  [`GET /Users?startIndex=${lastStart}&count=100 (last page)`, `?startIndex=${lastStart}&count=100`],
  ['GET /Users?count=1', '?count=1'],
]) {
  await measure(label, 30, async () => {
    const r = await timed('GET', `/Users${query}`);
    check(r.status === 200 && r.json.totalResults === userCount, `${label}: ${r.status}`);
    return r.ms;
  });
}

let probe = 0;
await measure(`membership check among ${memberCount.toLocaleString('en')} (member / not)`, 200, async () => {
  probe++;
  const member = probe % 2 === 0;
  const userId = member
    ? ids[(probe * 37) % memberCount]
    : ids[memberCount + ((probe * 37) % (userCount - memberCount))];
  const filter = encodeURIComponent(`id eq "${groupId}" and members eq "${userId}"`);
  const r = await timed('GET', `/Groups?filter=${filter}&excludedAttributes=members`);
  check(r.status === 200 && r.json.totalResults === (member ? 1 : 0), 'membership answer');
  return r.ms;
});

let next = memberCount;
await measure('PATCH add 1,000 members (one operation)', 10, async () => {
  const value = ids.slice(next, next + 1000).map((id) => ({ value: id }));
  next += 1000;
  const r = await timed('PATCH', `/Groups/${patchGroupId}`, {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
    Operations: [{ op: 'Add', path: 'members', value }],
  });
  check(r.status === 204, `patch: ${r.status}`);
  return r.ms;
});

await measure(
  `GET group of ${memberCount.toLocaleString('en')}, excludedAttributes=members`,
  30,
  async () => {
    const r = await timed('GET', `/Groups/${groupId}?excludedAttributes=members`);
    check(r.status === 200 && r.json.members === undefined, 'excluded');
    return r.ms;
  },
);
await measure(`GET group of ${memberCount.toLocaleString('en')} with all members`, 10, async () => {
  const r = await timed('GET', `/Groups/${groupId}`);
  check(r.status === 200 && r.json.members.length === memberCount, 'members');
  return r.ms;
});

await app.close();
await dropDatabase();
