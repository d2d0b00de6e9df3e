// Tenant-bound API keys (api-key:create --domains): a key acts only for its tenants, whichever way a route names
// the tenant (Context.Domain, a Domain query, the {domain} path segment); a request that names none acts for the
// tenant "default". Keys without a binding keep every tenant.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ApiKeysService } from '../src/auth/api-keys.service.js';
import { smtpConfiguration } from './mail/smtp-configuration.factory.js';
import { startTestApp, type TestApp } from './support/test-app.js';

let t: TestApp;
let acmeKey: string;
let freeKey: string;
let defaultKey: string;

beforeAll(async () => {
  t = await startTestApp();
  const keys = t.app.get(ApiKeysService);
  acmeKey = (await keys.create('acme team', ['mail', 'migrations', 'schedules', 'admin'], ['acme'])).key;
  defaultKey = (await keys.create('default team', ['schedules', 'users'], ['default'])).key;
  freeKey = (await keys.create('ops', ['mail', 'migrations'])).key;
});
afterAll(async () => {
  await t.close();
});

const post = (url: string, key: string, body: unknown) =>
  t.request({
    method: 'POST',
    url,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });
const get = (url: string, key: string) =>
  t.request({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });
const ensure = (key: string, domain: string | null) =>
  post('/api/v1/mail/ensureSmtpConfiguration', key, {
    ...smtpConfiguration({
      Host: 'mail.tenant.example',
      AuthRequired: false,
      Username: null,
      Password: null,
    }),
    Context: domain === null ? null : { Domain: domain },
  });

describe('a key bound to tenant "acme"', () => {
  it('acts for acme through Context.Domain, in any letter case', async () => {
    expect((await ensure(acmeKey, 'acme')).statusCode).toBe(200);
    expect((await ensure(acmeKey, 'ACME')).statusCode).toBe(200);
  });

  it('gets 403 Forbidden for another tenant, or for none (the default tenant), and writes nothing', async () => {
    for (const domain of ['globex', null]) {
      const response = await ensure(acmeKey, domain);
      expect(response.statusCode).toBe(403);
      expect(response.json()).toMatchObject({ Succeeded: false, Code: 'Forbidden' });
    }
    const listed = await get('/api/v1/mail/smtpConfigurations?Domain=globex', freeKey);
    expect(listed.json().Result).toEqual([]);
  });

  it('lists only its tenants: the Domain query is checked too', async () => {
    expect((await get('/api/v1/mail/smtpConfigurations?Domain=acme', acmeKey)).statusCode).toBe(200);
    expect((await get('/api/v1/mail/smtpConfigurations?domain=globex', acmeKey)).statusCode).toBe(403);
    expect((await get('/api/v1/mail/smtpConfigurations', acmeKey)).statusCode).toBe(403);
  });

  it('is checked on the {domain} path segment of the webhook’s read routes', async () => {
    expect((await get('/api/v1/webhook/homeprovider/acme/installedapps', acmeKey)).statusCode).toBe(200);
    expect((await get('/api/v1/webhook/homeprovider/globex/installedapps', acmeKey)).statusCode).toBe(403);
  });

  it('is checked on the migration operations’ Context.Domain', async () => {
    const runs = (key: string, domain: string) =>
      post('/api/v1/migration/getMigrationRuns', key, { Context: { Domain: domain }, MigrationId: null });
    expect((await runs(acmeKey, 'acme')).statusCode).toBe(200);
    expect((await runs(acmeKey, 'globex')).statusCode).toBe(403);
  });

  it('cannot use routes that serve no tenant (they act for "default")', async () => {
    expect((await get('/api/v1/Schedule', acmeKey)).statusCode).toBe(403);
  });

  it('cannot make an untenanted route its own by naming its tenant in the query or the body', async () => {
    // A review found `?Domain=acme` let the key list, change and delete SCIM users and schedules.
    const attempts = [
      () => get('/api/v1/Schedule?Domain=acme', acmeKey),
      () => get('/api/v1/scim/Users?Domain=acme', acmeKey),
      () => post('/api/v1/Schedule?Domain=acme', acmeKey, { ScheduleItems: [] }),
      () => post('/api/v1/Schedule', acmeKey, { Context: { Domain: 'acme' }, ScheduleItems: [] }),
      () => post('/api/v1/Replication/Agent/heartbeat?Domain=acme', acmeKey, {}),
    ];
    for (const attempt of attempts) {
      const response = await attempt();
      expect({ url: response.raw.req.url, status: response.statusCode }).toEqual({
        url: response.raw.req.url,
        status: 403,
      });
    }
  });
});

describe('a key bound to tenant "default"', () => {
  it('uses the routes that serve no tenant', async () => {
    expect((await get('/api/v1/Schedule', defaultKey)).statusCode).toBe(200);
    expect((await get('/api/v1/scim/Users', defaultKey)).statusCode).toBe(200);
    expect((await get('/api/v1/scim/Users?Domain=acme', defaultKey)).statusCode).toBe(200);
  });
});

describe('a key without a binding', () => {
  it('acts for every tenant as before', async () => {
    expect((await ensure(freeKey, 'globex')).statusCode).toBe(200);
    expect((await get('/api/v1/mail/smtpConfigurations?Domain=globex', freeKey)).statusCode).toBe(200);
    expect((await ensure(freeKey, null)).statusCode).toBe(200);
  });
});
