// db:copy / db:verify / db:backup round trip (docs/operations.md): data written through the API on SQLite,
// copied to a fresh PostgreSQL database and back by the built CLI; a service started on each copy answers every
// list and GET as the original did, accepts the same keys and refuses the revoked one, replays an Idempotency-Key.
// Every area is in the data: all-day, POSIX-zone and iCalendar-imported schedules (a re-import on the copy updates,
// the iCalendar keys came along), replication state, an installed SmartApp and its remembered signed requests (a
// replay on the copy gets the first reply), a pending job (runs once on each copy) and an SMTP password (the copy's
// test message logs in to a loopback SMTP server with it).
// Also: a copy into a target that holds data is refused, a copy killed with SIGKILL leaves its target unchanged,
// a backup under 20 writers holds every write acknowledged before it began.
// Runs in the SQLite pass only (the CI runs the suite twice): its PostgreSQL leg uses a database of its own on the
// server at 127.0.0.1:5432 (PG_ADMIN_URL to change), so the heavy round trip runs once.
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3';
import pg from 'pg';
import { ApiKeysService } from '../src/auth/api-keys.service.js';
import { generateTestKeyPair } from '../src/device-webhook/signature/signature-test-kit.js';
import { JobsService } from '../src/jobs/jobs.service.js';
import { FakeSmartThings } from './device-webhook/fake-smartthings.js';
import { bodies, deliver, webhookPath } from './device-webhook/smartapp-requests.js';
import { testClock, webhookTestOptions } from './device-webhook/webhook-test-options.js';
import { scheduleBody, scheduleItem } from './factories/schedule.factory.js';
import { smtpConfiguration } from './mail/smtp-configuration.factory.js';
import { startSmtpServer, type SmtpTestServer } from './mail/smtp-harness.js';
import { heartbeat, report, created as changeSetCreated } from './replication/replication-calls.js';
import { killCopyHalfway } from './support/kill-copy.js';
import { runCli } from './support/spawn.js';
import { ADMIN_KEY, startTestApp, type TestApp } from './support/test-app.js';
import { createTestDatabase, isPostgresRun, type TestDatabase } from './support/test-database.js';

const ADMIN_URL = process.env.PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const suite = isPostgresRun() ? describe.skip : describe;

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * The audit trail's two PostgreSQL sequences after a copy: each steps by 2, on opposite parities, past every id of
 * either table, so new events in the tail never take an id the fold has moved into audit_events.
 */
async function expectAuditIdsApart(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ last: string; events: string; tail: string }>(
      `SELECT GREATEST((SELECT COALESCE(MAX(id), 0) FROM audit_events),
                       (SELECT COALESCE(MAX(id), 0) FROM audit_events_tail)) AS last,
              nextval(pg_get_serial_sequence('audit_events', 'id')) AS events,
              nextval(pg_get_serial_sequence('audit_events_tail', 'id')) AS tail`,
    );
    const again = await client.query<{ events: string; tail: string }>(
      `SELECT nextval(pg_get_serial_sequence('audit_events', 'id')) AS events,
              nextval(pg_get_serial_sequence('audit_events_tail', 'id')) AS tail`,
    );
    const [last, events, tail] = [rows[0].last, rows[0].events, rows[0].tail].map(BigInt);
    expect(last).toBeGreaterThan(0n);
    expect({ eventsPast: events > last, tailPast: tail > last }).toEqual({
      eventsPast: true,
      tailPast: true,
    });
    expect((events - tail) % 2n).not.toBe(0n);
    expect([BigInt(again.rows[0].events) - events, BigInt(again.rows[0].tail) - tail]).toEqual([2n, 2n]);
  } finally {
    await client.end();
  }
}

const DOMAIN = 'copyhome';
const ICAL_FILE = new URL('./fixtures/ical/google-weekly-exdate-lines-utc.ics', import.meta.url);
const SMTP_PASSWORD = 'c0pied-Tr0ub4dor&3';
const PENDING_JOB = 'test.copied';

const GETS = [
  '/api/v1/Schedule?PageSize=500',
  '/api/v1/scim/Users?count=100',
  '/api/v1/scim/Groups?count=100',
  '/api/v1/mail/smtpConfigurations?Domain=copy.example',
  '/api/v1/Replication/Servers?IncludeDecommissioned=true',
  `${webhookPath(DOMAIN)}/installedapps`,
];
const signing = generateTestKeyPair();

suite('db:copy, db:verify, db:backup', () => {
  let source: TestDatabase;
  let pgName: string;
  let pgUrl: string;
  let back: string;
  const answers = new Map<string, unknown>();
  let liveKey: string;
  let revokedKey: string;
  const idempotent = { key: `"${randomUUID()}"`, body: scheduleBody(scheduleItem({ Name: 'once' })), id: '' };
  const fake = new FakeSmartThings();
  let smtp: SmtpTestServer;
  let keyDir: string;
  /** A SmartApp event as SmartThings signed it on the source: its signature is remembered with the reply. */
  const signed = { body: {} as Record<string, unknown>, date: new Date(), reply: '' };
  let importedIds: string[];

  const env = (databaseUrl: string) => ({ DATABASE_URL: databaseUrl, DATA_DIR: source.dataDir });
  /** The service's settings for the loopback SmartThings and SMTP server, the same on the source and each copy. */
  const appOptions = () => ({
    env: {
      SMARTTHINGS_PUBLIC_KEY_FILE: path.join(keyDir, 'smartthings.pem'),
      SMARTTHINGS_KEY_URL: fake.url,
      SMARTTHINGS_API_URL: fake.url,
      SMARTTHINGS_CLIENT_ID: fake.clientId,
      SMARTTHINGS_CLIENT_SECRET: fake.clientSecret,
      OUTBOUND_ALLOW: '127.0.0.0/8',
      JOB_POLL_MS: '100',
    },
    extraModules: [webhookTestOptions()],
  });
  const importIcal = (t: TestApp) =>
    t.request({
      method: 'POST',
      url: '/api/v1/Schedule/import',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'text/calendar; charset=utf-8' },
      payload: fs.readFileSync(ICAL_FILE),
    });
  const get = (t: TestApp, url: string, key = ADMIN_KEY) =>
    t.request({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });

  async function collect(t: TestApp): Promise<Map<string, unknown>> {
    const seen = new Map<string, unknown>();
    for (const url of GETS) seen.set(url, (await get(t, url)).json());
    const schedules = (seen.get(GETS[0]) as { Result: Array<{ Id: string }> }).Result;
    for (const { Id } of schedules) {
      seen.set(`/api/v1/Schedule/${Id}`, (await get(t, `/api/v1/Schedule/${Id}`)).json());
      // DTSTAMP is the moment of the export, not data.
      const ical = (await get(t, `/api/v1/Schedule/${Id}/ical`)).body.replace(/^DTSTAMP:.*\r\n/gm, '');
      seen.set(`/api/v1/Schedule/${Id}/ical`, ical);
    }
    const ids = schedules.map(({ Id }) => Id).join(',');
    const window = 'Start=2025-12-01T00:00:00Z&End=2026-04-01T00:00:00Z';
    seen.set('occurrences', (await get(t, `/api/v1/Occurrence?ScheduleIds=${ids}&${window}`)).json());
    const runs = await t.post('/api/v1/migration/getMigrationRuns', { MigrationId: null });
    seen.set('getMigrationRuns', runs.json());
    return seen;
  }

  beforeAll(async () => {
    source = await createTestDatabase();
    pgName = `test_dbcopy_${randomBytes(4).toString('hex')}`;
    pgUrl = `${ADMIN_URL.replace(/\/[^/]*$/, '')}/${pgName}`;
    back = `sqlite:${path.join(source.dataDir, 'back.sqlite')}`;
    await admin(`CREATE DATABASE "${pgName}"`);
    await fake.start();
    smtp = await startSmtpServer({ users: { mailer: SMTP_PASSWORD } });
    keyDir = fs.mkdtempSync(path.join(source.dataDir, 'st-key-'));
    fs.writeFileSync(path.join(keyDir, 'smartthings.pem'), signing.publicKeyPem);
    const t = await startTestApp({ database: source, ...appOptions() });
    try {
      const zoned = scheduleItem({ Name: 'zoned', StartTimeZone: 'Europe/Berlin' });
      const weekly = scheduleItem({
        Name: 'weekly',
        Recurrence: { RecurrenceType: 'Weekly', Interval: '1' },
      });
      const allDay = scheduleItem({
        Name: 'all-day',
        Start: '2026-01-05T00:00:00+01:00',
        End: '2026-01-06T00:00:00+01:00',
        AllDay: true,
      });
      const posix = scheduleItem({
        Name: 'posix',
        Start: '2026-01-05T09:00:00-05:00',
        End: '2026-01-05T09:30:00-05:00',
        StartTimeZone: 'EST5EDT,M3.2.0,M11.1.0',
      });
      for (const item of [zoned, weekly, scheduleItem(), allDay, posix]) {
        expect((await t.post('/api/v1/Schedule', scheduleBody(item))).statusCode).toBe(201);
      }
      const imported = await importIcal(t);
      expect(imported.statusCode).toBe(201);
      importedIds = (imported.json<{ Schedules: Array<{ Id: string }> }>().Schedules ?? []).map(
        ({ Id }) => Id,
      );
      expect(importedIds.length).toBeGreaterThan(0);
      await writeReplicationState(t);
      await installSmartApp(t);
      await t.app.get(JobsService).enqueue({ kind: PENDING_JOB, payload: { copied: true } });
      const mail = smtpConfiguration({ Context: { Domain: 'mail.copy.example' }, Port: smtp.port });
      expect(
        (await t.post('/api/v1/mail/ensureSmtpConfiguration', { ...mail, Password: SMTP_PASSWORD }))
          .statusCode,
      ).toBe(200);
      const first = await t.post('/api/v1/Schedule', idempotent.body, { 'idempotency-key': idempotent.key });
      idempotent.id = first.json<{ Result: { Id: string } }>().Result.Id;
      const user = await t.post('/api/v1/scim/Users', {
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
        userName: 'ada@copy.example',
        emails: [{ value: 'ada@copy.example', type: 'work', primary: true }],
      });
      expect(user.statusCode).toBe(201);
      const group = await t.post('/api/v1/scim/Groups', {
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
        displayName: 'copied',
        members: [{ value: user.json<{ id: string }>().id }],
      });
      expect(group.statusCode).toBe(201);
      const remote = smtpConfiguration({ Context: { Domain: 'copy.example' }, Host: 'smtp.example.com' });
      expect((await t.post('/api/v1/mail/ensureSmtpConfiguration', remote)).statusCode).toBe(200);
      const keys = t.app.get(ApiKeysService);
      liveKey = (await keys.create('live', ['admin'])).key;
      const revoked = await keys.create('revoked', ['admin']);
      revokedKey = revoked.key;
      await keys.revoke(revoked.record.id);
      for (const [url, answer] of await collect(t)) answers.set(url, answer);
    } finally {
      await t.close();
    }
  }, 120_000);

  afterAll(async () => {
    await admin(`DROP DATABASE IF EXISTS "${pgName}" WITH (FORCE)`);
    await fake.stop();
    await smtp?.close();
    await source.drop();
  });

  /** Two servers' agents report on one origin's change sets; one node is renamed, one decommissioned. */
  async function writeReplicationState(t: TestApp): Promise<void> {
    for (const changeSet of [1, 2, 3]) await changeSetCreated(t, changeSet);
    await heartbeat(t, 'copy-a', 'copy-a-1');
    await heartbeat(t, 'copy-b', 'copy-b-1');
    await report(t, { Server: 'copy-a', Node: 'copy-a-1', AppliedChangeSet: 3 });
    await report(t, {
      Server: 'copy-b',
      Node: 'copy-b-1',
      AppliedChangeSet: 1,
      Errors: [{ Code: 'E_APPLY', Message: 'constraint violated', ChangeSet: 2 }],
    });
    expect(
      (await t.post('/api/v1/Replication/Nodes/rename', { Node: 'copy-a-1', Name: 'A one' })).statusCode,
    ).toBe(200);
    expect((await t.post('/api/v1/Replication/Servers/decommission', { Server: 'copy-b' })).statusCode).toBe(
      200,
    );
  }

  /** INSTALL, then a signed EVENT whose signature and reply the service remembers. */
  async function installSmartApp(t: TestApp): Promise<void> {
    const setup = { installedAppId: randomUUID(), contactSensors: ['copy-door'], lights: ['copy-lamp'] };
    const install = await deliver(t, DOMAIN, bodies.install(setup, 'tok-copy', 'ref-copy'), {
      privateKey: signing.privateKey,
    });
    expect(install.statusCode).toBe(200);
    signed.body = bodies.contact(setup, 'tok-copy-2', 'open');
    signed.date = new Date();
    const first = await deliver(t, DOMAIN, signed.body, {
      privateKey: signing.privateKey,
      date: signed.date,
    });
    expect(first.statusCode).toBe(200);
    signed.reply = first.body;
    await fake.waitFor((calls) => calls.some((call) => call.path === '/devices/copy-lamp/commands'));
  }

  async function expectSameAnswers(url: string): Promise<void> {
    const t = await startTestApp({
      database: { ...source, url, kind: url.startsWith('sqlite') ? 'sqlite' : 'postgres' },
      ...appOptions(),
    });
    try {
      expect(Object.fromEntries(await collect(t))).toEqual(Object.fromEntries(answers));
      await expectAreasCarriedOver(t);
      expect((await get(t, GETS[0], liveKey)).statusCode).toBe(200);
      expect((await get(t, GETS[0], revokedKey)).statusCode).toBe(401);
      const replay = await t.post('/api/v1/Schedule', idempotent.body, { 'idempotency-key': idempotent.key });
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.json<{ Result: { Id: string } }>().Result.Id).toBe(idempotent.id);
    } finally {
      await t.close();
    }
  }

  /** What the answers alone do not show: keys, secrets and pending work came along and still work. */
  async function expectAreasCarriedOver(t: TestApp): Promise<void> {
    // The iCalendar keys: the same file again updates the imported schedules, it makes none.
    const again = await importIcal(t);
    expect(again.statusCode).toBe(201);
    const statuses = again.json<{ Schedules: Array<{ Id: string; Status: string }> }>().Schedules;
    expect(statuses.map(({ Id, Status }) => [Id, Status])).toEqual(importedIds.map((id) => [id, 'Updated']));
    // The remembered signature: a replay gets the first reply and changes nothing.
    const commands = () => fake.calls.filter((call) => call.path === '/devices/copy-lamp/commands').length;
    const before = commands();
    testClock.fixed = signed.date;
    try {
      const replay = await deliver(t, DOMAIN, signed.body, {
        privateKey: signing.privateKey,
        date: signed.date,
      });
      expect({ status: replay.statusCode, body: replay.body }).toEqual({ status: 200, body: signed.reply });
      // The reply alone would not tell (the event id deduplicates too): the service knew the signature.
      const replays = t.logs.filter((line) =>
        String(line.message).startsWith('device webhook: a signed request seen before was posted again'),
      );
      expect(replays).toHaveLength(1);
    } finally {
      testClock.fixed = undefined;
    }
    // The SMTP password decrypts with the copied key material: the server saw it at AUTH.
    const sent = await t.post('/api/v1/mail/sendTestMessage', {
      Context: { Domain: 'mail.copy.example' },
      To: 'ops@copy.example',
    });
    expect(sent.json()).toMatchObject({ Succeeded: true, Code: 'Sent' });
    expect(smtp.credentials.at(-1)).toMatchObject({ username: 'mailer', password: SMTP_PASSWORD });
    await expectPendingJobRunsOnce(t);
    expect(commands()).toBe(before);
  }

  /** The job queued on the source (no handler there) runs once on the copy, then is gone. */
  async function expectPendingJobRunsOnce(t: TestApp): Promise<void> {
    const runs: unknown[] = [];
    const jobs = t.app.get(JobsService);
    jobs.register<{ copied: boolean }>({
      kind: PENDING_JOB,
      maxAttempts: 1,
      retryDelayMs: () => 100,
      handle: ({ payload }) => {
        runs.push(payload);
        return Promise.resolve();
      },
    });
    jobs.wake();
    const left = async () =>
      (await t.dataSource.query(`SELECT id FROM jobs WHERE kind = '${PENDING_JOB}'`)).length as number;
    for (let waited = 0; (runs.length === 0 || (await left()) > 0) && waited < 15_000; waited += 100)
      await new Promise((resolve) => setTimeout(resolve, 100));
    // A few more polls: a second run would show here.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect({ runs, left: await left() }).toEqual({ runs: [{ copied: true }], left: 0 });
  }

  it('copies SQLite → PostgreSQL → SQLite; a service on each copy answers as on the original', async () => {
    const there = await runCli(['db:copy', '--to', pgUrl], env(source.url));
    expect(there.stderr).toBe('');
    expect(there.code).toBe(0);
    expect(there.stdout).toMatch(/^table=scim_users rows=1 seconds=/m);
    expect(there.stdout).toMatch(/^copied tables=\d+ rows=\d+ seconds=/m);
    expect(there.stdout).toContain(': ok');
    await expectAuditIdsApart(pgUrl);
    const again = await runCli(['db:copy', '--from', pgUrl, '--to', back], env(source.url));
    expect(again.code).toBe(0);
    const verify = await runCli(['db:verify', '--against', source.url], env(back));
    expect(verify.stdout).toContain(': ok');
    expect(verify.code).toBe(0);
    await expectSameAnswers(pgUrl);
    await expectSameAnswers(back);
  }, 120_000);

  it('refuses a target that holds data, and db:verify names the table that differs', async () => {
    const refused = await runCli(['db:copy', '--to', pgUrl], env(source.url));
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('holds data');
    // A fresh copy: the services of the first test wrote to theirs (the re-import, the job).
    const fresh = path.join(source.dataDir, 'fresh.sqlite');
    expect((await runCli(['db:copy', '--to', `sqlite:${fresh}`], env(source.url))).code).toBe(0);
    const db = new Database(fresh);
    db.prepare("UPDATE scim_groups SET display_name = 'changed'").run();
    db.close();
    const verify = await runCli(['db:verify', '--against', source.url], env(`sqlite:${fresh}`));
    expect(verify.code).toBe(1);
    expect(verify.stdout).toContain('table scim_groups differs');
    expect(verify.stdout).not.toContain('table schedules differs');
  }, 90_000);

  it('leaves the target unchanged when the copy is killed halfway', async () => {
    // A bigger source, so that the copy is still loading when it is killed.
    const bigFile = path.join(source.dataDir, 'big.sqlite');
    fs.copyFileSync(source.url.slice('sqlite:'.length), bigFile);
    const big = new Database(bigFile);
    const insert = big.prepare('INSERT INTO rate_limits (key, points, expire) VALUES (?, 1, 0)');
    big.transaction(() => {
      for (let i = 0; i < 300_000; i++) insert.run(`k${i}`);
    })();
    big.close();
    // The target as it is now (a service ran on it in an earlier test, so it is no longer equal to the source).
    const before = `sqlite:${path.join(source.dataDir, 'target-before.sqlite')}`;
    const snapshot = await runCli(['db:copy', '--from', pgUrl, '--to', before], env(source.url));
    expect(snapshot.code).toBe(0);
    await killHalfway(['--replace', '--to', pgUrl], `sqlite:${bigFile}`);
    const verify = await runCli(['db:verify', '--from', pgUrl, '--against', before], env(source.url));
    expect(verify.stdout).toContain(': ok');
    expect(verify.code).toBe(0);
  }, 120_000);

  it('leaves an empty SQLite target as it was (no file, or the same empty file) when killed halfway', async () => {
    const bigFile = path.join(source.dataDir, 'big.sqlite');
    const missing = path.join(source.dataDir, 'never-written.sqlite');
    await killHalfway(['--to', `sqlite:${missing}`], `sqlite:${bigFile}`);
    for (const suffix of ['', '-wal', '-shm', '-journal'])
      expect(fs.existsSync(`${missing}${suffix}`)).toBe(false);
    const empty = path.join(source.dataDir, 'empty.sqlite');
    fs.writeFileSync(empty, '');
    await killHalfway(['--to', `sqlite:${empty}`], `sqlite:${bigFile}`);
    expect(fs.statSync(empty).size).toBe(0);
    // The killed copy's staged file is beside it under its own name (`.copying-<pid>`); the next copy starts afresh.
    const finished = await runCli(['db:copy', '--to', `sqlite:${empty}`], env(source.url));
    expect(finished.code).toBe(0);
    expect((await runCli(['db:verify', '--against', source.url], env(`sqlite:${empty}`))).code).toBe(0);
  }, 120_000);

  /** Starts `db:copy` from `from` and kills it (SIGKILL) while rate_limits, the big table, loads. */
  const killHalfway = (args: string[], from: string) => killCopyHalfway(args, env(from));

  it('backs up under 20 writers: every write acknowledged before the backup began is in the file', async () => {
    const t = await startTestApp({ database: source });
    const acknowledged: Array<{ id: string; at: number }> = [];
    let writing = true;
    const writer = async (): Promise<void> => {
      while (writing) {
        const answer = await t.post('/api/v1/Schedule', scheduleBody(scheduleItem({ Name: 'under load' })));
        if (answer.statusCode === 201)
          acknowledged.push({ id: answer.json<{ Result: { Id: string } }>().Result.Id, at: Date.now() });
      }
    };
    const writers = Array.from({ length: 20 }, () => writer());
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      const file = path.join(source.dataDir, 'backup.sqlite');
      const began = Date.now();
      const backup = await runCli(['db:backup', file], env(source.url));
      expect(backup.code).toBe(0);
      expect(backup.stdout).toContain('not in the file');
      writing = false;
      await Promise.all(writers);
      const before = acknowledged.filter((write) => write.at < began);
      expect(before.length).toBeGreaterThan(0);
      const db = new Database(file, { readonly: true });
      const stored = new Set(db.prepare('SELECT id FROM schedules').pluck().all() as string[]);
      const info = Object.fromEntries(
        (db.prepare('SELECT key, value FROM backup_info').raw(true).all() as string[][]).map(([k, v]) => [
          k,
          v,
        ]),
      );
      db.close();
      expect(before.filter((write) => !stored.has(write.id))).toEqual([]);
      expect(info).toMatchObject({ source_engine: 'sqlite', format: 'platform-api-backup/1' });
      expect(JSON.parse(info.table_counts)).toMatchObject({ schedules: stored.size });
      expect(info.encryption_key).not.toContain(
        fs.readFileSync(path.join(source.dataDir, 'encryption.key'), 'utf8').trim(),
      );
    } finally {
      writing = false;
      await Promise.all(writers);
      await t.close();
    }
  }, 120_000);
});
