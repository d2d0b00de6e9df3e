// Mail (operation 4, the SMTP configuration, and the mail operations beyond it) on the real app and database, against real SMTP
// servers on 127.0.0.1 (smtp-server), with nodemailer as the service's client.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { getRepositoryToken } from '@nestjs/typeorm';
import type { LightMyRequestResponse } from 'fastify';
import { EntityManager, QueryFailedError, type Repository } from 'typeorm';
import { ApiKeysService } from '../src/auth/api-keys.service.js';
import { EncryptionService } from '../src/crypto/encryption.service.js';
import { cliSource } from '../src/audit/audit-source.js';
import { rotateEncryptionKey } from '../src/crypto/key-rotation.js';
import { SecretStoreRegistry } from '../src/crypto/secret-store.registry.js';
import { SmtpConfiguration } from '../src/mail/entities/smtp-configuration.entity.js';
import {
  deadPort,
  selfSignedCertificate,
  startSilentServer,
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

/** Per-phase SMTP time-out of the app under test: short, so the silent-server cases stay fast. */
const SMTP_TIMEOUT_MS = 1000;
const GOOD_PASSWORD = 'c0rrect-horse-battery-staple';

describe('mail: SMTP configuration and sending', () => {
  let t: TestApp;
  let authServer: SmtpTestServer;
  let plainServer: SmtpTestServer;
  let tlsServer: SmtpTestServer;
  let rejectingServer: SmtpTestServer;
  let silent: Awaited<ReturnType<typeof startSilentServer>>;
  let refusedPort: number;
  /** Every response body, so a test can check that no secret ever left the service. */
  const bodies: string[] = [];

  beforeAll(async () => {
    const certificate = selfSignedCertificate();
    [authServer, plainServer, tlsServer, rejectingServer, silent, refusedPort, t] = await Promise.all([
      startSmtpServer({ users: { mailer: GOOD_PASSWORD } }),
      startSmtpServer(),
      startSmtpServer({ tls: certificate, users: { mailer: GOOD_PASSWORD } }),
      startSmtpServer({ rejectRecipients: ['nobody@contoso.example'] }),
      startSilentServer(),
      deadPort(),
      // The test servers listen on loopback, which the egress policy refuses unless the operator opens it.
      startTestApp({ env: { SMTP_TIMEOUT_MS: String(SMTP_TIMEOUT_MS), OUTBOUND_ALLOW: '127.0.0.0/8' } }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([
      t?.close(),
      authServer?.close(),
      plainServer?.close(),
      tlsServer?.close(),
      rejectingServer?.close(),
      silent?.close(),
    ]);
  });

  const post = async (url: string, body: unknown): Promise<LightMyRequestResponse> => {
    const response = await t.post(url, body);
    bodies.push(response.body);
    return response;
  };
  const ensure = (body: SmtpConfigurationBody) => post(ENSURE, body);
  const list = async (domain?: string) => {
    const response = await t.request({
      method: 'GET',
      url: domain === undefined ? LIST : `${LIST}?Domain=${encodeURIComponent(domain)}`,
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    bodies.push(response.body);
    expect(response.statusCode).toBe(200);
    return response.json().Result as Array<Record<string, unknown>>;
  };
  const rows = (tenant: string) => t.dataSource.getRepository(SmtpConfiguration).findBy({ tenant });
  /** The instance's key file (no ENCRYPTION_KEY in the test app: the key lives in DATA_DIR). */
  const keyFile = () => path.join(t.config.dataDir, 'encryption.key');
  const rotations = async () => {
    const response = await t.request({
      method: 'GET',
      url: '/api/v1/audit-events?Action=encryption-key.rotate',
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(response.statusCode).toBe(200);
    return response.json().Result as Array<Record<string, unknown>>;
  };
  const fieldsOf = (response: LightMyRequestResponse): string[] =>
    (response.json().Errors as Array<{ Field: string }>).map((error) => error.Field);

  describe('ensureSmtpConfiguration (operation 4)', () => {
    it('creates, then answers Unchanged, then Updated naming what changed', async () => {
      const body = smtpConfiguration({ Context: { Domain: 'ensure.example' }, Host: 'smtp.example.com' });
      const created = await ensure(body);
      expect(created.statusCode).toBe(200);
      expect(Object.keys(created.json())).toEqual(['Succeeded', 'Message', 'Code']);
      expect(created.json()).toMatchObject({ Succeeded: true, Code: 'Created' });
      expect(created.json().Message).toContain('smtp.example.com:2525');
      // The area's log line names the request it was written for.
      expect(t.logs).toContainEqual(
        expect.objectContaining({
          message: 'SMTP configuration created',
          area: 'mail',
          correlationId: created.headers['x-correlation-id'],
        }),
      );

      expect((await ensure(body)).json()).toMatchObject({ Succeeded: true, Code: 'Unchanged' });

      const moved = (await ensure({ ...body, Priority: 5 })).json();
      expect(moved).toMatchObject({ Succeeded: true, Code: 'Updated' });
      expect(moved.Message).toContain('(Priority)');

      for (const kept of ['<PASSWORD>', null, undefined]) {
        const response = await ensure({ ...body, Priority: 5, Password: kept });
        expect(response.json()).toMatchObject({ Succeeded: true, Code: 'Unchanged' });
      }
      const rotated = (await ensure({ ...body, Priority: 5, Password: 'a-new-password' })).json();
      expect(rotated).toMatchObject({ Code: 'Updated', Message: expect.stringContaining('(Password)') });

      expect(await list('ensure.example')).toEqual([
        {
          Domain: 'ensure.example',
          Host: 'smtp.example.com',
          Port: 2525,
          Ssl: false,
          Tls: 'None',
          AuthRequired: true,
          Username: 'mailer',
          HasPassword: true,
          HasInternalPassword: false,
          SenderAddress: 'Contoso Alerts <alerts@contoso.example>',
          Priority: 5,
          Enabled: true,
          BCC: [],
          AllowInvalidCertificate: false,
          CreatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
          UpdatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        },
      ]);
    });

    it('binds names case-insensitively, compares hosts case-insensitively and keeps tenants apart', async () => {
      const lowerCase = {
        context: { domain: 'Case.Example' },
        host: 'SMTP.Example.COM.',
        port: 25,
        authRequired: false,
        senderAddress: 'a@case.example',
      };
      const mixedCaseRoute = await t.post('/API/V1/Mail/EnsureSMTPConfiguration', lowerCase);
      expect(mixedCaseRoute.json()).toMatchObject({ Code: 'Created' });
      const same = { ...lowerCase, context: { domain: 'case.example' }, host: 'smtp.example.com' };
      expect((await ensure(same)).json()).toMatchObject({ Code: 'Unchanged' });
      expect((await ensure({ ...same, context: { domain: 'other.example' } })).json()).toMatchObject({
        Code: 'Created',
      });
      const { context: _dropped, ...withoutContext } = same;
      expect((await ensure(withoutContext)).json()).toMatchObject({ Code: 'Created' });

      expect((await list('case.example')).map((c) => [c.Domain, c.Host])).toEqual([
        ['case.example', 'smtp.example.com'],
      ]);
      expect((await list()).map((c) => c.Domain)).toEqual(['default']);
      expect(await rows('other.example')).toHaveLength(1);
    });

    it('applies defaults on creation and keeps absent optional fields on update', async () => {
      const minimal = {
        Context: { Domain: 'defaults.example' },
        Host: 'relay.example.net',
        Port: 25,
        SenderAddress: 'noreply@defaults.example',
      };
      expect((await ensure(minimal)).json()).toMatchObject({ Code: 'Created' });
      expect((await list('defaults.example'))[0]).toMatchObject({
        Ssl: false,
        AuthRequired: false,
        Username: null,
        HasPassword: false,
        Priority: 0,
        Enabled: true,
        BCC: [],
        AllowInvalidCertificate: false,
      });
      await ensure({ ...minimal, Enabled: false, BCC: ['a@x.example', 'A@x.example', 'b@x.example'] });
      expect((await ensure({ ...minimal, Priority: 3 })).json()).toMatchObject({ Code: 'Updated' });
      expect((await list('defaults.example'))[0]).toMatchObject({
        Priority: 3,
        Enabled: false,
        BCC: ['a@x.example', 'b@x.example'],
      });
      expect((await ensure({ ...minimal, BCC: null })).json()).toMatchObject({ Code: 'Updated' });
      expect((await list('defaults.example'))[0].BCC).toEqual([]);
    });

    it('rejects a malformed body with 400 naming every bad field, and writes nothing', async () => {
      const response = await ensure(
        smtpConfiguration({
          Context: { Domain: 'invalid.example' },
          Host: 'not a host!',
          Port: 0,
          Username: null,
          SenderAddress: 'nope',
          BCC: ['ok@contoso.example', 'bad'],
          Priority: -1,
          Enabled: 'yes',
          Extra: 1,
        }),
      );
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ Succeeded: false, Code: 'ValidationFailed' });
      expect(fieldsOf(response).sort()).toEqual(
        ['Extra', 'Host', 'Port', 'SenderAddress', 'BCC[1]', 'Priority', 'Enabled', 'Username'].sort(),
      );
      expect(response.json().Errors.find((e: { Field: string }) => e.Field === 'Username').Message).toBe(
        'Username is required when AuthRequired is true',
      );

      const tooMany = Array.from({ length: 51 }, (_, i) => `bcc${i}@contoso.example`);
      for (const [override, field] of [
        [{ BCC: tooMany }, 'BCC'],
        [{ Port: 65536 }, 'Port'],
        [{ Port: '25' }, 'Port'],
        [{ Host: '999.1.1.1' }, 'Host'],
        [{ Host: 'smtp.example.com:25' }, 'Host'],
        [{ Host: null }, 'Host'],
        [{ SenderAddress: null }, 'SenderAddress'],
        [{ Priority: 2 ** 31 }, 'Priority'],
      ] as const) {
        const bad = await ensure(smtpConfiguration({ Context: { Domain: 'invalid.example' }, ...override }));
        expect(bad.statusCode).toBe(400);
        expect(fieldsOf(bad)).toEqual([field]);
      }
      expect(await rows('invalid.example')).toEqual([]);
    });

    it('needs a password for AuthRequired on creation and keeps the stored one on update', async () => {
      const body = smtpConfiguration({ Context: { Domain: 'password.example' } });
      for (const missing of [undefined, null, '<PASSWORD>', '']) {
        const response = await ensure({ ...body, Password: missing });
        expect(response.statusCode).toBe(400);
        expect(fieldsOf(response)).toEqual(['Password']);
      }
      expect(await rows('password.example')).toEqual([]);

      expect((await ensure(body)).json()).toMatchObject({ Code: 'Created' });
      expect((await ensure({ ...body, Password: '<PASSWORD>' })).json()).toMatchObject({
        Code: 'Unchanged',
      });
      const cleared = await ensure({ ...body, Password: '' });
      expect(cleared.statusCode).toBe(400);
      expect(fieldsOf(cleared)).toEqual(['Password']);
      expect((await ensure({ ...body, AuthRequired: false, Password: '' })).json()).toMatchObject({
        Code: 'Updated',
      });
      expect((await list('password.example'))[0]).toMatchObject({ AuthRequired: false, HasPassword: false });
    });

    it('leaves exactly one configuration after 20 concurrent identical ensures, all of them successful', async () => {
      const body = smtpConfiguration({
        Context: { Domain: 'race.example' },
        InternalPassword: 'internal-race',
        BCC: ['archive@contoso.example'],
      });
      const responses = await Promise.all(Array.from({ length: 20 }, () => ensure(body)));
      expect(responses.map((response) => response.statusCode)).toEqual(Array(20).fill(200));
      const codes = responses.map((response) => response.json().Code as string);
      expect(responses.every((response) => response.json().Succeeded === true)).toBe(true);
      expect(codes.filter((code) => code === 'Created')).toHaveLength(1);
      expect(codes.filter((code) => code === 'Unchanged')).toHaveLength(19);
      expect(await rows('race.example')).toHaveLength(1);
    });
    it('turns a lost creation race into an update: the unique index decides, the caller still succeeds', async () => {
      const body = smtpConfiguration({ Context: { Domain: 'lost-race.example' } });
      expect((await ensure(body)).json()).toMatchObject({ Code: 'Created' });
      // Make the next ensure miss the row once, as a request racing the creator would, so its INSERT collides.
      const repository = t.app.get<Repository<SmtpConfiguration>>(getRepositoryToken(SmtpConfiguration));
      const lookup = jest.spyOn(repository, 'findOneBy').mockResolvedValueOnce(null);
      // The INSERT runs in a transaction with its audit event (src/audit/), through that transaction's manager.
      const insert = jest.spyOn(EntityManager.prototype, 'insert');
      try {
        const response = await ensure({ ...body, Priority: 7 });
        expect(response.json()).toMatchObject({ Succeeded: true, Code: 'Updated' });
        const inserts = insert.mock.calls.flatMap((call, index) =>
          call[0] === SmtpConfiguration ? [index] : [],
        );
        expect(inserts).toHaveLength(1);
        await expect(insert.mock.results[inserts[0]].value).rejects.toBeInstanceOf(QueryFailedError);
      } finally {
        lookup.mockRestore();
        insert.mockRestore();
      }
      const stored = await rows('lost-race.example');
      expect(stored.map((row) => row.priority)).toEqual([7]);
    });
  });

  describe('secrets at rest', () => {
    it('stores Password and InternalPassword encrypted, never returns or logs them, and the raw database has none', async () => {
      const password = `pw-canary-${randomBytes(6).toString('hex')}`;
      const internal = `internal-canary-${randomBytes(6).toString('hex')}`;
      const body = smtpConfiguration({
        Context: { Domain: 'secrets.example' },
        Host: 'secrets-canary.example.com',
        Password: password,
        InternalPassword: internal,
      });
      expect((await ensure(body)).json()).toMatchObject({ Code: 'Created' });
      expect((await ensure({ ...body, Priority: 1 })).json()).toMatchObject({ Code: 'Updated' });
      // A failing session and a bad request, so error paths are covered by the checks below too.
      await post(VERIFY, { Context: body.Context, Host: body.Host, Port: 2525, Username: 'mailer' });
      expect((await ensure({ ...body, Port: -1 })).statusCode).toBe(400);

      const [view] = await list('secrets.example');
      expect(view).toMatchObject({ HasPassword: true, HasInternalPassword: true });
      expect(Object.keys(view)).not.toContain('Password');

      const [row] = await rows('secrets.example');
      const encryption = t.app.get(EncryptionService);
      for (const [ciphertext, plaintext] of [
        [row.passwordCiphertext, password],
        [row.internalPasswordCiphertext, internal],
      ] as const) {
        expect(ciphertext).toMatch(/^v1:[0-9a-f]{8}:/);
        expect(ciphertext).not.toContain(plaintext);
        expect(encryption.decrypt(ciphertext!)).toBe(plaintext);
      }

      const everything = JSON.stringify(t.logs) + bodies.join('\n');
      for (const secret of [password, internal, Buffer.from(password).toString('base64')]) {
        expect(everything).not.toContain(secret);
      }
      if (t.database.kind === 'sqlite') {
        const file = t.database.url.slice('sqlite:'.length);
        const raw = Buffer.concat(
          [file, `${file}-wal`].filter((f) => fs.existsSync(f)).map((f) => fs.readFileSync(f)),
        );
        // The bytes read really hold the configuration (else "no plaintext" would prove nothing).
        expect(raw.includes('secrets-canary.example.com')).toBe(true);
        expect(raw.includes(password)).toBe(false);
        expect(raw.includes(internal)).toBe(false);
      }
    });

    it('is re-encrypted by encryption:rotate-key, and the service still delivers afterwards', async () => {
      const body = smtpConfiguration({
        Context: { Domain: 'rotate.example' },
        Port: authServer.port,
        Password: GOOD_PASSWORD,
        InternalPassword: 'internal-rotate',
      });
      expect((await ensure(body)).json()).toMatchObject({ Code: 'Created' });
      const [before] = await rows('rotate.example');
      const stores = t.app.get(SecretStoreRegistry);
      expect(stores.all().map((store) => store.name)).toContain('mail.smtp_configurations');

      // What `encryption:rotate-key` runs (the command only wraps it); nest-commander cannot load under jest.
      const lines: string[] = [];
      await rotateEncryptionKey(
        t.config,
        stores,
        t.dataSource,
        cliSource('encryption:rotate-key'),
        undefined,
        (line) => lines.push(line),
      );
      expect(lines.join('\n')).toMatch(/mail\.smtp_configurations: re-encrypted \d+ secret/);

      const [after] = await rows('rotate.example');
      const keyOf = (ciphertext: string | null) => ciphertext!.split(':')[1];
      expect(keyOf(after.passwordCiphertext)).not.toBe(keyOf(before.passwordCiphertext));
      expect(keyOf(after.internalPasswordCiphertext)).toBe(keyOf(after.passwordCiphertext));
      expect(after.passwordCiphertext).not.toBe(before.passwordCiphertext);

      const received = authServer.messages.length;
      const sent = (await post(SEND, { Context: body.Context, To: 'ops@contoso.example' })).json();
      expect(sent).toMatchObject({ Succeeded: true, Code: 'Sent' });
      expect(authServer.messages).toHaveLength(received + 1);
      expect(authServer.messages.at(-1)?.user).toBe('mailer');

      // The trail says who rotated, how many secrets moved and to which key id — never a key or a secret.
      const [event] = await rotations();
      expect(event).toMatchObject({
        ActorType: 'cli',
        Action: 'encryption-key.rotate',
        ResourceType: 'EncryptionKey',
        Outcome: 'success',
        Detail: { stores: expect.arrayContaining(['mail.smtp_configurations']) },
      });
      expect((event.Detail as { reencrypted: number }).reencrypted).toBeGreaterThanOrEqual(2);
      const trail = JSON.stringify(event);
      for (const secret of [GOOD_PASSWORD, 'internal-rotate', fs.readFileSync(keyFile(), 'utf8').trim()])
        expect(trail.includes(secret)).toBe(false);
    });

    it('rotates all or nothing: a store that fails leaves every secret, the key file and the trail as they were', async () => {
      const stores = t.app.get(SecretStoreRegistry);
      const failing = new SecretStoreRegistry();
      for (const store of stores.all()) failing.register(store);
      failing.register({
        name: 'failing',
        reencrypt: () => Promise.reject(new Error('disk on fire')),
      });
      const before = await rows('rotate.example');
      const key = fs.readFileSync(keyFile(), 'utf8');
      const events = (await rotations()).length;
      await expect(
        rotateEncryptionKey(
          t.config,
          failing,
          t.dataSource,
          cliSource('encryption:rotate-key'),
          undefined,
          () => {},
        ),
      ).rejects.toThrow('disk on fire');
      expect(await rows('rotate.example')).toEqual(before);
      expect(fs.readFileSync(keyFile(), 'utf8')).toBe(key);
      expect(fs.existsSync(`${keyFile()}.next`)).toBe(false);
      expect(await rotations()).toHaveLength(events);
    });
    it('reports a stored secret it cannot decrypt, and sending fails over past that configuration', async () => {
      const context = { Domain: 'lost-key.example' };
      await ensure(smtpConfiguration({ Context: context, Port: authServer.port, Password: GOOD_PASSWORD }));
      await ensure(
        smtpConfiguration({ Context: context, Port: plainServer.port, AuthRequired: false, Priority: 1 }),
      );
      // As if the value had been written with a key this instance no longer has.
      await t.dataSource
        .getRepository(SmtpConfiguration)
        .update(
          { tenant: 'lost-key.example', port: authServer.port },
          { passwordCiphertext: 'v1:00000000:AAAAAAAAAAAAAAAA:AAAAAAAAAAAAAAAAAAAAAA==:AAAA' },
        );
      const verified = (
        await post(VERIFY, { Context: context, Host: '127.0.0.1', Port: authServer.port, Username: 'mailer' })
      ).json();
      expect(verified).toMatchObject({ Succeeded: false, Code: 'SecretUnavailable' });
      expect(verified.Message).toContain('cannot be decrypted');
      const sent = (await post(SEND, { Context: context, To: 'ops@contoso.example' })).json();
      expect(sent).toMatchObject({ Succeeded: true, Result: { Port: plainServer.port } });
      expect(sent.Result.Attempts.map((a: { Code: string }) => a.Code)).toEqual([
        'SecretUnavailable',
        'Sent',
      ]);
    });
  });

  describe('verifySmtpConfiguration', () => {
    const verify = async (overrides: SmtpConfigurationBody) => {
      const body = smtpConfiguration({ Context: { Domain: 'verify.example' }, ...overrides });
      expect((await ensure(body)).json()).toMatchObject({ Succeeded: true });
      const response = await post(VERIFY, {
        Context: body.Context,
        Host: body.Host,
        Port: body.Port,
        Username: body.Username,
      });
      expect(response.statusCode).toBe(200);
      return response.json();
    };

    it('logs in when AuthRequired and the server accepts', async () => {
      const result = await verify({ Port: authServer.port, Password: GOOD_PASSWORD });
      expect(result).toMatchObject({
        Succeeded: true,
        Code: 'Verified',
        Result: { Host: '127.0.0.1', Port: authServer.port, Tls: 'None', Authenticated: true },
      });
      expect(authServer.logins.at(-1)).toEqual({ username: 'mailer', accepted: true });
    });

    it('connects without logging in when AuthRequired is false', async () => {
      const result = await verify({ Port: plainServer.port, AuthRequired: false, Username: null });
      expect(result).toMatchObject({ Succeeded: true, Result: { Authenticated: false, Username: null } });
    });

    it('reports a rejected login as AuthenticationFailed, without the password', async () => {
      const result = await verify({ Port: authServer.port, Username: 'intruder', Password: 'wrong-pw-77' });
      expect(result).toMatchObject({ Succeeded: false, Code: 'AuthenticationFailed' });
      expect(result.Message).toMatch(/^Authentication failed for "intruder" at 127\.0\.0\.1:\d+/);
      expect(JSON.stringify(result)).not.toContain('wrong-pw-77');
      expect(authServer.logins.at(-1)).toEqual({ username: 'intruder', accepted: false });
    });

    it('reports a closed port as ConnectionRefused', async () => {
      const result = await verify({ Port: refusedPort });
      expect(result).toMatchObject({ Succeeded: false, Code: 'ConnectionRefused' });
      expect(result.Message).toContain(`Connection refused by 127.0.0.1:${refusedPort}`);
    });

    it('gives up on a server that never answers within the configured time-out', async () => {
      const result = await verify({ Port: silent.port });
      expect(result).toMatchObject({ Succeeded: false, Code: 'TimedOut' });
      expect(result.Message).toBe(
        `Timed out after ${SMTP_TIMEOUT_MS} ms waiting for the greeting of 127.0.0.1:${silent.port}.`,
      );
    });

    it('uses STARTTLS for Ssl and accepts a self-signed certificate only when the configuration says so', async () => {
      const trusted = await verify({
        Port: tlsServer.port,
        Ssl: true,
        AllowInvalidCertificate: true,
        Password: GOOD_PASSWORD,
      });
      expect(trusted).toMatchObject({ Succeeded: true, Result: { Tls: 'StartTls', Authenticated: true } });

      const strict = await verify({
        Port: tlsServer.port,
        Ssl: true,
        AllowInvalidCertificate: false,
        Password: GOOD_PASSWORD,
      });
      expect(strict).toMatchObject({ Succeeded: false, Code: 'TlsFailed', Result: { Tls: 'StartTls' } });
      expect(strict.Message).toMatch(/self-signed certificate.*AllowInvalidCertificate/);
    });

    it('does not fall back to plain text when Ssl is set and the server offers no STARTTLS', async () => {
      const logins = authServer.logins.length;
      const result = await verify({ Port: authServer.port, Ssl: true, Password: GOOD_PASSWORD });
      expect(result).toMatchObject({ Succeeded: false, Code: 'TlsFailed' });
      expect(result.Message).toContain('refused STARTTLS');
      expect(authServer.logins).toHaveLength(logins);
    });

    it('answers SmtpConfigurationNotFound for an unknown identity', async () => {
      const response = await post(VERIFY, {
        Context: { Domain: 'verify.example' },
        Host: 'nowhere.example',
        Port: 25,
      });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({
        Succeeded: false,
        Message: expect.stringContaining('nowhere.example:25'),
        Code: 'SmtpConfigurationNotFound',
        Result: null,
      });
    });

    it('rejects a malformed identity with 400', async () => {
      const response = await post(VERIFY, { Host: 'x y', Port: 'twenty-five' });
      expect(response.statusCode).toBe(400);
      expect(fieldsOf(response).sort()).toEqual(['Host', 'Port']);
    });
  });

  describe('sendTestMessage', () => {
    it('delivers one message with the right sender, and the BCC recipients only in the envelope', async () => {
      const context = { Domain: 'send.example' };
      await ensure(
        smtpConfiguration({
          Context: context,
          Port: authServer.port,
          Password: GOOD_PASSWORD,
          BCC: ['archive@contoso.example', 'audit@contoso.example'],
        }),
      );
      const received = authServer.messages.length;
      const response = await post(SEND, { Context: context, To: 'ops@contoso.example' });
      expect(response.json()).toMatchObject({
        Succeeded: true,
        Code: 'Sent',
        Result: {
          Host: '127.0.0.1',
          Port: authServer.port,
          Username: 'mailer',
          MessageId: expect.stringMatching(/^<.+@.+>$/),
          Accepted: ['ops@contoso.example', 'archive@contoso.example', 'audit@contoso.example'],
          Attempts: [expect.objectContaining({ Succeeded: true, Code: 'Sent' })],
        },
      });
      expect(authServer.messages).toHaveLength(received + 1);
      const message = authServer.messages.at(-1)!;
      expect(message.from).toBe('alerts@contoso.example');
      expect(message.to).toEqual(['ops@contoso.example', 'archive@contoso.example', 'audit@contoso.example']);
      expect(message.user).toBe('mailer');
      expect(message.data).toMatch(/^From: Contoso Alerts <alerts@contoso\.example>$/m);
      expect(message.data).toMatch(/^To: ops@contoso\.example$/m);
      expect(message.data).not.toMatch(/^bcc:/im);
      expect(message.data).not.toContain('archive@contoso.example');
    });

    it('fails over in Priority order past a dead and a rejecting configuration, skipping disabled ones', async () => {
      const context = { Domain: 'failover.example' };
      await ensure(smtpConfiguration({ Context: context, Port: refusedPort, Priority: 0 }));
      await ensure(
        smtpConfiguration({ Context: context, Port: authServer.port, Password: 'stale', Priority: 1 }),
      );
      await ensure(
        smtpConfiguration({
          Context: context,
          Port: tlsServer.port,
          Password: GOOD_PASSWORD,
          Priority: 2,
          Enabled: false,
        }),
      );
      await ensure(
        smtpConfiguration({
          Context: context,
          Port: plainServer.port,
          AuthRequired: false,
          Username: null,
          Priority: 3,
        }),
      );
      const received = plainServer.messages.length;
      const response = (await post(SEND, { Context: context, To: 'ops@contoso.example' })).json();
      expect(response).toMatchObject({
        Succeeded: true,
        Code: 'Sent',
        Result: { Port: plainServer.port, Username: null },
      });
      expect(response.Message).toContain('after 2 failed configuration(s)');
      expect(response.Result.Attempts.map((a: { Port: number; Code: string }) => [a.Port, a.Code])).toEqual([
        [refusedPort, 'ConnectionRefused'],
        [authServer.port, 'AuthenticationFailed'],
        [plainServer.port, 'Sent'],
      ]);
      expect(plainServer.messages).toHaveLength(received + 1);
      expect(plainServer.messages.at(-1)?.from).toBe('alerts@contoso.example');
    });

    it('stops at a permanent rejection of the message instead of trying the next configuration', async () => {
      const context = { Domain: 'rejected.example' };
      await ensure(
        smtpConfiguration({ Context: context, Port: rejectingServer.port, AuthRequired: false, Priority: 0 }),
      );
      await ensure(
        smtpConfiguration({ Context: context, Port: plainServer.port, AuthRequired: false, Priority: 1 }),
      );
      const received = plainServer.messages.length;
      const response = (await post(SEND, { Context: context, To: 'nobody@contoso.example' })).json();
      expect(response).toMatchObject({ Succeeded: false, Code: 'MessageRejected' });
      expect(response.Message).toContain('550');
      expect(response.Result.Attempts).toHaveLength(1);
      expect(plainServer.messages).toHaveLength(received);
    });

    it('reports every failure when no configuration delivers', async () => {
      const context = { Domain: 'undeliverable.example' };
      await ensure(smtpConfiguration({ Context: context, Port: refusedPort, Priority: 0 }));
      await ensure(smtpConfiguration({ Context: context, Port: silent.port, Priority: 1 }));
      const response = (await post(SEND, { Context: context, To: 'ops@contoso.example' })).json();
      expect(response).toMatchObject({
        Succeeded: false,
        Code: 'DeliveryFailed',
        Result: { Host: null, Port: null, MessageId: null },
      });
      expect(response.Result.Attempts.map((a: { Code: string }) => a.Code)).toEqual([
        'ConnectionRefused',
        'TimedOut',
      ]);
      expect(response.Message).toMatch(/Connection refused.*Timed out/);
    });

    it('answers NoSmtpConfiguration for a tenant without an enabled configuration', async () => {
      const response = await post(SEND, { Context: { Domain: 'empty.example' }, To: 'ops@contoso.example' });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toMatchObject({
        Succeeded: false,
        Code: 'NoSmtpConfiguration',
        Result: { Attempts: [] },
      });
    });

    it('rejects a bad recipient with 400', async () => {
      const response = await post(SEND, { Context: null, To: 'not-an-address' });
      expect(response.statusCode).toBe(400);
      expect(fieldsOf(response)).toEqual(['To']);
    });
  });

  describe('removeSmtpConfiguration', () => {
    it('removes one configuration, then reports it as not found', async () => {
      const body = smtpConfiguration({ Context: { Domain: 'remove.example' } });
      await ensure(body);
      const identity = { Context: body.Context, Host: body.Host, Port: body.Port, Username: body.Username };
      expect((await post(REMOVE, identity)).json()).toMatchObject({ Succeeded: true, Code: 'Removed' });
      expect(await list('remove.example')).toEqual([]);
      const again = await post(REMOVE, identity);
      expect(again.statusCode).toBe(200);
      expect(again.json()).toMatchObject({ Succeeded: false, Code: 'SmtpConfigurationNotFound' });
    });
  });

  describe('access and schema', () => {
    it('needs the mail scope', async () => {
      const keys = t.app.get(ApiKeysService);
      const { key: schedulesKey } = await keys.create('schedules-only', ['schedules']);
      const { key: mailKey } = await keys.create('mail-only', ['mail']);
      const body = smtpConfiguration({ Context: { Domain: 'scope.example' } });
      expect((await t.post(ENSURE, body, { authorization: `Bearer ${schedulesKey}` })).statusCode).toBe(403);
      expect((await t.post(ENSURE, body, { authorization: `Bearer ${mailKey}` })).statusCode).toBe(200);
      expect((await t.post(ENSURE, body, { authorization: '' })).statusCode).toBe(401);
    });

    it('documents the operations in OpenAPI under the Mail tag, secrets write-only', async () => {
      const document = (await t.request({ method: 'GET', url: '/docs-json' })).json();
      const operations = [
        [ENSURE, 'post', 'Mail_EnsureSmtpConfiguration'],
        [LIST, 'get', 'Mail_ListSmtpConfigurations'],
        [VERIFY, 'post', 'Mail_VerifySmtpConfiguration'],
        [SEND, 'post', 'Mail_SendTestMessage'],
        [REMOVE, 'post', 'Mail_RemoveSmtpConfiguration'],
      ] as const;
      for (const [url, method, operationId] of operations) {
        const operation = document.paths[url][method];
        expect(operation).toMatchObject({ operationId, tags: ['Mail'] });
        expect(operation.responses['200']).toBeDefined();
      }
      const request = document.components.schemas.EnsureSmtpConfigurationRequest.properties;
      expect(request.Password.writeOnly).toBe(true);
      expect(request.InternalPassword.writeOnly).toBe(true);
      const view = document.components.schemas.SmtpConfigurationView.properties;
      expect(Object.keys(view)).not.toContain('Password');
    });

    it('has a migrated table with no difference from the entity', async () => {
      const sql = await t.dataSource.driver.createSchemaBuilder().log();
      expect(sql.upQueries.map((query) => query.query).filter((query) => query.includes('smtp_'))).toEqual(
        [],
      );
    });
  });
});
