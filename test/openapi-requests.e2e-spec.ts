// The document accepts what the service accepts: real requests of clients nobody here wrote — SCIM PATCH bodies as
// Microsoft Entra ID, Okta and RFC 7644 write them (Users, operation 3's own path, Groups), a schedule's GET answer
// PUT back, the occurrence listing with date-only and date-time windows — are each answered 2xx by the service AND
// valid against /docs-json (path, query and body; test/support/openapi-request-validator.ts, JSON Schema 2020-12),
// as a gateway validating requests (Prism, Kong, Azure APIM) or a client generated from the document needs. Beside
// it, the answers are checked as in every spec (test/support/openapi-response-validator.ts). Also: every operation
// whose only required input is an id says which GET route lists the ids.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { scheduleBody, scheduleItem } from './factories/schedule.factory.js';
import { PATCH_OP, SCIM } from './scim/scim-client.js';
import { scimUserBody } from './scim/scim-user.factory.js';
import { OpenApiRequestValidator } from './support/openapi-request-validator.js';
import { ADMIN_KEY, startTestApp, type TestApp } from './support/test-app.js';

type Json = Record<string, unknown>;

let t: TestApp;
let document: { paths: Record<string, Record<string, Json>> };
let requests: OpenApiRequestValidator;

beforeAll(async () => {
  t = await startTestApp();
  document = (await t.request({ method: 'GET', url: '/docs-json' })).json();
  requests = new OpenApiRequestValidator(document);
});

afterAll(async () => {
  await t?.close();
});

/** Sends a request the document must accept; returns the answer and what the document said of the request. */
async function send(
  method: 'GET' | 'POST' | 'PUT' | 'PATCH',
  url: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<{ answer: LightMyRequestResponse; violations: string[] }> {
  const request: InjectOptions = {
    method,
    url,
    headers: {
      authorization: `Bearer ${ADMIN_KEY}`,
      ...(body === undefined ? {} : { 'content-type': contentType }),
    },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  };
  return { answer: await t.request(request), violations: requests.requestViolations(request) };
}

/** The service answers 2xx and the document accepts the request. */
async function accepted(
  method: 'GET' | 'POST' | 'PUT' | 'PATCH',
  url: string,
  body?: unknown,
  contentType?: string,
): Promise<LightMyRequestResponse> {
  const { answer, violations } = await send(method, url, body, contentType);
  expect([url, answer.statusCode, answer.statusCode < 300 ? '' : answer.body]).toEqual([
    url,
    expect.any(Number),
    '',
  ]);
  expect([url, violations]).toEqual([url, []]);
  return answer;
}

const scimPatch = (url: string, body: Json) => accepted('PATCH', url, body, 'application/scim+json');

async function createUser(): Promise<string> {
  const created = await accepted('POST', `${SCIM}/Users`, scimUserBody(), 'application/scim+json');
  return created.json<{ id: string }>().id;
}

describe('SCIM PATCH bodies of real clients: accepted by the service and by the document', () => {
  it('Users: Entra ID (op "Replace"/"Add"/"Remove", value-filter paths, path-less object values)', async () => {
    const id = await createUser();
    await scimPatch(`${SCIM}/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [
        { op: 'Replace', path: 'active', value: 'False' },
        { op: 'Add', path: 'emails[type eq "work"].value', value: 'ryan@contoso.com' },
        { op: 'Add', path: 'roles', value: [{ value: 'Admin' }] },
        { op: 'Replace', value: { 'name.givenName': 'Rian', displayName: 'Rian L' } },
      ],
    });
    const removed = await scimPatch(`${SCIM}/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Remove', path: 'roles', value: [{ value: 'Admin' }] }],
    });
    expect(removed.json()).toMatchObject({ active: false, displayName: 'Rian L', roles: null });
  });

  it('Users: Okta (lower-case op, path-less replace) and RFC 7644 §3.5.2 examples', async () => {
    const id = await createUser();
    await scimPatch(`${SCIM}/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'replace', value: { id, active: false } }],
    });
    await scimPatch(`${SCIM}/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'add', path: 'emails', value: [{ value: 'babs@jensen.org', type: 'home' }] }],
    });
    const patched = await scimPatch(`${SCIM}/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [
        { op: 'replace', path: 'emails[type eq "home"].value', value: 'babs@example.org' },
        { op: 'remove', path: 'emails[type eq "work"]' },
      ],
    });
    expect(patched.json()).toMatchObject({
      active: false,
      emails: [expect.objectContaining({ type: 'home', value: 'babs@example.org' })],
    });
  });

  it("Users at operation 3's own path: the interface's {Schemas, Operations:[{Path, Value}]} and Entra's body", async () => {
    const id = await createUser();
    const route = `${SCIM}/users/${id}`;
    expect(document.paths['/api/v1/scim/users/{id}']?.patch).toBeDefined();
    await scimPatch(route, {
      Schemas: [PATCH_OP],
      Operations: [
        { Path: 'displayName', Value: 'Babs' },
        { Path: 'emails[type eq "work"].value', Value: 'babs@example.com' },
        { op: 'replace', Value: { 'name.familyName': 'Jensen' } },
      ],
    });
    const patched = await scimPatch(route, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Replace', path: 'name.givenName', value: 'Barbara' }],
    });
    expect(patched.json()).toMatchObject({
      displayName: 'Babs',
      name: { givenName: 'Barbara', familyName: 'Jensen' },
    });
  });

  it('Groups: Entra ID, Okta (members[value eq "…"]), a path-less value and the interface spelling', async () => {
    const [alice, bob] = [await createUser(), await createUser()];
    const group = await accepted(
      'POST',
      `${SCIM}/Groups`,
      { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: `Sales ${alice}` },
      'application/scim+json',
    );
    const id = group.json<{ id: string }>().id;
    const url = `${SCIM}/Groups/${id}`;
    // Entra ID.
    await scimPatch(url, {
      schemas: [PATCH_OP],
      Operations: [
        { op: 'Add', path: 'members', value: [{ value: alice }, { value: bob }] },
        { op: 'Replace', path: 'externalId', value: 'sales-0042' },
      ],
    });
    await scimPatch(url, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Remove', path: 'members', value: [{ value: bob }] }],
    });
    // Okta: a value-filter path, and a path-less replace echoing the id.
    await scimPatch(url, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'remove', path: `members[value eq "${alice}"]` }],
    });
    await scimPatch(url, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'replace', value: { id, displayName: `Sales EMEA ${alice}` } }],
    });
    // The interface document's spelling, no op (replace).
    await scimPatch(url, { Schemas: [PATCH_OP], Operations: [{ Path: 'members', Value: [{ value: bob }] }] });
    const read = await accepted('GET', url);
    expect(read.json()).toMatchObject({
      displayName: `Sales EMEA ${alice}`,
      externalId: 'sales-0042',
      members: [expect.objectContaining({ value: bob })],
    });
  });

  it('the check can fail: operations the service refuses are refused by the document too', async () => {
    const id = await createUser();
    for (const operation of [
      { op: 'merge', path: 'displayName', value: 'x' },
      // RFC 7644 §3.5.2.2: a remove needs a path (noTarget).
      { op: 'Remove', value: { displayName: 'x' } },
    ]) {
      const { answer, violations } = await send(
        'PATCH',
        `${SCIM}/Users/${id}`,
        { schemas: [PATCH_OP], Operations: [operation] },
        'application/scim+json',
      );
      expect([operation, answer.statusCode]).toEqual([operation, 400]);
      expect([operation, violations.length]).not.toEqual([operation, 0]);
    }
  });
});

describe('schedules: the GET answer PUT back, and the listing with dates or date-times', () => {
  let scheduleId: string;

  beforeAll(async () => {
    const created = await accepted(
      'POST',
      '/api/v1/Schedule',
      scheduleBody(
        // A recurrence with one exception: GET answers null for every field it does not set (EndTime, Offset…).
        scheduleItem({
          Recurrence: {
            RecurrenceType: 'Weekly',
            Interval: '1',
            Pattern: 'FREQ=WEEKLY;BYDAY=MO',
            Exceptions: [{ OriginalTime: '2026-01-12T08:00:00Z', IsDeleted: true }],
          },
        }),
        // No name, no end, no zone, no recurrence: all null in the answer.
        { Start: '2026-01-07T10:00:00Z' },
      ),
    );
    scheduleId = created.json<{ Result: { Id: string } }>().Result.Id;
  });

  it('GET → PUT: read-only ids and the nulls of the answer are accepted by the document and the service', async () => {
    const read = await accepted('GET', `/api/v1/Schedule/${scheduleId}`);
    const schedule = read.json<{ Result: Json }>().Result;
    // The answer carries ids and nulls: the point is to send them back as they are.
    expect(JSON.stringify(schedule)).toContain('null');
    expect(schedule).toMatchObject({ Id: scheduleId, ScheduleItems: expect.any(Array) });
    const replaced = await accepted('PUT', `/api/v1/Schedule/${scheduleId}`, schedule);
    const strip = (items: Json[]) =>
      items.map(({ Id: _id, Recurrence, ...item }) => ({ ...item, recurs: Recurrence !== null }));
    expect(strip(replaced.json<{ Result: { ScheduleItems: Json[] } }>().Result.ScheduleItems)).toEqual(
      strip(schedule.ScheduleItems as Json[]),
    );
  });

  it('GET /api/v1/Occurrence with date-only Start/End: documented, and the same as midnight UTC', async () => {
    const byDate = await accepted(
      'GET',
      `/api/v1/Occurrence?ScheduleIds=${scheduleId}&Start=2026-01-01&End=2026-02-01`,
    );
    const byDateTime = await accepted(
      'GET',
      `/api/v1/Occurrence?ScheduleIds=${scheduleId}&Start=2026-01-01T00:00:00Z&End=2026-02-01T00:00:00Z`,
    );
    expect(byDate.json<{ Result: unknown[] }>().Result.length).toBeGreaterThan(0);
    expect(byDate.json()).toEqual(byDateTime.json());
    const grouped = await accepted('POST', '/api/v1/Occurrence/hasOccurrences/byGroup', {
      Groups: [{ Key: 'all', ScheduleIds: [scheduleId] }],
      Start: '2026-01-05',
      End: '2026-01-06',
    });
    expect(grouped.json()).toMatchObject({ Groups: { all: true } });
  });

  it('the check can fail: a window the service refuses (not a date) is refused by the document too', async () => {
    const { answer, violations } = await send(
      'GET',
      `/api/v1/Occurrence?ScheduleIds=${scheduleId}&Start=next-monday&End=2026-02-01`,
    );
    expect(answer.statusCode).toBe(400);
    expect(violations).not.toEqual([]);
  });
});

describe('Swagger UI: where an id comes from', () => {
  it('every operation whose only required input is an id names the GET route that lists them', () => {
    const named: string[] = [];
    const missing: string[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const required = ((operation.parameters ?? []) as Json[]).filter((p) => p.required === true);
        const body = operation.requestBody as Json | undefined;
        if (required.length === 0 || body?.required === true || required.some((p) => p.in !== 'path'))
          continue;
        const ids = required.filter((p) => p.name === 'id' || /Id$/.test(String(p.name)));
        if (ids.length === 0) continue;
        const description = typeof operation.description === 'string' ? operation.description : '';
        const routes = [...description.matchAll(/GET (\/api\/\S*[^\s.,;)])/g)].map((match) => match[1] ?? '');
        const listed = routes.some((route) => document.paths[route]?.get !== undefined);
        (listed ? named : missing).push(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(missing).toEqual([]);
    expect(named).toEqual(
      expect.arrayContaining([
        'GET /api/v1/Schedule/{id}',
        'DELETE /api/v1/Schedule/{id}',
        'GET /api/v1/Schedule/{id}/ical',
        'GET /api/v1/scim/Users/{id}',
        'GET /api/v1/scim/Groups/{id}',
        'GET /api/v1/scim/Schemas/{id}',
        'GET /api/v1/webhook/homeprovider/{domain}/installedapps/{installedAppId}/events',
      ]),
    );
  });
});
