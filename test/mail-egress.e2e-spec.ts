// Mail egress on the real app: the egress policy for SMTP hosts (docs/egress.md), stored secrets across a transport
// downgrade, the per-tenant cap, and failure messages that never echo what a non-SMTP peer sent. The app opens
// exactly 127.0.0.1 (OUTBOUND_ALLOW); the "internal" listeners that must never be reached sit on 127.0.0.2.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { LightMyRequestResponse } from 'fastify';
import { EgressService } from '../src/egress/egress.service.js';
import {
  selfSignedCertificate,
  startBannerServer,
  startSmtpServer,
  type SmtpTestServer,
} from './mail/smtp-harness.js';
import { smtpConfiguration, type SmtpConfigurationBody } from './mail/smtp-configuration.factory.js';
import { ADMIN_KEY, startTestApp, type TestApp } from './support/test-app.js';

const ENSURE = '/api/v1/mail/ensureSmtpConfiguration';
const LIST = '/api/v1/mail/smtpConfigurations';
const VERIFY = '/api/v1/mail/verifySmtpConfiguration';
const SEND = '/api/v1/mail/sendTestMessage';
const REMOVE = '/api/v1/mail/removeSmtpConfiguration';
const PASSWORD = 'd0wngrade-canary-password';
const CAP = 3;

type Banner = Awaited<ReturnType<typeof startBannerServer>>;

describe('mail egress: allowed hosts, stored secrets, per-tenant cap, quiet failures', () => {
  let t: TestApp;
  let tlsServer: SmtpTestServer;
  let internal: Banner;
  let nats: Banner;
  let mariadb: Banner;

  beforeAll(async () => {
    [tlsServer, internal, nats, mariadb, t] = await Promise.all([
      startSmtpServer({ tls: selfSignedCertificate(), users: { mailer: PASSWORD } }),
      startBannerServer('220 internal.example ESMTP pretend relay\r\n', '127.0.0.2'),
      startBannerServer(
        'INFO {"server_id":"NATSBANNERSECRET","version":"2.10.7","go":"go1.21","host":"0.0.0.0","port":4222}\r\n',
      ),
      // A MariaDB handshake packet: length, sequence, protocol 10, the server version, then binary.
      startBannerServer(
        Buffer.concat([
          Buffer.from([0x5b, 0, 0, 0, 0x0a]),
          Buffer.from('5.5.5-10.11.6-MariaDB-MARIABANNERSECRET\0'),
          Buffer.from([0x2a, 0, 0, 0, 0x3b, 0x21, 0x5a, 0x5e, 0x0d, 0x0a]),
        ]),
      ),
      startTestApp({
        env: {
          SMTP_TIMEOUT_MS: '1000',
          OUTBOUND_ALLOW: '127.0.0.1',
          SMTP_MAX_CONFIGURATIONS_PER_TENANT: String(CAP),
        },
      }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([t?.close(), tlsServer?.close(), internal?.close(), nats?.close(), mariadb?.close()]);
  });

  const ensure = (body: SmtpConfigurationBody): Promise<LightMyRequestResponse> => t.post(ENSURE, body);
  const identity = (body: SmtpConfigurationBody) => ({
    Context: body.Context,
    Host: body.Host,
    Port: body.Port,
    Username: body.Username,
  });
  const list = async (domain: string) => {
    const response = await t.request({
      method: 'GET',
      url: `${LIST}?Domain=${encodeURIComponent(domain)}`,
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(response.statusCode).toBe(200);
    return response.json().Result as Array<Record<string, unknown>>;
  };

  describe('refused destinations', () => {
    it.each([
      ['127.0.0.2'],
      ['2130706434'],
      ['0x7f000002'],
      ['127.2'],
      ['[::ffff:127.0.0.2]'],
      ['::ffff:7f00:2'],
      ['::1'],
      ['0.0.0.0'],
      ['169.254.169.254'],
      ['[fe80::a9fe:a9fe]'],
      ['224.0.0.1'],
      ['255.255.255.255'],
    ])('ensure with Host %s answers 400 HostNotAllowed naming Host and stores nothing', async (host) => {
      const response = await ensure(
        smtpConfiguration({ Context: { Domain: 'refused.example' }, Host: host, Port: internal.port }),
      );
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({
        Succeeded: false,
        Code: 'HostNotAllowed',
        Errors: [{ Field: 'Host', Message: expect.stringContaining('is not allowed') }],
      });
      expect(await list('refused.example')).toEqual([]);
      expect(internal.connections).toBe(0);
    });

    it('checks a name again at connect time: verify and send answer HostNotAllowed without connecting', async () => {
      const egress = t.app.get(EgressService);
      // The name resolved to a public address when it was stored; now it resolves to an internal one.
      egress.lookup = (host) =>
        Promise.resolve(
          host === 'rebind.example.com'
            ? [{ address: '127.0.0.2', family: 4 }]
            : [{ address: '192.0.2.1', family: 4 }],
        );
      try {
        const body = smtpConfiguration({
          Context: { Domain: 'rebind.example' },
          Host: 'rebind.example.com',
          Port: internal.port,
          AuthRequired: false,
          Password: null,
        });
        expect((await ensure(body)).json()).toMatchObject({ Succeeded: true, Code: 'Created' });

        const verified = await t.post(VERIFY, identity(body));
        expect(verified.statusCode).toBe(200);
        expect(verified.json()).toMatchObject({
          Succeeded: false,
          Code: 'HostNotAllowed',
          Message: expect.stringContaining('Host rebind.example.com is not allowed'),
          Result: { Host: 'rebind.example.com', Port: internal.port, Authenticated: false },
        });
        // The refusal does not tell which address the name resolved to (no mapping of internal names).
        expect(verified.json().Message).not.toContain('127.0.0.2');

        const sent = await t.post(SEND, { Context: body.Context, To: 'ops@rebind.example' });
        expect(sent.json()).toMatchObject({
          Succeeded: false,
          Code: 'HostNotAllowed',
          Result: { Attempts: [{ Host: 'rebind.example.com', Code: 'HostNotAllowed' }] },
        });
        expect(internal.connections).toBe(0);
      } finally {
        egress.lookup = undefined;
      }
    });

    it('connects to the checked address, not to a second look-up of the name', async () => {
      const egress = t.app.get(EgressService);
      let lookups = 0;
      // Rebinding: the first answer passes the check; any second look-up would get the internal address.
      egress.lookup = () => {
        lookups++;
        return Promise.resolve([{ address: lookups === 1 ? '127.0.0.1' : '127.0.0.2', family: 4 }]);
      };
      try {
        const body = smtpConfiguration({
          Context: { Domain: 'once.example' },
          Host: 'relay.once.example',
          Port: tlsServer.port,
          Ssl: true,
          AllowInvalidCertificate: true,
          Password: PASSWORD,
        });
        expect((await ensure(body)).json()).toMatchObject({ Code: 'Created' });
        const verified = (await t.post(VERIFY, identity(body))).json();
        expect(verified).toMatchObject({ Succeeded: true, Result: { Tls: 'StartTls', Authenticated: true } });
        expect(lookups).toBe(1);
        expect(internal.connections).toBe(0);
      } finally {
        egress.lookup = undefined;
      }
    });
  });

  describe('stored secrets across a transport downgrade', () => {
    it('Ssl true→false drops Password and InternalPassword unless the request sends them again', async () => {
      const body = smtpConfiguration({
        Context: { Domain: 'downgrade.example' },
        Host: '127.0.0.1',
        Port: tlsServer.port,
        Ssl: true,
        AllowInvalidCertificate: true,
        Password: PASSWORD,
        InternalPassword: 'internal-canary',
      });
      expect((await ensure(body)).json()).toMatchObject({ Code: 'Created' });
      expect((await t.post(VERIFY, identity(body))).json()).toMatchObject({ Succeeded: true });
      expect(tlsServer.credentials.at(-1)).toEqual({ username: 'mailer', password: PASSWORD, secure: true });
      const before = tlsServer.credentials.length;

      // Switching TLS off while keeping AuthRequired needs the password again: the change is refused as a whole.
      const refused = await ensure({ ...body, Ssl: false, Password: null, InternalPassword: null });
      expect(refused.statusCode).toBe(400);
      expect(refused.json().Errors).toEqual([
        { Field: 'Password', Message: expect.stringContaining('weakens') },
      ]);
      expect(await list('downgrade.example')).toMatchObject([
        { Ssl: true, HasPassword: true, HasInternalPassword: true },
      ]);

      // Switching it off without a login drops both stored secrets; the next verify sends none in clear.
      const off = await ensure({
        ...body,
        Ssl: false,
        AuthRequired: false,
        Password: '<PASSWORD>',
        InternalPassword: undefined,
      });
      expect(off.json()).toMatchObject({
        Code: 'Updated',
        Message: expect.stringContaining('Password, InternalPassword'),
      });
      expect(await list('downgrade.example')).toMatchObject([
        { Ssl: false, HasPassword: false, HasInternalPassword: false },
      ]);
      expect((await ensure({ ...body, Ssl: false, AuthRequired: true, Password: null })).statusCode).toBe(
        400,
      );
      await t.post(VERIFY, identity(body));
      expect(tlsServer.credentials).toHaveLength(before);

      // Supplying the password with the downgrade is the operator's explicit choice, and it is kept.
      const resent = await ensure({ ...body, Ssl: false, Password: PASSWORD });
      expect(resent.json()).toMatchObject({ Code: 'Updated' });
      expect(await list('downgrade.example')).toMatchObject([
        { Ssl: false, AuthRequired: true, HasPassword: true },
      ]);
    });

    it('AllowInvalidCertificate false→true drops the stored password too; upgrades keep it', async () => {
      const body = smtpConfiguration({
        Context: { Domain: 'certs.example' },
        Host: '127.0.0.1',
        Port: tlsServer.port,
        Ssl: true,
        AllowInvalidCertificate: false,
        AuthRequired: false,
        Password: PASSWORD,
      });
      expect((await ensure(body)).json()).toMatchObject({ Code: 'Created' });
      const weakened = await ensure({ ...body, AllowInvalidCertificate: true, Password: null });
      expect(weakened.json()).toMatchObject({
        Code: 'Updated',
        Message: expect.stringContaining('Password'),
      });
      expect(await list('certs.example')).toMatchObject([
        { AllowInvalidCertificate: true, HasPassword: false },
      ]);

      expect(
        (await ensure({ ...body, AllowInvalidCertificate: true, Password: PASSWORD })).json(),
      ).toMatchObject({
        Code: 'Updated',
      });
      // Turning certificate checks back on (stronger) keeps the secret.
      expect(
        (await ensure({ ...body, AllowInvalidCertificate: false, Password: null })).json(),
      ).toMatchObject({
        Code: 'Updated',
        Message: expect.not.stringContaining('Password'),
      });
      expect(await list('certs.example')).toMatchObject([
        { AllowInvalidCertificate: false, HasPassword: true },
      ]);
    });
  });

  describe('configurations per tenant', () => {
    it(`accepts at most ${CAP} per tenant, naming the cap; updates and other tenants are not affected`, async () => {
      const base = smtpConfiguration({
        Context: { Domain: 'cap.example' },
        AuthRequired: false,
        Password: null,
      });
      for (let port = 1; port <= CAP; port++)
        expect((await ensure({ ...base, Port: 2500 + port })).json()).toMatchObject({ Code: 'Created' });
      const over = await ensure({ ...base, Port: 2600 });
      expect(over.statusCode).toBe(400);
      expect(over.json()).toMatchObject({
        Code: 'ValidationFailed',
        Errors: [
          { Field: 'Host', Message: expect.stringContaining(`SMTP_MAX_CONFIGURATIONS_PER_TENANT=${CAP}`) },
        ],
      });
      expect(await list('cap.example')).toHaveLength(CAP);
      expect((await ensure({ ...base, Port: 2501, Priority: 7 })).json()).toMatchObject({ Code: 'Updated' });
      expect(
        (await ensure({ ...base, Context: { Domain: 'cap-other.example' }, Port: 2600 })).json(),
      ).toMatchObject({ Code: 'Created' });
      await t.post(REMOVE, identity({ ...base, Port: 2502 }));
      expect((await ensure({ ...base, Port: 2600 })).json()).toMatchObject({ Code: 'Created' });
    });
  });

  describe('peers that are not SMTP servers', () => {
    it.each([
      ['a NATS server', () => nats, /NATSBANNERSECRET|INFO|server_id/],
      ['a MariaDB server', () => mariadb, /MARIABANNERSECRET|MariaDB|5\.5\.5/],
    ])('%s gets no EHLO and its bytes are not quoted', async (_name, server, leaked) => {
      const peer = server();
      const body = smtpConfiguration({
        Context: { Domain: 'banner.example' },
        Host: '127.0.0.1',
        Port: peer.port,
        AuthRequired: false,
        Password: null,
      });
      await ensure(body);
      const verified = (await t.post(VERIFY, identity(body))).json();
      expect(verified).toMatchObject({ Succeeded: false });
      expect(['ConnectionFailed', 'TimedOut']).toContain(verified.Code);
      expect(verified.Message).not.toMatch(leaked);
      expect(peer.connections).toBeGreaterThan(0);
      expect(peer.received.join('')).not.toMatch(/EHLO|HELO/);
      await t.post(REMOVE, identity(body));
    });

    it('a NATS greeting is named for what it is: not an SMTP reply', async () => {
      const body = smtpConfiguration({
        Context: { Domain: 'nats.example' },
        Host: '127.0.0.1',
        Port: nats.port,
        AuthRequired: false,
        Password: null,
      });
      await ensure(body);
      const verified = (await t.post(VERIFY, identity(body))).json();
      expect(verified).toMatchObject({
        Code: 'ConnectionFailed',
        Message: expect.stringContaining('did not answer as an SMTP server'),
      });
    });

    it('a TLS failure does not quote the certificate', async () => {
      const body = smtpConfiguration({
        Context: { Domain: 'tls.example' },
        Host: '127.0.0.1',
        Port: tlsServer.port,
        Ssl: true,
        AllowInvalidCertificate: false,
        Password: PASSWORD,
      });
      await ensure(body);
      const verified = (await t.post(VERIFY, identity(body))).json();
      expect(verified).toMatchObject({ Succeeded: false, Code: 'TlsFailed' });
      expect(verified.Message).not.toMatch(/DNS:|IP Address:|CN=|localhost/);
    });
  });
});
