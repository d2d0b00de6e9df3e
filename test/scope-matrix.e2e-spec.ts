// The scope matrix (issue 14): every operation of the OpenAPI document × every kind of caller — a key of each
// scope, no key, a revoked key, and a key bound to another tenant — answers as its scope decision says: the
// callers it admits get past authentication (any status but 401/403), the others get 401 or 403. The decisions are
// written out below, independently of the code: an operation the document gains without a line here fails the
// suite, so a new route cannot ship without someone deciding who may call it.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ApiKeysService } from '../src/auth/api-keys.service.js';
import { SCOPES, type Scope } from '../src/auth/scopes.js';
import { startTestApp, type TestApp } from './support/test-app.js';

/**
 * Who may call each operation. `public-by-default`: open unless configuration closes it (operation 1,
 * PUBLIC_OCCURRENCES); `signed`: authenticated by something other than an API key (the SmartThings signature).
 */
const DECISIONS: Record<string, Scope | 'public-by-default' | 'signed'> = {
  Occurrence_HasOccurrencesGrouped: 'public-by-default',
  Occurrence_List: 'schedules',
  Schedule_GetSchedules: 'schedules',
  Schedule_Create: 'schedules',
  Schedule_Get: 'schedules',
  Schedule_Replace: 'schedules',
  Schedule_Delete: 'schedules',
  Schedule_ImportIcal: 'schedules',
  Schedule_ExportIcal: 'schedules',
  Schedule_ExportIcalMany: 'schedules',
  Migration_GetMigrationRuns: 'migrations',
  Migration_Details: 'migrations',
  Mail_EnsureSmtpConfiguration: 'mail',
  Mail_ListSmtpConfigurations: 'mail',
  Mail_VerifySmtpConfiguration: 'mail',
  Mail_SendTestMessage: 'mail',
  Mail_RemoveSmtpConfiguration: 'mail',
  Webhook_HomeProvider: 'signed',
  Webhook_ListInstalledApps: 'admin',
  Webhook_ListDeviceEvents: 'admin',
  Scim_CreateUser: 'users',
  Scim_ListUsers: 'users',
  Scim_SearchUsers: 'users',
  Scim_GetUser: 'users',
  Scim_ReplaceUser: 'users',
  Scim_PatchUser: 'users',
  // Operation 3 at the interface's lower-case path: the same route.
  Scim_PatchUserInterfacePath: 'users',
  Scim_DeleteUser: 'users',
  Scim_CreateGroup: 'users',
  Scim_ListGroups: 'users',
  Scim_SearchGroups: 'users',
  Scim_Search: 'users',
  Scim_GetGroup: 'users',
  Scim_ReplaceGroup: 'users',
  Scim_PatchGroup: 'users',
  Scim_DeleteGroup: 'users',
  Scim_GetServiceProviderConfig: 'users',
  Scim_ListResourceTypes: 'users',
  Scim_GetResourceType: 'users',
  Scim_ListSchemas: 'users',
  Scim_GetSchema: 'users',
  Replication_ChangeSetCreated: 'replication',
  Replication_Report: 'replication',
  Replication_Heartbeat: 'replication',
  Replication_ChangeSetState: 'replication',
  Replication_ListServers: 'replication',
  Replication_RenameServer: 'replication',
  Replication_DecommissionServer: 'replication',
  Replication_RenameNode: 'replication',
  Replication_DecommissionNode: 'replication',
};

interface Operation {
  method: string;
  path: string;
  operationId: string;
  mediaType: string | undefined;
}

type Caller = { name: string; key: string | undefined; admits: (decision: string) => boolean };

let t: TestApp;
let operations: Operation[];
const callers: Caller[] = [];

beforeAll(async () => {
  t = await startTestApp();
  const keys = t.app.get(ApiKeysService);
  for (const scope of SCOPES) {
    const { key } = await keys.create(`matrix ${scope}`, [scope]);
    callers.push({
      name: `a "${scope}" key`,
      key,
      admits: (decision) => decision === scope || scope === 'admin' || decision === 'public-by-default',
    });
  }
  const revoked = await keys.create('matrix revoked', [...SCOPES]);
  await keys.revoke(revoked.record.id);
  callers.push(
    { name: 'no key', key: undefined, admits: (decision) => decision === 'public-by-default' },
    { name: 'a revoked key', key: revoked.key, admits: (decision) => decision === 'public-by-default' },
    {
      name: 'an all-scopes key bound to another tenant',
      key: (await keys.create('matrix other tenant', [...SCOPES], ['other-team'])).key,
      admits: (decision) => decision === 'public-by-default',
    },
  );
  const document = (await t.request({ method: 'GET', url: '/docs-json' })).json<{
    paths: Record<string, Record<string, { operationId: string; requestBody?: { content: object } }>>;
  }>();
  operations = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({
      method: method.toUpperCase(),
      path,
      operationId: operation.operationId,
      mediaType: operation.requestBody ? Object.keys(operation.requestBody.content)[0] : undefined,
    })),
  );
});

afterAll(async () => {
  await t.close();
});

function urlOf(path: string): string {
  return path.replace(/\{(\w+)\}/g, (_match, name: string) => (name === 'domain' ? 'acme' : randomUUID()));
}

describe('the scope matrix, from the OpenAPI document', () => {
  it('has a decision for every documented operation, and documents every decided one', () => {
    expect(operations.length).toBeGreaterThan(30);
    expect(operations.map((operation) => operation.operationId).sort()).toEqual(
      Object.keys(DECISIONS).sort(),
    );
  });

  it('admits exactly the callers each decision names', async () => {
    const wrong: string[] = [];
    for (const operation of operations) {
      const decision = DECISIONS[operation.operationId];
      if (decision === undefined) continue;
      for (const caller of callers) {
        const response = await t.request({
          method: operation.method,
          url: urlOf(operation.path),
          headers: {
            ...(caller.key === undefined ? {} : { authorization: `Bearer ${caller.key}` }),
            ...(operation.mediaType === undefined ? {} : { 'content-type': operation.mediaType }),
          },
          ...(operation.mediaType === undefined ? {} : { payload: '{}' }),
        });
        const status = response.statusCode;
        const outcome = `${operation.operationId} (${operation.method} ${operation.path}) with ${caller.name}: ${status}`;
        if (decision === 'signed') {
          // No API key opens it or changes its answer: only the SmartThings signature does.
          if (status !== 401) wrong.push(`${outcome}, expected 401 (unsigned)`);
        } else if (caller.admits(decision)) {
          if (status === 401 || status === 403 || status >= 500)
            wrong.push(`${outcome}, expected to be admitted`);
        } else {
          const expected = caller.key === undefined || caller.name === 'a revoked key' ? 401 : 403;
          if (status !== expected) wrong.push(`${outcome}, expected ${expected}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('closes operation 1 to callers without the "schedules" scope when PUBLIC_OCCURRENCES=false', async () => {
    const closed = await startTestApp({ env: { PUBLIC_OCCURRENCES: 'false' } });
    try {
      const body = {
        Groups: [{ Key: 'g', ScheduleIds: [randomUUID()] }],
        Start: '2026-01-01T00:00:00Z',
        End: '2026-01-02T00:00:00Z',
      };
      const ask = (headers: Record<string, string>) =>
        closed.request({
          method: 'POST',
          url: '/api/v1/Occurrence/hasOccurrences/byGroup',
          headers: { 'content-type': 'application/json', ...headers },
          payload: JSON.stringify(body),
        });
      const keys = closed.app.get(ApiKeysService);
      const schedules = (await keys.create('s', ['schedules'])).key;
      const mail = (await keys.create('m', ['mail'])).key;
      expect((await ask({})).statusCode).toBe(401);
      expect((await ask({ authorization: `Bearer ${mail}` })).statusCode).toBe(403);
      expect((await ask({ authorization: `Bearer ${schedules}` })).statusCode).toBe(200);
    } finally {
      await closed.close();
    }
  });
});
