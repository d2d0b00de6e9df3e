import { describe, expect, it } from '@jest/globals';
import { smtpTransportOptions, tlsModeOf, type SmtpEndpoint } from './smtp-endpoint.js';

const endpoint = (overrides: Partial<SmtpEndpoint> = {}): SmtpEndpoint => ({
  host: 'smtp.example.com',
  port: 587,
  ssl: true,
  authRequired: true,
  allowInvalidCertificate: false,
  username: 'mailer',
  password: 'hunter2',
  ...overrides,
});

describe('tlsModeOf', () => {
  it.each([
    [true, 465, 'Implicit'],
    [true, 587, 'StartTls'],
    [true, 25, 'StartTls'],
    [false, 465, 'None'],
    [false, 25, 'None'],
  ])('Ssl %s, port %i → %s', (ssl, port, mode) => {
    expect(tlsModeOf({ ssl, port })).toBe(mode);
  });
});

describe('smtpTransportOptions', () => {
  it('connects to the address the egress policy checked, presenting the host name for TLS', () => {
    const options = smtpTransportOptions(endpoint({ address: '192.0.2.25' }), 4000);
    expect(options).toMatchObject({ host: '192.0.2.25', servername: 'smtp.example.com' });
    expect(options.tls).toMatchObject({ servername: 'smtp.example.com' });
    // A literal host has no name to present.
    const literal = smtpTransportOptions(endpoint({ host: '192.0.2.25', address: '192.0.2.25' }), 4000);
    expect(literal.host).toBe('192.0.2.25');
    expect(literal).not.toHaveProperty('servername');
  });

  it('uses implicit TLS on 465 and verifies the certificate unless told otherwise', () => {
    const options = smtpTransportOptions(endpoint({ port: 465 }), 4000);
    expect(options).toMatchObject({
      secure: true,
      requireTLS: false,
      ignoreTLS: false,
      tls: { rejectUnauthorized: true },
    });
  });

  it('requires STARTTLS for Ssl on other ports, so a password is never sent in clear', () => {
    expect(smtpTransportOptions(endpoint(), 4000)).toMatchObject({
      secure: false,
      requireTLS: true,
      ignoreTLS: false,
    });
  });

  it('speaks plain SMTP for Ssl:false', () => {
    expect(smtpTransportOptions(endpoint({ ssl: false }), 4000)).toMatchObject({
      secure: false,
      requireTLS: false,
      ignoreTLS: true,
    });
  });

  it('accepts an untrusted certificate only when the configuration says so', () => {
    const options = smtpTransportOptions(endpoint({ allowInvalidCertificate: true }), 4000);
    expect(options.tls?.rejectUnauthorized).toBe(false);
  });

  it('authenticates (forced) only when AuthRequired', () => {
    expect(smtpTransportOptions(endpoint(), 4000)).toMatchObject({
      auth: { user: 'mailer', pass: 'hunter2' },
      forceAuth: true,
    });
    const anonymous = smtpTransportOptions(endpoint({ authRequired: false }), 4000);
    expect(anonymous.auth).toBeUndefined();
    expect(anonymous.forceAuth).toBe(false);
  });

  it('bounds every phase with the time-out, replies with twice as much', () => {
    expect(smtpTransportOptions(endpoint(), 1234)).toMatchObject({
      connectionTimeout: 1234,
      greetingTimeout: 1234,
      socketTimeout: 2468,
      dnsTimeout: 1234,
    });
  });
});
