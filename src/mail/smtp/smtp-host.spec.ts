import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { isSmtpHost, normalizeSmtpHost } from './smtp-host.js';

describe('isSmtpHost', () => {
  it.each([
    ['smtp.example.com', true],
    ['localhost', true],
    ['mail-1.eu.example.org', true],
    ['SMTP.Example.COM.', true],
    ['127.0.0.1', true],
    ['::1', true],
    ['2001:db8::25', true],
    ['xn--bcher-kva.example', true],
    ['', false],
    ['   ', false],
    ['smtp example.com', false],
    ['-smtp.example.com', false],
    ['smtp-.example.com', false],
    ['smtp..example.com', false],
    ['smtp_relay.example.com', false],
    ['999.1.1.1', false],
    ['1.2.3', true],
    ['2130706433', true],
    ['0x7f000001', true],
    ['[::ffff:127.0.0.1]', true],
    ['4294967296', false],
    ['smtp.example.com:25', false],
    ['smtp.example.com\r\nRCPT TO:<x@y.z>', false],
    [`${'a'.repeat(64)}.example.com`, false],
    [`${'a.'.repeat(127)}a`, false],
  ])('%j → %s', (host, expected) => {
    expect(isSmtpHost(host)).toBe(expected);
  });

  it('accepts every name built from valid labels within 253 characters (property)', () => {
    const label = fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,20}[a-z0-9])?$/);
    fc.assert(
      fc.property(fc.array(label, { minLength: 1, maxLength: 8 }), (labels) => {
        const host = labels.join('.');
        fc.pre(!/^[0-9.]+$/.test(host));
        expect(isSmtpHost(host)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});

describe('normalizeSmtpHost', () => {
  it('lower-cases, trims and drops the root dot so equal hosts share one identity', () => {
    expect(normalizeSmtpHost(' SMTP.Example.com. ')).toBe('smtp.example.com');
    expect(normalizeSmtpHost('127.0.0.1')).toBe('127.0.0.1');
    expect(normalizeSmtpHost('2001:DB8::25')).toBe('2001:db8::25');
    // Numeric spellings are stored as the address they stand for (the egress policy judges that address).
    expect(normalizeSmtpHost('2130706433')).toBe('127.0.0.1');
    expect(normalizeSmtpHost('0x7F000001')).toBe('127.0.0.1');
    expect(normalizeSmtpHost('127.1')).toBe('127.0.0.1');
    expect(normalizeSmtpHost('[::FFFF:127.0.0.1]')).toBe('127.0.0.1');
    expect(normalizeSmtpHost('[2001:db8::25]')).toBe('2001:db8::25');
  });
});
