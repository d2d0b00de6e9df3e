// The audit trail: every kind of change leaves one event naming its caller, written with the
// change; refusals (401/403) are recorded; nothing secret reaches the trail; only admins read it; the table is
// append-only (PostgreSQL refuses UPDATE/DELETE outside retention, SQLite refuses UPDATE); retention deletes old
// events. Runs on SQLite by default and on PostgreSQL when DATABASE_URL points at one.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { cliSource } from '../src/audit/audit-source.js';
import { AuditFold } from '../src/audit/audit-fold.js';
import { AuditRetention } from '../src/audit/audit-retention.js';
import { ApiKeysService } from '../src/auth/api-keys.service.js';
import { scheduleBody, scheduleItem } from './factories/schedule.factory.js';
import { smtpConfiguration } from './mail/smtp-configuration.factory.js';
import { patchBody, scimClient } from './scim/scim-client.js';
import { scimUserBody } from './scim/scim-user.factory.js';
import { ADMIN_KEY, startTestApp, type TestApp } from './support/test-app.js';

interface AuditEvent {
  Id: string;
  OccurredAt: string;
  ActorType: string;
  ActorId: string | null;
  ActorName: string | null;
  ActorIssuer: string | null;
  Action: string;
  ResourceType: string;
  ResourceId: string | null;
  Outcome: string;
  CorrelationId: string | null;
  ClientAddress: string | null;
  Detail: Record<string, unknown> | null;
}

interface AuditPage {
  Succeeded: boolean;
  Result: AuditEvent[];
  NextCursor: string | null;
  HasNextPage: boolean;
}

const SMTP_PASSWORD = 'Sm7p-secret-never-in-the-trail';
const SCIM_PASSWORD = 'Scim-p4ssword-never-in-the-trail';

describe('audit trail', () => {
  let t: TestApp;
  const postgres = (process.env.DATABASE_URL ?? '').startsWith('postgres');

  beforeAll(async () => {
    t = await startTestApp();
  });

  afterAll(async () => {
    await t?.close();
  });

  async function trail(query: Record<string, string> = {}, key = ADMIN_KEY): Promise<AuditPage> {
    const response = await t.request({
      method: 'GET',
      url: `/api/v1/audit-events?${new URLSearchParams(query).toString()}`,
      headers: { authorization: `Bearer ${key}` },
    });
    expect(response.statusCode).toBe(200);
    return response.json<AuditPage>();
  }

  /** Every event, all pages, as the route answers them. */
  async function everything(): Promise<AuditEvent[]> {
    const events: AuditEvent[] = [];
    let cursor: string | null = null;
    do {
      const page = await trail({ PageSize: '500', ...(cursor === null ? {} : { Cursor: cursor }) });
      events.push(...page.Result);
      cursor = page.NextCursor;
    } while (cursor !== null);
    return events;
  }

  async function eventsFor(resourceId: string): Promise<AuditEvent[]> {
    return (await trail({ ResourceId: resourceId })).Result.reverse();
  }

  it('records schedule create, replace and delete with the caller, the correlation id and the address', async () => {
    const correlationId = `audit-${randomUUID()}`;
    const created = await t.post('/api/v1/Schedule', scheduleBody(scheduleItem()), {
      'x-correlation-id': correlationId,
    });
    expect(created.statusCode).toBe(201);
    const id = created.json<{ Result: { Id: string } }>().Result.Id;
    const replaced = await t.request({
      method: 'PUT',
      url: `/api/v1/Schedule/${id}`,
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
      payload: JSON.stringify(scheduleBody(scheduleItem(), scheduleItem())),
    });
    expect(replaced.statusCode).toBe(200);
    const deleted = await t.request({
      method: 'DELETE',
      url: `/api/v1/Schedule/${id}`,
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(deleted.statusCode).toBe(200);
    // A refused write (unknown id) changed nothing and leaves no event.
    const missing = await t.request({
      method: 'DELETE',
      url: `/api/v1/Schedule/${id}`,
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(missing.statusCode).toBe(404);

    const events = await eventsFor(id);
    expect(events.map((event) => event.Action)).toEqual([
      'schedule.create',
      'schedule.replace',
      'schedule.delete',
    ]);
    expect(events[0]).toMatchObject({
      ActorType: 'env-key',
      ActorId: expect.stringMatching(/^env:[0-9a-f]{16}$/),
      ActorName: 'API_KEYS[0]',
      ActorIssuer: null,
      ResourceType: 'Schedule',
      Outcome: 'success',
      CorrelationId: correlationId,
      ClientAddress: '127.0.0.1',
      Detail: { items: 1, version: 1 },
    });
    expect(events[1].Detail).toEqual({ items: 2, version: 2 });
  });

  it('records each schedule an iCalendar import creates', async () => {
    const uid = `audit-${randomUUID()}@example.com`;
    const ical = [
      'BEGIN:VCALENDAR',
      'VERSION:2.0',
      'PRODID:-//audit test//EN',
      'BEGIN:VEVENT',
      `UID:${uid}`,
      'DTSTAMP:20260101T000000Z',
      'DTSTART:20260105T090000Z',
      'DTEND:20260105T100000Z',
      'RRULE:FREQ=WEEKLY',
      'SUMMARY:Standup',
      'END:VEVENT',
      'END:VCALENDAR',
      '',
    ].join('\r\n');
    const imported = await t.request({
      method: 'POST',
      url: '/api/v1/Schedule/import',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'text/calendar' },
      payload: ical,
    });
    expect(imported.statusCode).toBe(201);
    const id = imported.json<{ Result: { Id: string } }>().Result.Id;
    const [event] = await eventsFor(id);
    expect(event).toMatchObject({
      Action: 'schedule.import',
      ResourceType: 'Schedule',
      ActorId: expect.stringMatching(/^env:[0-9a-f]{16}$/),
      Detail: { status: 'Created', line: 4 },
    });
  });

  it('records SCIM user and group writes without attribute values', async () => {
    const scim = scimClient(t);
    const created = await scim.post('/Users', scimUserBody({ password: SCIM_PASSWORD }));
    expect(created.statusCode).toBe(201);
    const user = created.json<{ id: string; userName: string }>();
    const replaced = await scim.put(
      `/Users/${user.id}`,
      scimUserBody({ userName: user.userName, active: false }),
    );
    expect(replaced.statusCode).toBe(200);
    const patched = await scim.patch(
      `/Users/${user.id}`,
      patchBody(
        { op: 'replace', path: 'password', value: SCIM_PASSWORD },
        { op: 'replace', path: 'active', value: true },
      ),
    );
    expect(patched.statusCode).toBe(200);
    const group = await scim.post('/Groups', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
      displayName: `Auditors ${randomUUID()}`,
      members: [{ value: user.id }],
    });
    expect(group.statusCode).toBe(201);
    const groupId = group.json<{ id: string }>().id;
    expect(
      (
        await scim.patch(
          `/Groups/${groupId}`,
          patchBody({ op: 'remove', path: `members[value eq "${user.id}"]` }),
        )
      ).statusCode,
    ).toBe(204);
    expect((await scim.delete(`/Groups/${groupId}`)).statusCode).toBe(204);
    expect((await scim.delete(`/Users/${user.id}`)).statusCode).toBe(204);

    const userEvents = await eventsFor(user.id);
    expect(userEvents.map((event) => event.Action)).toEqual([
      'scim.user.create',
      'scim.user.replace',
      'scim.user.patch',
      'scim.user.delete',
    ]);
    expect(userEvents[0].Detail).toEqual({ userName: user.userName });
    expect(userEvents[2].Detail).toEqual({
      userName: user.userName,
      operations: ['replace password', 'replace active'],
    });
    const groupEvents = await eventsFor(groupId);
    expect(groupEvents.map((event) => [event.Action, event.ResourceType])).toEqual([
      ['scim.group.create', 'ScimGroup'],
      ['scim.group.patch', 'ScimGroup'],
      ['scim.group.delete', 'ScimGroup'],
    ]);
    expect(groupEvents[1].Detail).toMatchObject({ membersChanged: 1 });
  });

  it('records SMTP configuration changes with field names, never the password', async () => {
    // A host name: judged by the egress policy when used, not when stored.
    const body = smtpConfiguration({
      Context: { Domain: 'audit.example' },
      Host: 'smtp.audit.example',
      Password: SMTP_PASSWORD,
    });
    expect((await t.post('/api/v1/mail/ensureSmtpConfiguration', body)).json()).toMatchObject({
      Code: 'Created',
    });
    const updated = await t.post('/api/v1/mail/ensureSmtpConfiguration', {
      ...body,
      Priority: 3,
      Password: `${SMTP_PASSWORD}-2`,
    });
    expect(updated.json()).toMatchObject({ Code: 'Updated' });
    const removed = await t.post('/api/v1/mail/removeSmtpConfiguration', {
      Context: body.Context,
      Host: body.Host,
      Port: body.Port,
      Username: body.Username,
    });
    expect(removed.json()).toMatchObject({ Code: 'Removed' });

    const events = (await trail({ ResourceType: 'SmtpConfiguration' })).Result.reverse();
    expect(events.map((event) => event.Action)).toEqual([
      'smtp-configuration.create',
      'smtp-configuration.update',
      'smtp-configuration.remove',
    ]);
    expect(new Set(events.map((event) => event.ResourceId)).size).toBe(1);
    expect(events[1].Detail).toMatchObject({
      tenant: 'audit.example',
      host: 'smtp.audit.example',
      port: 2525,
      username: 'mailer',
      changedFields: expect.arrayContaining(['Priority', 'Password']),
    });
  });

  it('records API keys created and revoked by the CLI, never the key', async () => {
    const keys = t.app.get(ApiKeysService);
    const { key, record } = await keys.create(
      'audit-reader',
      ['schedules'],
      undefined,
      cliSource('api-key:create'),
    );
    await keys.revoke(record.id, cliSource('api-key:revoke'));
    const events = await eventsFor(record.id);
    expect(events.map((event) => [event.Action, event.ActorType, event.ActorId])).toEqual([
      ['api-key.create', 'cli', 'api-key:create'],
      ['api-key.revoke', 'cli', 'api-key:revoke'],
    ]);
    expect(events[0].Detail).toEqual({ name: 'audit-reader', scopes: ['schedules'], domains: null });
    expect(JSON.stringify(await everything())).not.toContain(key.slice(3));
  });

  it('records the migrations applied at start-up', async () => {
    const page = await trail({ Action: 'migration.apply', ResourceId: 'AuditEvents1763780001500' });
    expect(page.Result).toHaveLength(1);
    expect(page.Result[0]).toMatchObject({
      ActorType: 'system',
      ActorId: 'startup',
      ResourceType: 'Migration',
    });
  });

  it('records every 401 and 403 with the caller known so far, and only admins read the trail', async () => {
    const { key: schedulesKey, record } = await t.app
      .get(ApiKeysService)
      .create('audit-scheduler', ['schedules']);
    const wrongKey = `pk_${randomUUID()}-never-in-the-trail`;
    const noKey = await t.request({ method: 'GET', url: '/api/v1/Schedule' });
    const badKey = await t.request({
      method: 'GET',
      url: '/api/v1/Schedule?PageSize=5',
      headers: { authorization: `Bearer ${wrongKey}` },
    });
    const forbidden = await t.request({
      method: 'GET',
      url: '/api/v1/audit-events',
      headers: { authorization: `Bearer ${schedulesKey}` },
    });
    expect([noKey.statusCode, badKey.statusCode, forbidden.statusCode]).toEqual([401, 401, 403]);

    const refused = (await trail({ Action: 'request.unauthenticated' })).Result;
    expect(refused.slice(0, 2).map((event) => [event.ResourceId, event.ActorType, event.Outcome])).toEqual([
      ['GET /api/v1/Schedule', 'anonymous', 'denied'],
      ['GET /api/v1/Schedule', 'anonymous', 'denied'],
    ]);
    const [denied] = (await trail({ Action: 'request.forbidden', Actor: record.id })).Result;
    expect(denied).toMatchObject({
      ActorType: 'api-key',
      ActorName: 'audit-scheduler',
      ResourceType: 'Route',
      ResourceId: 'GET /api/v1/audit-events',
      Outcome: 'denied',
    });
    // Filter by the key's name too.
    expect((await trail({ Actor: 'audit-scheduler', Action: 'request.forbidden' })).Result).toHaveLength(1);

    const all = JSON.stringify(await everything());
    for (const secret of [
      wrongKey,
      schedulesKey.slice(3),
      ADMIN_KEY,
      SMTP_PASSWORD,
      SCIM_PASSWORD,
      'Bearer',
    ]) {
      expect(all).not.toContain(secret);
    }
  });

  it('pages newest first by cursor, filters by time, and names a bad query field', async () => {
    for (let index = 0; index < 3; index++)
      expect((await t.post('/api/v1/Schedule', scheduleBody(scheduleItem()))).statusCode).toBe(201);
    const first = await trail({ PageSize: '2' });
    expect(first.Result).toHaveLength(2);
    expect(first.HasNextPage).toBe(true);
    const second = await trail({ PageSize: '2', Cursor: first.NextCursor! });
    expect(Number(second.Result[0].Id)).toBeLessThan(Number(first.Result[1].Id));
    const ids = (await everything()).map((event) => Number(event.Id));
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect(new Set(ids).size).toBe(ids.length);

    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await trail({ Since: future })).Result).toEqual([]);
    expect((await trail({ Until: future, PageSize: '1' })).Result).toHaveLength(1);

    const bad = await t.request({
      method: 'GET',
      url: '/api/v1/audit-events?Cursor=abc&Since=yesterday&PageSize=501',
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(bad.statusCode).toBe(400);
    expect(
      bad
        .json<{ Errors: Array<{ Field: string }> }>()
        .Errors.map((error) => error.Field)
        .sort(),
    ).toEqual(['Cursor', 'PageSize', 'Since']);
  });

  it('is append-only: no route changes an event, and the database refuses UPDATE (and DELETE on PostgreSQL)', async () => {
    for (const method of ['PUT', 'PATCH', 'DELETE', 'POST'] as const) {
      const response = await t.request({
        method,
        url: '/api/v1/audit-events',
        headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
        payload: '{}',
      });
      expect(response.statusCode).toBe(404);
    }
    await expect(t.dataSource.query("UPDATE audit_events SET actor_name = 'someone else'")).rejects.toThrow(
      /append-only/,
    );
    if (postgres) {
      await expect(t.dataSource.query('DELETE FROM audit_events')).rejects.toThrow(/append-only/);
      await expect(t.dataSource.query('TRUNCATE audit_events')).rejects.toThrow(/append-only/);
    }
    expect((await trail({ PageSize: '1' })).Result).toHaveLength(1);
  });

  it('retention deletes the events older than the cutoff and keeps the rest', async () => {
    const old = new Date(Date.now() - 400 * 86_400_000);
    const at = postgres ? old.toISOString() : old.toISOString().replace('T', ' ').replace('Z', '');
    const placeholder = postgres ? '$1' : '?';
    await t.dataSource.query(
      `INSERT INTO audit_events_tail (occurred_at, actor_type, action, resource_type, resource_id, outcome)
       VALUES (${placeholder}, 'system', 'test.old', 'Test', 'old-event', 'success')`,
      [at],
    );
    // Written where events are written; retention deletes folded events (a tail is seconds old).
    await t.app.get(AuditFold).folder.fold();
    const before = (await everything()).length;
    expect((await trail({ ResourceId: 'old-event' })).Result).toHaveLength(1);
    const cutoff = new Date(Date.now() - t.config.retention.auditDays * 86_400_000);
    expect(t.config.retention.auditDays).toBe(365);
    expect(await t.app.get(AuditRetention).prune(cutoff)).toBe(1);
    expect((await trail({ ResourceId: 'old-event' })).Result).toEqual([]);
    expect((await everything()).length).toBe(before - 1);
  });
});
