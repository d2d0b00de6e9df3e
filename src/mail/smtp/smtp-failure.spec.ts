import { describe, expect, it } from '@jest/globals';
import { classifySmtpError, scrubber, SmtpFailureCode, type SmtpErrorContext } from './smtp-failure.js';

const context: SmtpErrorContext = {
  host: 'smtp.example.com',
  port: 587,
  username: 'mailer',
  timeoutMs: 5000,
  replyTimeoutMs: 10000,
  secrets: ['hunter2'],
};

// Shapes as nodemailer 10 reports them (observed against smtp-server on loopback).
const cases: Array<[string, Record<string, unknown>, SmtpFailureCode, boolean, RegExp]> = [
  [
    'rejected login',
    {
      code: 'EAUTH',
      responseCode: 535,
      response: '535 Invalid username or password',
      message: 'Invalid login: 535 Invalid username or password',
    },
    SmtpFailureCode.AuthenticationFailed,
    true,
    /^Authentication failed for "mailer" at smtp\.example\.com:587 \(server said: 535 Invalid/,
  ],
  [
    'refused connection',
    { code: 'ESOCKET', originalCode: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:587' },
    SmtpFailureCode.ConnectionRefused,
    true,
    /^Connection refused by smtp\.example\.com:587/,
  ],
  [
    'silent server',
    { code: 'ETIMEDOUT', timeoutType: 'GREETING_TIMEOUT', message: 'Greeting never received' },
    SmtpFailureCode.TimedOut,
    true,
    /^Timed out after 5000 ms waiting for the greeting of smtp\.example\.com:587\.$/,
  ],
  [
    'self-signed certificate',
    { code: 'ESOCKET', originalCode: 'DEPTH_ZERO_SELF_SIGNED_CERT', message: 'self-signed certificate' },
    SmtpFailureCode.TlsFailed,
    true,
    /^TLS failed with smtp\.example\.com:587: self-signed certificate\. .*AllowInvalidCertificate/,
  ],
  [
    'no STARTTLS offered',
    { code: 'ETLS', responseCode: 500, response: '500 Error: command not recognized' },
    SmtpFailureCode.TlsFailed,
    true,
    /the server refused STARTTLS \(server said: 500/,
  ],
  [
    'implicit TLS against a plain port',
    { code: 'ESOCKET', originalCode: 'ERR_SSL_WRONG_VERSION_NUMBER', message: '80:error:0A00010B:SSL\n' },
    SmtpFailureCode.TlsFailed,
    true,
    /does not speak TLS/,
  ],
  [
    'unknown host',
    { code: 'EDNS', originalCode: 'ENOTFOUND', message: 'getaddrinfo ENOTFOUND x' },
    SmtpFailureCode.HostNotFound,
    true,
    /^Host smtp\.example\.com could not be resolved \(ENOTFOUND\)\.$/,
  ],
  [
    'temporary rejection',
    { code: 'EENVELOPE', responseCode: 451, permanent: false, response: '451 try later' },
    SmtpFailureCode.MessageRejected,
    true,
    /rejected the message \(server said: 451 try later\)/,
  ],
  [
    'permanent rejection',
    { code: 'EENVELOPE', responseCode: 550, permanent: true, response: '550 no such user' },
    SmtpFailureCode.MessageRejected,
    false,
    /550 no such user/,
  ],
  [
    'silent after the greeting',
    { code: 'ETIMEDOUT', timeoutType: 'SOCKET_TIMEOUT', message: 'Timeout' },
    SmtpFailureCode.TimedOut,
    true,
    /^Timed out after 10000 ms waiting for a response from smtp\.example\.com:587\.$/,
  ],
  [
    'connection dropped',
    { code: 'ECONNECTION', message: 'Connection closed unexpectedly' },
    SmtpFailureCode.ConnectionFailed,
    true,
    /^Connection to smtp\.example\.com:587 failed: Connection closed unexpectedly\.$/,
  ],
  [
    'aborted by the session deadline',
    { code: 'EABORT', message: 'Message sending aborted' },
    SmtpFailureCode.TimedOut,
    true,
    /^Timed out after 5000 ms talking to/,
  ],
];

describe('classifySmtpError', () => {
  it.each(cases)('%s', (_name, error, code, failOver, message) => {
    const failure = classifySmtpError(error, context);
    expect(failure.code).toBe(code);
    expect(failure.failOver).toBe(failOver);
    expect(failure.message).toMatch(message);
  });

  it('never repeats a secret, raw or base64, that a server echoed', () => {
    const echoed = Buffer.from('\u0000mailer\u0000hunter2').toString('base64');
    const failure = classifySmtpError(
      { code: 'EAUTH', response: `535 bad credentials hunter2 ${echoed} ${btoa('hunter2')}` },
      { ...context, secrets: ['hunter2', '\u0000mailer\u0000hunter2'] },
    );
    expect(failure.message).not.toContain('hunter2');
    expect(failure.message).not.toContain(echoed);
    expect(failure.message).not.toContain(btoa('hunter2'));
    expect(failure.message).toContain('[REDACTED]');
  });

  it('never echoes a peer that is not an SMTP server (NATS INFO, a database greeting)', () => {
    for (const banner of [
      'INFO {"server_id":"NBANNERSECRET","version":"2.10.7","host":"0.0.0.0","port":4222}',
      'J\u0000\u0000\u0000\n5.5.5-10.11.6-MariaDB-BANNERSECRET\u0000',
      'SSH-2.0-OpenSSH_9.6 BANNERSECRET',
      '+OK BANNERSECRET POP3 ready',
    ]) {
      const failure = classifySmtpError(
        { code: 'EPROTOCOL', response: banner, message: `Invalid greeting. response=${banner}: ${banner}` },
        context,
      );
      expect(failure).toMatchObject({ code: SmtpFailureCode.ConnectionFailed, failOver: true });
      expect(failure.message).toContain('did not answer as an SMTP server');
      expect(failure.message).not.toContain('BANNERSECRET');
    }
    // An SMTP reply is still quoted: it is what an operator needs.
    const smtp = classifySmtpError(
      {
        code: 'EPROTOCOL',
        response: '554 5.7.1 no relay for you',
        message: 'Invalid greeting. response=554 5.7.1',
      },
      context,
    );
    expect(smtp.message).toContain('554 5.7.1 no relay for you');
  });

  it('quotes only printable US-ASCII of an SMTP reply: bytes after a valid reply code are not echoed', () => {
    const failure = classifySmtpError(
      { code: 'EPROTOCOL', response: '554 \u0000\u0001binary-SECRET\u00ff\u001b[31m', message: 'x' },
      context,
    );
    expect(failure.message).toBe('Connection to smtp.example.com:587 failed: 554 ??binary-SECRET??[31m.');
    // eslint-disable-next-line no-control-regex
    expect(failure.message).not.toMatch(/[\u0000-\u001f\u007f-\uffff]/);
  });

  it('never quotes the names of a certificate in a TLS failure', () => {
    const message =
      "Hostname/IP does not match certificate's altnames: Host: smtp.example.com. is not in the cert's altnames: " +
      'DNS:db01.internal.corp, DNS:vault.internal.corp';
    const failure = classifySmtpError(
      { code: 'ESOCKET', originalCode: 'ERR_TLS_CERT_ALTNAME_INVALID', message, reason: message },
      context,
    );
    expect(failure.code).toBe(SmtpFailureCode.TlsFailed);
    expect(failure.message).toContain('not valid for this host');
    expect(failure.message).not.toMatch(/DNS:|internal\.corp/);
    const other = classifySmtpError(
      { code: 'ESOCKET', originalCode: 'ERR_SSL_SOMETHING_NEW', message: 'DNS:db01.internal.corp' },
      context,
    );
    expect(other.message).toBe(
      'TLS failed with smtp.example.com:587: handshake failed (ERR_SSL_SOMETHING_NEW).',
    );
  });

  it('copes with things that are not errors', () => {
    expect(classifySmtpError('boom', context)).toMatchObject({ code: SmtpFailureCode.ConnectionFailed });
    expect(classifySmtpError(null, context)).toMatchObject({ code: SmtpFailureCode.ConnectionFailed });
  });
});

describe('scrubber', () => {
  it('bounds the length and flattens line breaks', () => {
    const scrub = scrubber([]);
    expect(scrub('a\r\nb')).toBe('a b');
    expect(scrub('x'.repeat(1000)).length).toBeLessThanOrEqual(301);
  });
});
