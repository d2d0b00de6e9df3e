// The scope matrix: every operation of the OpenAPI document × every kind of caller — a key of each
// scope, no key, a revoked key, a key bound to another tenant; an access token from a real OpenID
// provider on loopback of each scope, each in one provider's claim form, one bound to another tenant, one without the
// tenant claim, one without the scope prefix, an expired one — answers as its scope decision says: the callers it
// admits get past authentication (any status but 401/403), the others get 401 or 403. The decisions are written out
// below, independently of the code: an operation the document gains without a line here fails the suite, so a new
// route cannot ship without someone deciding who may call it.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ApiKeysService } from '../src/auth/api-keys.service.js';
import { SCOPES, type Scope } from '../src/auth/scopes.js';
import { TestIssuer, TEST_AUDIENCE } from './support/oidc-issuer.js';
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
  Audit_GetEvents: 'admin',
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

type Caller = {
  name: string;
  key: string | undefined;
  admits: (decision: string) => boolean;
  /** Not authenticated at all (401) rather than refused the operation (403). */
  unauthenticated?: boolean;
};

/** Each provider's way of granting a scope (docs/security.md), taken in turn by the scopes' tokens. */
const TOKEN_GRANTS: Array<(scope: string) => Record<string, unknown>> = [
  (scope) => ({ scp: `openid ${scope}` }), // Entra ID delegated, Keycloak
  (scope) => ({ roles: [scope] }), // Entra ID app roles
  (scope) => ({ scp: [scope] }), // Okta
  (scope) => ({ scope }), // RFC 9068, Auth0
];

let issuer: TestIssuer;
let t: TestApp;
let operations: Operation[];
const callers: Caller[] = [];

beforeAll(async () => {
  issuer = await new TestIssuer().start();
  t = await startTestApp({
    env: {
      OIDC_ISSUER: issuer.url,
      OIDC_AUDIENCE: TEST_AUDIENCE,
      OIDC_SCOPE_PREFIX: 'platform.',
      OIDC_TENANT_CLAIM: 'tenants',
    },
  });
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
  const nobody = (decision: string) => decision === 'public-by-default';
  callers.push(
    { name: 'no key', key: undefined, admits: nobody, unauthenticated: true },
    // A key or token that is sent must be valid, also on operation 1: a revoked key is admitted nowhere.
    { name: 'a revoked key', key: revoked.key, admits: () => false, unauthenticated: true },
    {
      name: 'an all-scopes key bound to another tenant',
      key: (await keys.create('matrix other tenant', [...SCOPES], ['other-team'])).key,
      admits: nobody,
    },
  );
  for (const [index, scope] of SCOPES.entries()) {
    const grant = TOKEN_GRANTS[index % TOKEN_GRANTS.length];
    callers.push({
      name: `a "${scope}" token (${Object.keys(grant(scope)).join()})`,
      key: await issuer.sign({ ...grant(`platform.${scope}`), tenants: '*' }),
      admits: (decision) => decision === scope || scope === 'admin' || decision === 'public-by-default',
    });
  }
  const allScopes = SCOPES.map((scope) => `platform.${scope}`).join(' ');
  callers.push(
    {
      name: 'an all-scopes token bound to another tenant',
      key: await issuer.sign({ scope: allScopes, tenants: ['other-team'] }),
      admits: nobody,
    },
    {
      name: 'an all-scopes token without the tenant claim',
      key: await issuer.sign({ scope: allScopes }),
      admits: nobody,
    },
    {
      name: 'a token with the scopes but not the prefix',
      key: await issuer.sign({ scope: SCOPES.join(' '), tenants: '*' }),
      admits: nobody,
    },
    {
      name: 'an expired all-scopes token',
      key: await issuer.sign({ scope: allScopes, tenants: '*' }, { expiresIn: -300 }),
      admits: () => false,
      unauthenticated: true,
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
  await t?.close();
  await issuer?.close();
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
          const expected = caller.unauthenticated === true ? 401 : 403;
          if (status !== expected) wrong.push(`${outcome}, expected ${expected}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('names the missing scope in WWW-Authenticate (RFC 6750 §3.1), as the credential carries it', async () => {
    const keyOf = (name: string) => callers.find((caller) => caller.name.startsWith(name))?.key ?? '';
    const ask = (url: string, name: string) =>
      t.request({ method: 'GET', url, headers: { authorization: `Bearer ${keyOf(name)}` } });
    const byToken = await ask('/api/v1/Schedule', 'a "mail" token');
    expect(byToken.statusCode).toBe(403);
    expect(byToken.headers['www-authenticate']).toBe(
      'Bearer error="insufficient_scope", scope="platform.schedules"',
    );
    const byKey = await ask('/api/v1/mail/smtpConfigurations', 'a "schedules" key');
    expect(byKey.statusCode).toBe(403);
    expect(byKey.headers['www-authenticate']).toBe('Bearer error="insufficient_scope", scope="mail"');
    // Refused for its tenant, not for a scope: no challenge.
    const otherTenant = await ask(
      '/api/v1/mail/smtpConfigurations',
      'an all-scopes key bound to another tenant',
    );
    expect(otherTenant.statusCode).toBe(403);
    expect(otherTenant.headers['www-authenticate']).toBeUndefined();
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
