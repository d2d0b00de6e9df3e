import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { canonicalAddress, EgressPolicy, parseAddress } from './egress-policy.js';
import { resolveDestination, type Lookup } from './egress-resolver.js';

const defaults = new EgressPolicy();
const allowed = (policy: EgressPolicy, address: string) => policy.check(address).allowed;

describe('EgressPolicy (defaults)', () => {
  it.each([
    // loopback
    ['127.0.0.1', false],
    ['127.255.255.254', false],
    ['::1', false],
    // unspecified
    ['0.0.0.0', false],
    ['0.1.2.3', false],
    ['::', false],
    // link-local, including the cloud metadata addresses
    ['169.254.169.254', false],
    ['169.254.0.1', false],
    ['fe80::1', false],
    ['febf:ffff::1', false],
    // cloud metadata services outside link-local; their neighbours stay open
    ['fd00:ec2::254', false],
    ['fd00:ec2::253', true],
    ['100.100.100.200', false],
    ['::ffff:100.100.100.200', false],
    ['100.64.0.1', true],
    // multicast, broadcast, reserved
    ['224.0.0.1', false],
    ['239.255.255.250', false],
    ['ff02::1', false],
    ['255.255.255.255', false],
    ['240.0.0.1', false],
    // IPv4-mapped / compatible / NAT64 / 6to4 forms of refused addresses
    ['::ffff:127.0.0.1', false],
    ['[::ffff:127.0.0.1]', false],
    ['::ffff:7f00:1', false],
    ['::ffff:169.254.169.254', false],
    ['::127.0.0.1', false],
    ['::0.0.0.1', false],
    ['64:ff9b::7f00:1', false],
    ['64:ff9b::a9fe:a9fe', false],
    ['2002:7f00:1::1', false],
    ['2002:a9fe:a9fe::', false],
    // numeric spellings of loopback
    ['2130706433', false],
    ['0x7f000001', false],
    ['0x7F.1', false],
    ['127.1', false],
    ['0177.0.0.1', false],
    ['017700000001', false],
    // ordinary unicast stays allowed (private ranges too, unless OUTBOUND_DENY closes them)
    ['192.0.2.25', true],
    ['8.8.8.8', true],
    ['10.1.2.3', true],
    ['172.16.0.1', true],
    ['192.168.1.1', true],
    ['2001:db8::25', true],
    ['::ffff:192.0.2.25', true],
    ['64:ff9b::c000:219', true],
    ['2002:c000:219::1', true],
    ['fe7f:ffff::1', true],
    ['fec0::1', true],
  ])('%s → allowed %s', (address, expected) => {
    expect(allowed(defaults, address)).toBe(expected);
  });

  it('names the range in the reason', () => {
    expect(defaults.check('169.254.169.254')).toMatchObject({
      allowed: false,
      reason: expect.stringContaining('link-local'),
    });
    expect(defaults.check('0x7f000001')).toMatchObject({
      allowed: false,
      address: '127.0.0.1',
      reason: expect.stringContaining('loopback'),
    });
    expect(defaults.check('::127.0.0.2')).toMatchObject({
      allowed: false,
      reason: expect.stringContaining('loopback'),
    });
  });

  it('a host name is not a literal; literals of every spelling are canonical', () => {
    expect(defaults.literalOf('smtp.example.com')).toBeNull();
    expect(defaults.literalOf('0x7f000001')).toBe('127.0.0.1');
    expect(defaults.literalOf('[2001:DB8::0:25]')).toBe('2001:db8::25');
    expect(defaults.literalOf('::ffff:10.0.0.1')).toBe('10.0.0.1');
  });
});

describe('EgressPolicy (OUTBOUND_ALLOW / OUTBOUND_DENY)', () => {
  const policy = new EgressPolicy({
    allow: ['127.0.0.1', '::1', 'relay.internal', '169.254.10.0/24'],
    deny: ['10.0.0.0/8', 'fd00::/8', 'db.internal', '169.254.10.5'],
  });

  it.each([
    ['127.0.0.1', true],
    ['2130706433', true],
    ['::ffff:127.0.0.1', true],
    ['127.0.0.2', false],
    ['::1', true],
    ['169.254.10.7', true],
    ['169.254.10.5', false], // OUTBOUND_DENY wins over OUTBOUND_ALLOW
    ['169.254.169.254', false],
    ['10.20.30.40', false],
    ['::ffff:10.0.0.1', false],
    ['64:ff9b::a00:1', false],
    ['fd12::1', false],
    ['192.0.2.25', true],
  ])('%s → allowed %s', (address, expected) => {
    expect(allowed(policy, address)).toBe(expected);
  });

  it('refuses bad entries, naming them', () => {
    expect(() => EgressPolicy.validateEntries(['10.0.0.0/33'])).toThrow('10.0.0.0/33');
    expect(() => EgressPolicy.validateEntries(['::/129'])).toThrow('::/129');
    expect(() => EgressPolicy.validateEntries(['no spaces please'])).toThrow('no spaces please');
    expect(() => EgressPolicy.validateEntries(['example.com/8'])).toThrow('example.com/8');
    expect(() =>
      EgressPolicy.validateEntries(['10.0.0.0/8', 'relay.example', '::ffff:127.0.0.0/104']),
    ).not.toThrow();
  });

  it('an IPv4-mapped CIDR is the IPv4 range it stands for', () => {
    const mapped = new EgressPolicy({ allow: ['::ffff:127.0.0.0/104'], deny: [] });
    expect(allowed(mapped, '127.9.9.9')).toBe(true);
    expect(allowed(mapped, '::1')).toBe(false);
  });

  describe('resolveDestination', () => {
    const lookupOf =
      (table: Record<string, string[]>): Lookup =>
      (host) => {
        const addresses = table[host];
        if (addresses === undefined)
          return Promise.reject(
            Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }),
          );
        return Promise.resolve(
          addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
        );
      };
    const lookup = lookupOf({
      'smtp.example.com': ['2001:db8::25', '192.0.2.25'],
      'v6only.example.com': ['2001:db8::26'],
      'rebind.example.com': ['192.0.2.26', '127.0.0.1'],
      'metadata.example.com': ['::ffff:169.254.169.254'],
      'relay.internal': ['127.0.0.5'],
      'db.internal': ['192.0.2.99'],
    });
    const resolve = (p: EgressPolicy, host: string) =>
      resolveDestination(p, host, { timeoutMs: 1000, lookup });

    it('connects to the first checked address and keeps the name for TLS', async () => {
      expect(await resolve(defaults, 'smtp.example.com')).toEqual({
        ok: true,
        address: '192.0.2.25',
        servername: 'smtp.example.com',
      });
    });

    it('prefers IPv4, and takes IPv6 when there is no IPv4 address', async () => {
      expect(await resolve(defaults, 'v6only.example.com')).toMatchObject({
        ok: true,
        address: '2001:db8::26',
      });
    });

    it('refuses a name when any of its addresses is refused', async () => {
      expect(await resolve(defaults, 'rebind.example.com')).toMatchObject({
        ok: false,
        refused: true,
        message:
          'Host rebind.example.com is not allowed: an address it resolves to is a loopback address (open it with OUTBOUND_ALLOW).',
      });
      expect(await resolve(defaults, 'metadata.example.com')).toMatchObject({ ok: false, refused: true });
    });

    it('refuses a refused literal without any look-up', async () => {
      const never: Lookup = () => Promise.reject(new Error('looked up'));
      expect(
        await resolveDestination(defaults, '0x7f000001', { timeoutMs: 1000, lookup: never }),
      ).toMatchObject({
        ok: false,
        refused: true,
        message:
          'Host 0x7f000001 (127.0.0.1) is not allowed: the address is a loopback address (open it with OUTBOUND_ALLOW).',
      });
    });

    it('an allowed name opens the default ranges for its addresses; a denied name is refused before resolving', async () => {
      expect(await resolve(policy, 'relay.internal')).toMatchObject({ ok: true, address: '127.0.0.5' });
      expect(await resolve(defaults, 'relay.internal')).toMatchObject({ ok: false, refused: true });
      expect(await resolve(policy, 'db.internal')).toMatchObject({ ok: false, refused: true });
    });

    it('reports a failed look-up as such, and one that takes too long', async () => {
      expect(await resolve(defaults, 'nowhere.example')).toMatchObject({
        ok: false,
        refused: false,
        error: expect.objectContaining({ code: 'ENOTFOUND' }),
      });
      const slow: Lookup = () => new Promise(() => undefined);
      expect(
        await resolveDestination(defaults, 'slow.example', { timeoutMs: 20, lookup: slow }),
      ).toMatchObject({
        ok: false,
        refused: false,
        error: expect.objectContaining({ code: 'EAI_AGAIN' }),
      });
    });
  });
});

describe('numeric forms (properties)', () => {
  const octets = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255));
  const asInt = ([a, b, c, d]: number[]) => ((a << 24) >>> 0) + (b << 16) + (c << 8) + d;
  const dotted = (o: number[]) => o.join('.');

  it('every spelling of an IPv4 address (decimal, hex, octal, short, mapped) gets the same verdict', () => {
    fc.assert(
      fc.property(octets, fc.boolean(), (o, loopback) => {
        const address = loopback ? [127, o[1], o[2], o[3]] : o;
        const n = asInt(address);
        const spellings = [
          String(n),
          `0x${n.toString(16)}`,
          `0X${n.toString(16).toUpperCase()}`,
          address.map((part) => `0${part.toString(8)}`).join('.'),
          `${address[0]}.${(address[1] << 16) + (address[2] << 8) + address[3]}`,
          `${address[0]}.${address[1]}.${(address[2] << 8) + address[3]}`,
          `::ffff:${dotted(address)}`,
          `[::ffff:${dotted(address)}]`,
        ];
        const expected = defaults.check(dotted(address));
        for (const spelling of spellings) {
          expect(parseAddress(spelling)).not.toBeNull();
          expect(canonicalAddress(parseAddress(spelling)!)).toBe(dotted(address));
          expect(defaults.check(spelling)).toEqual(expected);
        }
        if (loopback) expect(expected.allowed).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it('every address in a refused IPv4 range is refused in its IPv6 carrier forms too', () => {
    const refusedV4 = fc.oneof(
      fc.tuple(fc.constant(127), fc.nat(255), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(169), fc.constant(254), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(0), fc.nat(255), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.integer({ min: 224, max: 255 }), fc.nat(255), fc.nat(255), fc.nat(255)),
    );
    fc.assert(
      fc.property(refusedV4, (o) => {
        const hex = (a: number, b: number) => ((a << 8) + b).toString(16);
        const high = hex(o[0], o[1]);
        const low = hex(o[2], o[3]);
        for (const form of [
          dotted(o),
          `::ffff:${dotted(o)}`,
          `::ffff:${high}:${low}`,
          `64:ff9b::${high}:${low}`,
          `2002:${high}:${low}::1`,
        ]) {
          expect(defaults.check(form).allowed).toBe(false);
        }
      }),
      { numRuns: 500 },
    );
  });
});
