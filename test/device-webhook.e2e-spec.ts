// The device webhook (operation 6): the SmartThings SmartApp on the real app and database, with SmartThings played by a
// fake on 127.0.0.1 that records every call. Requests are signed with test keys the way SmartThings signs them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { ROOT_LOGGER } from '../src/core/core.module.js';
import { EncryptionService } from '../src/crypto/encryption.service.js';
import { SecretStoreRegistry } from '../src/crypto/secret-store.registry.js';
import { SmartThingsTokens } from '../src/device-webhook/smartthings-tokens.service.js';
import {
  FIXED_TEST_CERTIFICATE_PEM,
  FIXED_TEST_PRIVATE_KEY_PEM,
  generateTestKeyPair,
  signRequest,
  TEST_PLATFORM_KEY_ID,
} from '../src/device-webhook/signature/signature-test-kit.js';
import { FakeSmartThings, type RecordedCall } from './device-webhook/fake-smartthings.js';
import {
  bodies,
  deliver,
  pascalCase,
  webhookPath,
  type AppSetup,
  type Body,
} from './device-webhook/smartapp-requests.js';
import { testClock, webhookTestOptions } from './device-webhook/webhook-test-options.js';
import { ADMIN_KEY, startTestApp, type TestApp } from './support/test-app.js';

const keys = generateTestKeyPair();
const foreignKeys = generateTestKeyPair();
const fake = new FakeSmartThings();
const DOMAIN = 'acme';
let t: TestApp;
let keyDir: string;

const send = (body: unknown, domain = DOMAIN) => deliver(t, domain, body, { privateKey: keys.privateKey });
const newApp = (overrides: Partial<AppSetup> = {}): AppSetup => ({
  installedAppId: randomUUID(),
  ...overrides,
});
const bearer = (call: RecordedCall) => call.authorization?.replace(/^Bearer /, '');
const admin = (url: string) =>
  t.request({ method: 'GET', url, headers: { authorization: `Bearer ${ADMIN}` } });
const ADMIN = 'test-admin-key-0123456789abcdef';

async function rawTokens(installedAppId: string): Promise<{ auth_token: string; refresh_token: string }> {
  const rows: Array<{ auth_token: string; refresh_token: string }> = await t.dataSource.query(
    `SELECT auth_token, refresh_token FROM webhook_installed_apps WHERE installed_app_id = '${installedAppId}'`,
  );
  return rows[0];
}

beforeAll(async () => {
  await fake.start();
  keyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'st-key-'));
  const keyFile = path.join(keyDir, 'smartthings.pem');
  fs.writeFileSync(keyFile, keys.publicKeyPem);
  fake.certificates.set(TEST_PLATFORM_KEY_ID, FIXED_TEST_CERTIFICATE_PEM);
  t = await startTestApp({
    env: {
      SMARTTHINGS_PUBLIC_KEY_FILE: keyFile,
      SMARTTHINGS_KEY_URL: fake.url,
      SMARTTHINGS_API_URL: fake.url,
      SMARTTHINGS_CLIENT_ID: fake.clientId,
      SMARTTHINGS_CLIENT_SECRET: fake.clientSecret,
    },
    extraModules: [webhookTestOptions()],
  });
});

afterAll(async () => {
  await t.close();
  await fake.stop();
  fs.rmSync(keyDir, { recursive: true, force: true });
});

beforeEach(() => {
  testClock.fixed = undefined;
  fake.rules.length = 0;
});

describe('lifecycles, in camelCase (as SmartThings sends) and PascalCase (as documented)', () => {
  const casings: Array<[string, (body: Body) => unknown]> = [
    ['camelCase', (body) => body],
    ['PascalCase', pascalCase],
  ];

  it.each(casings)('PING echoes the challenge without a signature (%s)', async (_name, shape) => {
    const response = await deliver(t, DOMAIN, shape(bodies.ping('1a904d57-4fab')), {
      privateKey: keys.privateKey,
      unsigned: true,
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/json');
    expect(response.json()).toEqual({ pingData: { challenge: '1a904d57-4fab' } });
  });

  it.each(casings)('CONFIGURATION answers INITIALIZE and PAGE (%s)', async (_name, shape) => {
    const init = await send(shape(bodies.configuration('INITIALIZE')));
    expect(init.statusCode).toBe(200);
    expect(init.json()).toEqual({
      configurationData: {
        initialize: {
          id: expect.any(String),
          name: expect.any(String),
          description: expect.any(String),
          permissions: [],
          firstPageId: '1',
        },
      },
    });
    const page = await send(shape(bodies.configuration('PAGE')));
    expect(page.statusCode).toBe(200);
    const { page: shown } = page.json().configurationData;
    expect(shown).toMatchObject({ pageId: '1', complete: true, nextPageId: null, previousPageId: null });
    const settings = shown.sections.flatMap((section: { settings: unknown[] }) => section.settings);
    expect(settings).toEqual([
      expect.objectContaining({
        id: 'contactSensor',
        type: 'DEVICE',
        capabilities: ['contactSensor'],
        permissions: ['r'],
      }),
      expect.objectContaining({
        id: 'lightSwitch',
        type: 'DEVICE',
        multiple: true,
        capabilities: ['switch'],
        permissions: ['r', 'x'],
      }),
      expect.objectContaining({ id: 'minutes', type: 'NUMBER' }),
    ]);
  });

  it.each(casings)(
    'CONFIRMATION answers targetUrl and opens the confirmation URL (%s)',
    async (_name, shape) => {
      const token = randomUUID();
      const response = await send(
        shape(bodies.confirmation(`${fake.url}/apps/app-1/confirm-registration?token=${token}`)),
      );
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ targetUrl: `http://localhost:80${webhookPath(DOMAIN)}` });
      await fake.waitFor((calls) => calls.some((call) => call.url.includes(token) && call.method === 'GET'));
    },
  );

  it.each(casings)('INSTALL stores the app and subscribes its contact sensors (%s)', async (_name, shape) => {
    const app = newApp({ contactSensors: ['door-a', 'door-b'] });
    const response = await send(shape(bodies.install(app, 'install-token', 'install-refresh')));
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ installData: {} });
    await fake.waitFor(
      (calls) =>
        calls.filter((call) => call.path.endsWith(`${app.installedAppId}/subscriptions`)).length === 3,
    );
    const calls = fake.callsTo(app.installedAppId);
    expect(
      calls
        .slice(0, 2)
        .map((call) => `${call.method} ${call.path}`)
        .sort(),
    ).toEqual([
      `DELETE /installedapps/${app.installedAppId}/schedules`,
      `DELETE /installedapps/${app.installedAppId}/subscriptions`,
    ]);
    // Subscriptions are created concurrently, so they arrive in any order.
    const subscriptions = calls
      .filter((call) => call.method === 'POST')
      .map((call) => call.body as { device: { deviceId: string } })
      .sort((a, b) => a.device.deviceId.localeCompare(b.device.deviceId));
    expect(subscriptions).toEqual(
      ['door-a', 'door-b'].map((deviceId) => ({
        sourceType: 'DEVICE',
        device: expect.objectContaining({
          deviceId,
          componentId: 'main',
          capability: 'contactSensor',
          attribute: 'contact',
          stateChangeOnly: true,
        }),
      })),
    );
    expect(calls.every((call) => bearer(call) === 'install-token')).toBe(true);
    const listed = (await admin(`${webhookPath(DOMAIN)}/installedapps`)).json();
    expect(listed.InstalledApps).toContainEqual(
      expect.objectContaining({ InstalledAppId: app.installedAppId, Domain: DOMAIN, HasRefreshToken: true }),
    );
  });

  it.each(casings)(
    'UPDATE replaces the subscriptions and clears the schedules (%s)',
    async (_name, shape) => {
      const app = newApp({ contactSensors: ['door-old'] });
      await send(bodies.install(app, 'tok-u1', 'ref-u1'));
      await fake.waitFor((calls) =>
        calls.some((call) => call.body !== undefined && JSON.stringify(call.body).includes('door-old')),
      );
      const before = fake.calls.length;
      const response = await send(
        shape(bodies.update({ ...app, contactSensors: ['door-new'] }, 'tok-u2', 'ref-u2')),
      );
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ updateData: {} });
      await fake.waitFor((calls) =>
        calls.slice(before).some((call) => JSON.stringify(call.body ?? '').includes('door-new')),
      );
      const after = fake.calls.slice(before).filter((call) => call.path.includes(app.installedAppId));
      expect(
        after.map((call) => `${call.method} ${call.path.replace(app.installedAppId, 'ID')}`).sort(),
      ).toEqual([
        'DELETE /installedapps/ID/schedules',
        'DELETE /installedapps/ID/subscriptions',
        'POST /installedapps/ID/subscriptions',
      ]);
      expect(after.every((call) => bearer(call) === 'tok-u2')).toBe(true);
    },
  );

  it.each(casings)('EVENT is stored once per event id and answered (%s)', async (_name, shape) => {
    const app = newApp();
    await send(bodies.install(app, 'tok-e', 'ref-e'));
    const eventId = randomUUID();
    const token = `tok-e2-${app.installedAppId}`;
    const body = shape(bodies.contact(app, token, 'open', eventId));
    const first = await send(body);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({ eventData: {} });
    await fake.waitFor(
      (calls) =>
        calls.filter((call) => call.path.endsWith('/commands') && bearer(call) === token).length === 2,
    );
    // SmartThings redelivers a lifecycle it got no timely answer for: the replay changes nothing.
    const replay = await send(body);
    expect(replay.statusCode).toBe(200);
    const events = (await admin(`${webhookPath(DOMAIN)}/installedapps/${app.installedAppId}/events`)).json();
    expect(events).toMatchObject({ Succeeded: true, TotalCount: 1, InstalledAppId: app.installedAppId });
    expect(events.Events[0]).toEqual({
      EventId: eventId,
      EventType: 'DEVICE_EVENT',
      EventTime: expect.any(String),
      ReceivedAt: expect.any(String),
      DeviceEvent: {
        SubscriptionName: 'contactSensor_0',
        EventId: eventId,
        LocationId: 'e675a3d9-2499-406c-86dc-8a492a886494',
        DeviceId: 'door-1',
        ComponentId: 'main',
        Capability: 'contactSensor',
        Attribute: 'contact',
        Value: 'open',
        StateChange: true,
      },
      TimerEvent: null,
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(
      fake.calls.filter((call) => call.path.endsWith('/commands') && bearer(call) === token),
    ).toHaveLength(2);
  });

  it.each([['oAuthCallbackData'], ['oauthCallbackData'], ['OAuthCallbackData']] as const)(
    'OAUTH_CALLBACK answers with %s',
    async (key) => {
      const body =
        key === 'OAuthCallbackData'
          ? pascalCase(bodies.oauthCallback('app-o', 'oAuthCallbackData'))
          : bodies.oauthCallback('app-o', key);
      const response = await send(body);
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ oAuthCallbackData: {} });
    },
  );

  it.each(casings)('UNINSTALL removes the app, its tokens and its events (%s)', async (_name, shape) => {
    const app = newApp();
    await send(bodies.install(app, 'tok-x', 'ref-x'));
    await send(bodies.contact(app, 'tok-x2', 'closed'));
    const response = await send(shape(bodies.uninstall(app)));
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ uninstallData: {} });
    const events = await admin(`${webhookPath(DOMAIN)}/installedapps/${app.installedAppId}/events`);
    expect(events.statusCode).toBe(404);
    expect(events.json()).toMatchObject({ Succeeded: false, Code: 'InstalledAppNotFound' });
    const rows = await t.dataSource.query(
      `SELECT COUNT(*) AS n FROM webhook_device_events WHERE installed_app_id = '${app.installedAppId}'`,
    );
    expect(Number(rows[0].n)).toBe(0);
    expect(await rawTokens(app.installedAppId)).toBeUndefined();
  });

  it('leaves an audit event for each install, update and uninstall, naming the SmartApp and never a token', async () => {
    const app = newApp();
    await send(bodies.install(app, 'audit-install-token', 'audit-install-refresh'));
    await send(
      bodies.update({ ...app, contactSensors: ['door-audit'] }, 'audit-update-token', 'audit-update-refresh'),
    );
    await send(bodies.uninstall(app));
    const response = await admin(`/api/v1/audit-events?ResourceId=${app.installedAppId}`);
    expect(response.statusCode).toBe(200);
    const events = response.json().Result as Array<Record<string, unknown>>;
    // Newest first.
    expect(events.map((event) => event['Action'])).toEqual([
      'webhook.uninstall',
      'webhook.update',
      'webhook.install',
    ]);
    for (const event of events)
      expect(event).toMatchObject({
        ActorType: 'webhook',
        ActorId: 'fd9949ee-a3bf-4069-b4b3-3e9c1c922e29',
        ActorName: 'SmartThings',
        ResourceType: 'InstalledApp',
        ResourceId: app.installedAppId,
        Outcome: 'success',
        Detail: { domain: DOMAIN },
      });
    expect(response.payload).not.toMatch(/audit-(install|update)-(token|refresh)/);
  });

  it('records an app it never saw installed from its first EVENT, using the event’s token', async () => {
    const app = newApp({ lights: ['lamp-new'] });
    const response = await send(bodies.contact(app, 'event-only-token', 'open'));
    expect(response.statusCode).toBe(200);
    await fake.waitFor((calls) => calls.some((call) => call.path === '/devices/lamp-new/commands'));
    expect(
      bearer(fake.calls.find((call) => call.path === '/devices/lamp-new/commands') as RecordedCall),
    ).toBe('event-only-token');
    const listed = (await admin(`${webhookPath(DOMAIN)}/installedapps`)).json();
    expect(listed.InstalledApps).toContainEqual(
      expect.objectContaining({ InstalledAppId: app.installedAppId, HasRefreshToken: false }),
    );
  });

  it('binds a domain case-insensitively to one tenant and keeps tenants apart', async () => {
    const app = newApp();
    await send(bodies.install(app, 'tok-d', 'ref-d'), 'Other-Tenant');
    const other = (await admin(`${webhookPath('other-tenant')}/installedapps`)).json();
    expect(other.InstalledApps.map((entry: { InstalledAppId: string }) => entry.InstalledAppId)).toEqual([
      app.installedAppId,
    ]);
    const mine = (await admin(`${webhookPath(DOMAIN)}/installedapps`)).json();
    expect(mine.InstalledApps.map((entry: { InstalledAppId: string }) => entry.InstalledAppId)).not.toContain(
      app.installedAppId,
    );
  });
});

describe('the door and the lights, end to end', () => {
  it('subscribes, switches on when the door opens, schedules lightsOff when it closes, switches off on the timer', async () => {
    const app = newApp({ contactSensors: ['front-door'], lights: ['hall', 'porch'], minutes: '5' });
    const id = app.installedAppId;
    const callsOf = (from: number) =>
      fake.calls
        .slice(from)
        .filter((call) => call.path.includes(id) || /\/devices\/(hall|porch)\//.test(call.path));

    await send(bodies.install(app, 'tok-1', 'ref-1'));
    await fake.waitFor((calls) =>
      calls.some((call) => call.method === 'POST' && call.path === `/installedapps/${id}/subscriptions`),
    );

    let mark = fake.calls.length;
    await send(bodies.contact(app, 'tok-2', 'open'));
    await fake.waitFor(() => callsOf(mark).filter((call) => call.path.endsWith('/commands')).length === 2);
    const opened = callsOf(mark);
    expect(opened[0]).toMatchObject({ method: 'DELETE', path: `/installedapps/${id}/schedules/lightsOff` });
    expect(
      opened
        .slice(1)
        .map((call) => call.path)
        .sort(),
    ).toEqual(['/devices/hall/commands', '/devices/porch/commands']);
    for (const call of opened.slice(1)) {
      expect(call.body).toEqual({
        commands: [{ component: 'main', capability: 'switch', command: 'on', arguments: [] }],
      });
      expect(bearer(call)).toBe('tok-2');
    }

    mark = fake.calls.length;
    const closedAt = Date.now();
    await send(bodies.contact(app, 'tok-3', 'closed'));
    await fake.waitFor(() => callsOf(mark).length === 1);
    const [schedule] = callsOf(mark);
    expect(schedule).toMatchObject({ method: 'POST', path: `/installedapps/${id}/schedules` });
    const { name, once } = schedule.body as { name: string; once: { time: number; overwrite: boolean } };
    expect(name).toBe('lightsOff');
    expect(once.overwrite).toBe(true);
    expect(once.time).toBeGreaterThanOrEqual(closedAt + 5 * 60_000 - 1_000);
    expect(once.time).toBeLessThanOrEqual(Date.now() + 5 * 60_000 + 1_000);

    mark = fake.calls.length;
    await send(bodies.timer(app, 'tok-4'));
    await fake.waitFor(() => callsOf(mark).length === 2);
    for (const call of callsOf(mark)) {
      expect(call.body).toEqual({
        commands: [{ component: 'main', capability: 'switch', command: 'off', arguments: [] }],
      });
    }

    const events = (await admin(`${webhookPath(DOMAIN)}/installedapps/${id}/events?PageSize=2`)).json();
    expect(events).toMatchObject({
      TotalCount: 3,
      TotalPages: 2,
      PageIndex: 1,
      PageSize: 2,
      HasNextPage: true,
    });
    expect(events.Events[0]).toMatchObject({ EventType: 'TIMER_EVENT', TimerEvent: { Name: 'lightsOff' } });
  });

  it('switches off straight away for Minutes 0 and warns (no schedule) for an unusable Minutes', async () => {
    const zero = newApp({ lights: ['lamp-zero'], minutes: '0' });
    await send(bodies.install(zero, 'tok-z', 'ref-z'));
    await send(bodies.contact(zero, 'tok-z', 'closed'));
    await fake.waitFor((calls) => calls.some((call) => call.path === '/devices/lamp-zero/commands'));

    const bad = newApp({ minutes: 'soon' });
    await send(bodies.install(bad, 'tok-b', 'ref-b'));
    const mark = fake.calls.length;
    const response = await send(bodies.contact(bad, 'tok-b', 'closed'));
    expect(response.statusCode).toBe(200);
    expect(fake.calls.slice(mark).filter((call) => call.path.includes(bad.installedAppId))).toEqual([]);
    expect(t.logs).toContainEqual(
      expect.objectContaining({
        installedAppId: bad.installedAppId,
        level: 'warn',
        message: expect.stringContaining('Minutes'),
      }),
    );
  });
});

describe('replies', () => {
  it('are application/octet-stream with the same JSON bytes when Accept does not admit JSON', async () => {
    for (const accept of ['application/octet-stream', 'application/json;q=0, */*', 'text/html']) {
      const response = await deliver(t, DOMAIN, bodies.ping('c-1'), {
        privateKey: keys.privateKey,
        unsigned: true,
        headers: { accept },
      });
      expect(response.headers['content-type']).toBe('application/octet-stream');
      expect(response.rawPayload.toString('utf8')).toBe('{"pingData":{"challenge":"c-1"}}');
    }
    for (const accept of ['application/json', '*/*', 'application/*', 'text/html, application/json;q=0.5']) {
      const response = await deliver(t, DOMAIN, bodies.ping('c-2'), {
        privateKey: keys.privateKey,
        unsigned: true,
        headers: { accept },
      });
      expect(response.headers['content-type']).toBe('application/json');
    }
  });

  it('answer an unknown lifecycle or a malformed body with a 4xx JSON error, writing nothing', async () => {
    const unknown = await send({ ...bodies.ping(), lifecycle: 'EXECUTE' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toMatchObject({ Code: 'ValidationFailed', Errors: [{ Field: 'Lifecycle' }] });

    const none = await send({ executionId: 'x' });
    expect(none.statusCode).toBe(400);
    expect(none.json().Errors[0].Field).toBe('Lifecycle');

    const wrongType = await send({ lifecycle: 5 });
    expect(wrongType.statusCode).toBe(400);
    expect(wrongType.json().Errors[0].Field).toBe('Lifecycle');

    const app = newApp();
    const noToken = bodies.install(app, 'tok', 'ref');
    delete (noToken.installData as Body).authToken;
    const missing = await send(noToken);
    expect(missing.statusCode).toBe(400);
    expect(missing.json().Errors).toEqual([{ Field: 'InstallData.AuthToken', Message: expect.any(String) }]);
    expect(await rawTokens(app.installedAppId)).toBeUndefined();

    const badEvent = bodies.contact(app, 'tok', 'open');
    ((badEvent.eventData as Body).events as Body[])[0].deviceEvent = { eventId: 7 };
    const nested = await send(badEvent);
    expect(nested.statusCode).toBe(400);
    expect(nested.json().Errors[0].Field).toBe('EventData.Events[0].DeviceEvent.EventId');

    const notJson = await send('{"lifecycle": "PING",');
    expect(notJson.statusCode).toBe(400);
    expect(notJson.headers['content-type']).toContain('application/json');

    // SmartThings ids become SmartThings API path segments: `..` or a slash is refused, naming the field.
    const traversal = bodies.install({ installedAppId: '..', lights: ['../../oauth/token'] }, 'tok', 'ref');
    const refused = await send(traversal);
    expect(refused.statusCode).toBe(400);
    expect(
      refused
        .json()
        .Errors.map((e: { Field: string }) => e.Field)
        .sort(),
    ).toEqual([
      'InstallData.InstalledApp.Config.LightSwitch[0].DeviceConfig.DeviceId',
      'InstallData.InstalledApp.InstalledAppId',
    ]);

    const badDomain = await send(bodies.configuration('INITIALIZE'), 'bad%20domain');
    expect(badDomain.statusCode).toBe(400);
    expect(badDomain.json().Errors[0].Field).toBe('domain');
  });
});

describe('HTTP signatures', () => {
  const initialize = () => bodies.configuration('INITIALIZE');

  it('accepts a request in SmartThings’ documented format signed with a /pl/ key fetched from the key URL', async () => {
    // Fixed vector (body from SmartThings' CONFIGURATION example; digest and signature computed with openssl).
    const body =
      '{"lifecycle":"CONFIGURATION","executionId":"b328f242-c602-4204-8d73-33c48ae180af","locale":"en",' +
      '"version":"1.0.0","configurationData":{"installedAppId":"8a0dcdc9-1ab4-4c60-9de7-cb78f59a1121",' +
      '"phase":"INITIALIZE","pageId":"","previousPageId":"","config":{}},"settings":{}}';
    const headers = {
      'content-type': 'application/json',
      date: 'Sun, 22 Nov 2026 10:00:00 GMT',
      digest: 'SHA-256=bVRaUDnrS3fKb5Z6L90TOXCRJe0I0wf9DY+kdiC3s+I=',
      authorization:
        `Signature keyId="${TEST_PLATFORM_KEY_ID}",signature="` +
        'O7TtTZVHuUcC0qDhK5yKGt5HwWkHVOAFETIx699X9GapzKz6XAZG6fLlTo2U79QwZtu3AWgr2LKIhtt0TYsrOvH959hTvOGI48IJI0ueF/e/' +
        'WVvq/Qk/5pHjEIDchFmLzrranjNFSx0QNCbXIGjttFGn+WrDSmrPpmjbXTHCTjS1LCqS3aYonDhEEYHeLBDwwc+qbUOpW0n9MOd7KXCGUFZt' +
        'Ijkr0qt1kBYhqnr5lFhW/z/RB1oMhoPK1YtTloGzZymclEVPVRBlIW3z7SbbSKySAjjyomyqgIpDumC+wtbE7DNLohmlB3kExGBDrqrj75Gz' +
        'yBr668gtkRYnfdHH2w==",headers="(request-target) digest date",algorithm="rsa-sha256"',
    };
    testClock.fixed = new Date('2026-11-22T10:04:00Z');
    const url = webhookPath('acme');
    const ok = await t.request({ method: 'POST', url, headers, payload: body });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().configurationData.initialize.firstPageId).toBe('1');
    expect(fake.calls.some((call) => call.path === TEST_PLATFORM_KEY_ID)).toBe(true);

    // The same bytes with one character changed are refused.
    const altered = await t.request({ method: 'POST', url, headers, payload: body.replace('"en"', '"de"') });
    expect(altered.statusCode).toBe(401);
    // And the vector is stale six minutes after its Date.
    testClock.fixed = new Date('2026-11-22T10:06:00Z');
    expect((await t.request({ method: 'POST', url, headers, payload: body })).statusCode).toBe(401);
  });

  it('verifies a key-URL key once and then from the cache', async () => {
    const body = JSON.stringify(initialize());
    const signed = signRequest({
      privateKey: FIXED_TEST_PRIVATE_KEY_PEM,
      keyId: TEST_PLATFORM_KEY_ID,
      path: webhookPath(DOMAIN),
      body,
    });
    const before = fake.calls.filter((call) => call.path === TEST_PLATFORM_KEY_ID).length;
    for (let i = 0; i < 2; i++) {
      const response = await t.request({
        method: 'POST',
        url: webhookPath(DOMAIN),
        headers: { 'content-type': 'application/json', ...signed.headers },
        payload: body,
      });
      expect(response.statusCode).toBe(200);
    }
    expect(fake.calls.filter((call) => call.path === TEST_PLATFORM_KEY_ID).length).toBe(before);
  });

  const rejectedInstalls = async (): Promise<number> => {
    const text = (
      await t.request({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${ADMIN_KEY}` } })
    ).body;
    const line = text
      .split('\n')
      .find((l) => l.startsWith('webhook_lifecycles_total{lifecycle="INSTALL",outcome="rejected"}'));
    return Number(line?.split(' ').at(-1) ?? Number.NaN);
  };

  // Options are built when the test runs: a Date computed at load time would drift into the window.
  it.each([
    ['no signature', () => ({ unsigned: true })],
    ['a foreign key', () => ({ privateKey: foreignKeys.privateKey })],
    ['an altered body', () => ({ signedBody: '{"lifecycle":"CONFIGURATION"}' })],
    ['a stale Date', () => ({ date: new Date(Date.now() - 302_000) })],
    ['a Date from the future', () => ({ date: new Date(Date.now() + 302_000) })],
    ['another path', () => ({ signedPath: webhookPath('someone-else') })],
    ['an unknown key id', () => ({ keyId: '/pl/useast2/00-11-22' })],
    ['a key id of another scheme', () => ({ keyId: 'rsa-key-1' })],
  ] as const)('refuses %s with 401, logging why without tokens', async (_name, options) => {
    const app = newApp();
    const body = bodies.install(
      app,
      `secret-auth-${app.installedAppId}`,
      `secret-refresh-${app.installedAppId}`,
    );
    const rejectedBefore = await rejectedInstalls();
    const response = await deliver(t, DOMAIN, body, { privateKey: keys.privateKey, ...options() });
    expect(response.statusCode).toBe(401);
    // Counted where the dashboard looks for refused lifecycles.
    expect(await rejectedInstalls()).toBe(rejectedBefore + 1);
    expect(response.json()).toMatchObject({ Succeeded: false, Code: 'Unauthorized' });
    expect(await rawTokens(app.installedAppId)).toBeUndefined();
    expect(fake.callsTo(app.installedAppId)).toEqual([]);
    const logged = t.logs.filter(
      (line) => line.message === 'device webhook request rejected: invalid HTTP signature',
    );
    expect(logged.at(-1)).toMatchObject({ domain: DOMAIN, lifecycle: 'INSTALL', reason: expect.any(String) });
    expect(JSON.stringify(t.logs)).not.toContain(`secret-auth-${app.installedAppId}`);
    expect(JSON.stringify(t.logs)).not.toContain(`secret-refresh-${app.installedAppId}`);
  });

  it('signs the exact path: a request posted with another letter case is refused', async () => {
    const body = JSON.stringify(initialize());
    const signed = signRequest({ privateKey: keys.privateKey, path: webhookPath(DOMAIN), body });
    const response = await t.request({
      method: 'POST',
      url: webhookPath(DOMAIN).replace('homeprovider', 'HomeProvider'),
      headers: { 'content-type': 'application/json', ...signed.headers },
      payload: body,
    });
    expect(response.statusCode).toBe(401);
    const exact = await t.request({
      method: 'POST',
      url: webhookPath(DOMAIN).replace('homeprovider', 'HomeProvider'),
      headers: {
        'content-type': 'application/json',
        ...signRequest({
          privateKey: keys.privateKey,
          path: webhookPath(DOMAIN).replace('homeprovider', 'HomeProvider'),
          body,
        }).headers,
      },
      payload: body,
    });
    expect(exact.statusCode).toBe(200);
  });

  it('verifies the raw bytes whatever their layout or charset parameter', async () => {
    const body = `{\n  "lifecycle" : "CONFIGURATION",\n  "configurationData": {"phase": "PAGE", "unicode": "Tür ✓"}\n}`;
    const response = await deliver(t, DOMAIN, body, {
      privateKey: keys.privateKey,
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().configurationData.page.pageId).toBe('1');
  });

  it('answers a replayed signed request with the first reply and does not act again', async () => {
    const replaysLogged = () =>
      t.logs.filter((line) =>
        String(line.message).startsWith('device webhook: a signed request seen before was posted again'),
      ).length;
    const replaysBefore = replaysLogged();
    const app = newApp({ contactSensors: ['replay-door'], lights: ['replay-lamp'], minutes: '5' });
    const date = new Date();
    await send(bodies.install(app, 'tok-r1', 'ref-r1'));
    await fake.waitFor((calls) =>
      calls.some((call) => call.path === `/installedapps/${app.installedAppId}/subscriptions`),
    );
    const open = bodies.contact(app, 'tok-r2', 'open');
    const first = await deliver(t, DOMAIN, open, { privateKey: keys.privateKey, date });
    expect(first.statusCode).toBe(200);
    await fake.waitFor((calls) => calls.some((call) => call.path === '/devices/replay-lamp/commands'));
    const commands = () => fake.calls.filter((call) => call.path === '/devices/replay-lamp/commands').length;
    const before = commands();
    const replayed = await deliver(t, DOMAIN, open, { privateKey: keys.privateKey, date });
    expect(replayed.statusCode).toBe(200);
    expect(replayed.body).toBe(first.body);
    // The keyId is not signed, and every /SmartThings/… id names the configured key: another spelling of it
    // around the same signature is the same replay.
    const respelled = await deliver(t, DOMAIN, open, {
      privateKey: keys.privateKey,
      date,
      keyId: '/SmartThings/zz',
    });
    expect(respelled.statusCode).toBe(200);
    expect(respelled.body).toBe(first.body);
    // Both were recognised as replays (the event id alone would have hidden a second handling of the respelled one).
    expect(replaysLogged() - replaysBefore).toBe(2);
    // The same lifecycle signed again (a new Date) is a new request: the event id deduplicates it instead.
    const resigned = await deliver(t, DOMAIN, open, {
      privateKey: keys.privateKey,
      date: new Date(date.getTime() + 1_000),
    });
    expect(resigned.statusCode).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(commands()).toBe(before);
    const remembered: Array<{ n: number | string }> = await t.dataSource.query(
      'SELECT COUNT(*) AS n FROM webhook_signatures WHERE reply IS NOT NULL',
    );
    expect(Number(remembered[0].n)).toBeGreaterThanOrEqual(2);
  });

  it('handles a signed request again when its first delivery failed', async () => {
    const body = { lifecycle: 'INSTALL', installData: {} };
    const date = new Date();
    const first = await deliver(t, DOMAIN, body, { privateKey: keys.privateKey, date });
    expect(first.statusCode).toBe(400);
    const again = await deliver(t, DOMAIN, body, { privateKey: keys.privateKey, date });
    expect(again.statusCode).toBe(400);
    expect(again.json()).toMatchObject({ Code: 'ValidationFailed' });
  });

  it('never asks for an API key, and an API key does not replace the signature', async () => {
    const response = await t.post(webhookPath(DOMAIN), initialize());
    expect(response.statusCode).toBe(401);
  });
});

describe('tokens', () => {
  it('are stored encrypted and never returned', async () => {
    const app = newApp();
    await send(bodies.install(app, 'plain-auth-token', 'plain-refresh-token'));
    const stored = await rawTokens(app.installedAppId);
    expect(stored.auth_token).toMatch(/^v1:/);
    expect(stored.refresh_token).toMatch(/^v1:/);
    expect(JSON.stringify(stored)).not.toContain('plain-');
    const listed = await admin(`${webhookPath(DOMAIN)}/installedapps`);
    expect(listed.payload).not.toContain('plain-');
    expect(JSON.stringify(t.logs)).not.toContain('plain-auth-token');
    expect(JSON.stringify(t.logs)).not.toContain('plain-refresh-token');
  });

  it('are re-encrypted by key rotation', async () => {
    const app = newApp();
    await send(bodies.install(app, 'rotate-auth', 'rotate-refresh'));
    const store = t.app
      .get(SecretStoreRegistry)
      .all()
      .find((candidate) => candidate.name === 'webhook installed-app tokens');
    const encryption = t.app.get(EncryptionService);
    const before = await rawTokens(app.installedAppId);
    const count = await t.dataSource.transaction((manager) =>
      store!.reencrypt((ciphertext) => encryption.encrypt(encryption.decrypt(ciphertext)), manager),
    );
    expect(count).toBeGreaterThanOrEqual(2);
    const after = await rawTokens(app.installedAppId);
    expect(after.auth_token).not.toBe(before.auth_token);
    expect(encryption.decrypt(after.auth_token)).toBe('rotate-auth');
    expect(encryption.decrypt(after.refresh_token)).toBe('rotate-refresh');
  });

  it('are refreshed once through /oauth/token when SmartThings refuses them, for concurrent calls too', async () => {
    const app = newApp();
    fake.refusedTokens.add('stale-token');
    fake.grants.set('refresh-1', { accessToken: 'fresh-token', refreshToken: 'refresh-2' });
    fake.tokenDelayMs = 100;
    const response = await send(bodies.install(app, 'stale-token', 'refresh-1'));
    expect(response.statusCode).toBe(200);
    await fake.waitFor(
      (calls) =>
        calls.filter((call) => call.path.includes(app.installedAppId) && call.status === 200).length === 3,
    );
    fake.tokenDelayMs = 0;
    const refreshes = fake.calls.filter((call) => call.path === '/oauth/token');
    expect(refreshes).toHaveLength(1);
    expect(refreshes[0].authorization).toBe(
      `Basic ${Buffer.from(`${fake.clientId}:${fake.clientSecret}`).toString('base64')}`,
    );
    expect(refreshes[0].body).toMatchObject({ grant_type: 'refresh_token', refresh_token: 'refresh-1' });
    const accepted = fake.callsTo(app.installedAppId).filter((call) => call.status === 200);
    expect(accepted.every((call) => bearer(call) === 'fresh-token')).toBe(true);
    const encryption = t.app.get(EncryptionService);
    const stored = await rawTokens(app.installedAppId);
    expect(encryption.decrypt(stored.auth_token)).toBe('fresh-token');
    expect(encryption.decrypt(stored.refresh_token)).toBe('refresh-2');
    expect(JSON.stringify(t.logs)).not.toContain('fresh-token');
    expect(JSON.stringify(t.logs)).not.toContain('refresh-2');
  });

  it('send a refused refresh token only once: a refusal is final until a lifecycle brings new tokens', async () => {
    const app = newApp();
    fake.refusedTokens.add('dead-token'); // and no grant for dead-refresh: /oauth/token answers 4xx
    const response = await send(bodies.install(app, 'dead-token', 'dead-refresh'));
    expect(response.statusCode).toBe(200);
    await fake.waitFor((calls) => calls.filter((call) => call.path.includes(app.installedAppId)).length >= 3);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const refreshes = fake.calls.filter(
      (call) =>
        call.path === '/oauth/token' &&
        call.body !== undefined &&
        (call.body as Body).refresh_token === 'dead-refresh',
    );
    expect(refreshes).toHaveLength(1);
  });

  it('are refreshed before a call outside a lifecycle when the stored one has expired', async () => {
    const app = newApp();
    await send(bodies.install(app, 'expiring-token', 'expiring-refresh'));
    fake.grants.set('expiring-refresh', { accessToken: 'renewed-token', refreshToken: 'renewed-refresh' });
    await t.dataSource.query(
      `UPDATE webhook_installed_apps SET auth_token_expires_at = $1 WHERE installed_app_id = '${app.installedAppId}'`.replace(
        '$1',
        t.dataSource.options.type === 'postgres' ? "'2020-01-01T00:00:00Z'" : "'2020-01-01 00:00:00.000'",
      ),
    );
    const tokens = t.app.get(SmartThingsTokens);
    const ref = { domain: DOMAIN, installedAppId: app.installedAppId };
    const signal = new AbortController().signal;
    const log = t.app.get(ROOT_LOGGER);
    const [first, second] = await Promise.all([
      tokens.current(ref, signal, log),
      tokens.current(ref, signal, log),
    ]);
    expect([first, second]).toEqual(['renewed-token', 'renewed-token']);
    expect(
      fake.calls.filter(
        (call) =>
          call.path === '/oauth/token' &&
          call.body !== undefined &&
          (call.body as Body).refresh_token === 'expiring-refresh',
      ),
    ).toHaveLength(1);
    // Valid again: no further refresh.
    await expect(tokens.current(ref, signal, log)).resolves.toBe('renewed-token');
    expect(
      fake.calls.filter(
        (call) =>
          call.path === '/oauth/token' &&
          (call.body as Body | undefined)?.refresh_token === 'renewed-refresh',
      ),
    ).toHaveLength(0);
  });

  it('logs a refused refresh with the installed app and keeps answering lifecycles', async () => {
    const app = newApp();
    fake.refusedTokens.add('dead-token');
    const response = await send(bodies.install(app, 'dead-token', 'unknown-refresh'));
    expect(response.statusCode).toBe(200);
    await fake.waitFor((calls) => calls.some((call) => call.path === '/oauth/token' && call.status === 400));
    const deadline = Date.now() + 2_000;
    const refused = () =>
      t.logs.find((line) => line.installedAppId === app.installedAppId && line.status === 401);
    while (refused() === undefined) {
      if (Date.now() > deadline) throw new Error('no 401 log line');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // Logged by work that outlived the INSTALL request, still under that request's correlation id.
    expect(refused()?.correlationId).toBe(response.headers['x-correlation-id']);
    expect(
      t.logs.find(
        (line) =>
          line.installedAppId === app.installedAppId && line.message === 'SmartThings token refresh refused',
      )?.correlationId,
    ).toBe(response.headers['x-correlation-id']);
  });
});

describe('a SmartThings API that is down or slow', () => {
  it('retries 5xx answers and dropped connections with back-off, and replies 200 all the same', async () => {
    const app = newApp({ contactSensors: ['door-r'] });
    fake.rules.push(
      {
        match: (call) =>
          call.path === `/installedapps/${app.installedAppId}/subscriptions` && call.method === 'DELETE',
        status: 503,
        times: 2,
      },
      {
        match: (call) => call.path === `/installedapps/${app.installedAppId}/schedules`,
        status: 'drop',
        times: 1,
      },
    );
    const response = await send(bodies.install(app, 'tok-r', 'ref-r'));
    // Answered whatever the calls meet: the reply waits for them at most its budget (the next test), never fails.
    expect(response.statusCode).toBe(200);
    await fake.waitFor((calls) =>
      calls.some(
        (call) =>
          call.method === 'POST' &&
          call.path === `/installedapps/${app.installedAppId}/subscriptions` &&
          call.status === 200,
      ),
    );
    const deletes = fake
      .callsTo(app.installedAppId)
      .filter((call) => call.method === 'DELETE' && call.path.endsWith('/subscriptions'));
    expect(deletes.map((call) => call.status)).toEqual([503, 503, 200]);
    expect(fake.callsTo(app.installedAppId).filter((call) => call.path.endsWith('/schedules')).length).toBe(
      2,
    );
    expect(t.logs).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        installedAppId: app.installedAppId,
        message: 'SmartThings call failed; will retry',
      }),
    );
  });

  it('gives up after the last retry, logs it, and does not retry what SmartThings refused for good', async () => {
    const app = newApp({ lights: ['lamp-down', 'lamp-bad'] });
    await send(bodies.install(app, 'tok-g', 'ref-g'));
    fake.rules.push(
      { match: (call) => call.path === '/devices/lamp-down/commands', status: 500 },
      { match: (call) => call.path === '/devices/lamp-bad/commands', status: 422 },
    );
    const response = await send(bodies.contact(app, 'tok-g', 'open'));
    expect(response.statusCode).toBe(200);
    await fake.waitFor(
      (calls) => calls.filter((call) => call.path === '/devices/lamp-down/commands').length === 4,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(fake.calls.filter((call) => call.path === '/devices/lamp-down/commands')).toHaveLength(4);
    expect(fake.calls.filter((call) => call.path === '/devices/lamp-bad/commands')).toHaveLength(1);
    expect(t.logs).toContainEqual(
      expect.objectContaining({
        level: 'error',
        installedAppId: app.installedAppId,
        message: 'SmartThings call failed; giving up after retries',
      }),
    );
    expect(t.logs).toContainEqual(
      expect.objectContaining({
        level: 'error',
        installedAppId: app.installedAppId,
        status: 422,
        message: 'SmartThings call failed',
      }),
    );
  });

  it('replies within the budget while SmartThings is slow, and the calls finish afterwards', async () => {
    const app = newApp({ lights: ['lamp-slow'] });
    await send(bodies.install(app, 'tok-s', 'ref-s'));
    fake.rules.push({ match: (call) => call.path === '/devices/lamp-slow/commands', delayMs: 1_500 });
    const response = await send(bodies.contact(app, 'tok-s', 'open'));
    // Replied while the slow call (1.5 s) was still under way, when the budget (400 ms, a timer of the same process)
    // ran out: the service logs that the calls continue after the reply (below).
    expect(response.statusCode).toBe(200);
    await fake.waitFor((calls) =>
      calls.some((call) => call.path === '/devices/lamp-slow/commands' && call.status === 200),
    );
    expect(t.logs).toContainEqual(
      expect.objectContaining({
        installedAppId: app.installedAppId,
        message: 'SmartThings calls continue after the reply',
      }),
    );
  });

  it('keeps an app’s calls in lifecycle order even when the first is slow', async () => {
    const app = newApp({ lights: ['lamp-order'] });
    await send(bodies.install(app, 'tok-o', 'ref-o'));
    fake.rules.push({
      match: (call) => call.path === `/installedapps/${app.installedAppId}/schedules/lightsOff`,
      delayMs: 600,
      times: 1,
    });
    const mark = fake.calls.length;
    await send(bodies.contact(app, 'tok-o', 'open'));
    await send(bodies.contact(app, 'tok-o', 'closed'));
    await fake.waitFor((calls) =>
      calls.slice(mark).some((call) => call.method === 'POST' && call.path.endsWith('/schedules')),
    );
    const order = fake.calls
      .slice(mark)
      .filter((call) => call.path.includes(app.installedAppId) || call.path.includes('lamp-order'))
      .map((call) => `${call.method} ${call.path.replace(app.installedAppId, 'ID')}`);
    expect(order).toEqual([
      'DELETE /installedapps/ID/schedules/lightsOff',
      'POST /devices/lamp-order/commands',
      'POST /installedapps/ID/schedules',
    ]);
  });

  it('logs a confirmation URL it must not or cannot open, for an operator', async () => {
    const foreign = 'https://example.com/confirm?token=abc';
    const response = await send(bodies.confirmation(foreign));
    expect(response.statusCode).toBe(200);
    expect(t.logs).toContainEqual(expect.objectContaining({ level: 'warn', confirmationUrl: foreign }));
    fake.rules.push({ match: (call) => call.path.includes('/confirm-registration'), status: 500, times: 1 });
    const failing = `${fake.url}/apps/app-2/confirm-registration?token=t2`;
    await send(bodies.confirmation(failing));
    const deadline = Date.now() + 2_000;
    while (!t.logs.some((line) => line.confirmationUrl === failing && line.status === 500)) {
      if (Date.now() > deadline) throw new Error('no log line for the failed confirmation');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  });
});

describe('with signature verification switched off (development)', () => {
  it('warns at start and accepts unsigned lifecycles', async () => {
    const dev = await startTestApp({
      env: {
        MODULES: 'webhook',
        SMARTTHINGS_API_URL: fake.url,
        SMARTTHINGS_DISABLE_SIGNATURE_VERIFICATION_UNSAFE: 'true',
      },
      extraModules: [webhookTestOptions()],
    });
    try {
      expect(dev.logs).toContainEqual(
        expect.objectContaining({ level: 'warn', message: expect.stringContaining('UNSIGNED') }),
      );
      const response = await deliver(dev, DOMAIN, bodies.configuration('INITIALIZE'), {
        privateKey: keys.privateKey,
        unsigned: true,
      });
      expect(response.statusCode).toBe(200);
    } finally {
      await dev.close();
    }
  });
});

describe('key configuration', () => {
  it('stops the start with the variable named when the public key is not a PEM key', async () => {
    await expect(
      startTestApp({ env: { MODULES: 'webhook', SMARTTHINGS_PUBLIC_KEY: 'not a key' } }),
    ).rejects.toThrow(/^SMARTTHINGS_PUBLIC_KEY: /);
    await expect(
      startTestApp({
        env: { MODULES: 'webhook', SMARTTHINGS_PUBLIC_KEY_FILE: path.join(keyDir, 'missing.pem') },
      }),
    ).rejects.toThrow(/^SMARTTHINGS_PUBLIC_KEY_FILE: /);
  });

  it('accepts an inline PEM whose line breaks are written as \\n', async () => {
    const inline = keys.publicKeyPem.trim().replace(/\n/g, '\\n');
    const other = await startTestApp({
      env: { MODULES: 'webhook', SMARTTHINGS_PUBLIC_KEY: inline },
      extraModules: [webhookTestOptions()],
    });
    try {
      const response = await deliver(other, DOMAIN, bodies.configuration('INITIALIZE'), {
        privateKey: keys.privateKey,
      });
      expect(response.statusCode).toBe(200);
    } finally {
      await other.close();
    }
  });
});
