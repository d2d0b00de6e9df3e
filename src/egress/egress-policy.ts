// The egress policy for every destination a caller supplies (today an SMTP configuration's Host): which addresses
// the service may connect to on a caller's behalf. Addresses are normalised with ipaddr.js (2130706433,
// 0x7f000001, 127.1, 0177.0.0.1 and [::ffff:127.0.0.1] all become 127.0.0.1) and IPv6 forms that carry an IPv4
// address (mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16) are judged by that
// IPv4 address; the ranges themselves live in node:net BlockLists. Destinations the operator configures
// (DATABASE_URL, SmartThings URLs) are not subject to it.
import { BlockList, isIPv4 } from 'node:net';
import ipaddr from 'ipaddr.js';

export interface EgressRules {
  /** CIDRs (or single addresses) and host names an operator opens (OUTBOUND_ALLOW). */
  allow: readonly string[];
  /** CIDRs (or single addresses) and host names an operator closes besides the default ranges (OUTBOUND_DENY). */
  deny: readonly string[];
}

/**
 * Refused unless OUTBOUND_ALLOW opens them: the service's own host, link-local (most clouds' metadata service),
 * non-unicast, and the cloud metadata addresses outside link-local (AWS's IPv6 endpoint, Alibaba Cloud's).
 */
export const DEFAULT_DENIED: ReadonlyArray<{ cidr: string; what: string }> = [
  { cidr: '127.0.0.0/8', what: 'loopback' },
  { cidr: '0.0.0.0/8', what: 'unspecified' },
  { cidr: '169.254.0.0/16', what: 'link-local' },
  { cidr: '224.0.0.0/4', what: 'multicast' },
  { cidr: '240.0.0.0/4', what: 'reserved' },
  { cidr: '255.255.255.255/32', what: 'broadcast' },
  { cidr: '::1/128', what: 'loopback' },
  { cidr: '::/128', what: 'unspecified' },
  { cidr: 'fe80::/10', what: 'link-local' },
  { cidr: 'ff00::/8', what: 'multicast' },
  { cidr: 'fd00:ec2::254/128', what: 'cloud metadata (AWS IPv6)' },
  { cidr: '100.100.100.200/32', what: 'cloud metadata (Alibaba Cloud)' },
];

export type EgressVerdict =
  { allowed: true; address: string } | { allowed: false; address: string; reason: string };

/** A literal address in any form ipaddr.js accepts, with IPv6 brackets; null for a host name. */
export function parseAddress(value: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  let text = value.trim();
  if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1);
  // A zone index (fe80::1%eth0) names an interface; the address is what is judged.
  const zone = text.indexOf('%');
  if (zone > 0 && text.includes(':')) text = text.slice(0, zone);
  if (!ipaddr.isValid(text)) return null;
  try {
    return ipaddr.parse(text);
  } catch {
    return null;
  }
}

/**
 * The address a connection actually reaches, canonical: dotted IPv4 for every IPv4 spelling and for IPv4-mapped
 * IPv6 (::ffff:a.b.c.d is that IPv4 address on a dual-stack socket), otherwise RFC 5952 IPv6 text.
 */
export function canonicalAddress(address: ipaddr.IPv4 | ipaddr.IPv6): string {
  if (address.kind() === 'ipv4') return address.toString();
  const v6 = address as ipaddr.IPv6;
  return v6.isIPv4MappedAddress() ? v6.toIPv4Address().toString() : v6.toString();
}

/** The IPv4 address an IPv6 address carries to (compatible ::a.b.c.d, NAT64 64:ff9b::/96, 6to4), if any. */
export function embeddedIPv4(address: string): string | null {
  if (isIPv4(address)) return null;
  let parts: number[];
  try {
    parts = ipaddr.IPv6.parse(address).parts;
  } catch {
    return null;
  }
  const v4 = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
  const zero = (from: number, to: number) => parts.slice(from, to).every((part) => part === 0);
  // ::a.b.c.d (compatible, deprecated by RFC 4291 but still routed by some stacks); :: and ::1 are judged as IPv6.
  if (zero(0, 6)) return parts[6] === 0 && parts[7] <= 1 ? null : v4(parts[6], parts[7]);
  // NAT64 well-known prefix (RFC 6052): a translator connects to the embedded address.
  if (parts[0] === 0x64 && parts[1] === 0xff9b && zero(2, 6)) return v4(parts[6], parts[7]);
  // 6to4 (RFC 3056): 2002:AABB:CCDD::/48 is relayed to AA.BB.CC.DD.
  if (parts[0] === 0x2002) return v4(parts[1], parts[2]);
  return null;
}

interface RangeSet {
  blocks: BlockList;
  labels: Array<{ block: BlockList; what: string }>;
  names: Set<string>;
}

function normalizeName(name: string): string {
  const lower = name.trim().toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

const HOST_NAME =
  /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/** Throws an Error naming the bad entry; config.ts turns it into a ConfigError naming the variable. */
function rangeSet(entries: readonly string[]): RangeSet {
  const set: RangeSet = { blocks: new BlockList(), labels: [], names: new Set() };
  for (const raw of entries) {
    const entry = raw.trim();
    if (entry === '') continue;
    const slash = entry.lastIndexOf('/');
    const addressText = slash >= 0 ? entry.slice(0, slash) : entry;
    const address = parseAddress(addressText);
    if (address !== null) {
      const canonical = canonicalAddress(address);
      const family = isIPv4(canonical) ? 'ipv4' : 'ipv6';
      const max = family === 'ipv4' ? 32 : 128;
      const prefixText = slash >= 0 ? entry.slice(slash + 1) : String(max);
      const prefix = /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
      // An IPv4-mapped CIDR (::ffff:127.0.0.0/104) is the IPv4 range it stands for.
      const embeddedPrefix = family === 'ipv4' && address.kind() === 'ipv6' ? prefix - 96 : prefix;
      if (!Number.isInteger(embeddedPrefix) || embeddedPrefix < 0 || embeddedPrefix > max)
        throw new Error(`"${entry}" has a prefix length outside 0–${max}`);
      set.blocks.addSubnet(canonical, embeddedPrefix, family);
      continue;
    }
    if (slash >= 0 || !HOST_NAME.test(entry))
      throw new Error(`"${entry}" is neither a CIDR, an IP address nor a host name`);
    set.names.add(normalizeName(entry));
  }
  return set;
}

/** Compiled once from the configuration; every check is a few BlockList look-ups. */
export class EgressPolicy {
  private readonly defaults: Array<{ block: BlockList; what: string }>;
  private readonly allow: RangeSet;
  private readonly deny: RangeSet;

  constructor(rules: EgressRules = { allow: [], deny: [] }) {
    this.defaults = DEFAULT_DENIED.map(({ cidr, what }) => {
      const block = new BlockList();
      const [network, prefix] = cidr.split('/');
      block.addSubnet(network, Number(prefix), isIPv4(network) ? 'ipv4' : 'ipv6');
      return { block, what };
    });
    this.allow = rangeSet(rules.allow);
    this.deny = rangeSet(rules.deny);
  }

  /** Validates OUTBOUND_ALLOW / OUTBOUND_DENY entries; the message names the first bad one. */
  static validateEntries(entries: readonly string[]): void {
    rangeSet(entries);
  }

  /** A literal address of a Host (any numeric spelling), canonical; null when the host is a name. */
  literalOf(host: string): string | null {
    const address = parseAddress(host);
    return address === null ? null : canonicalAddress(address);
  }

  /** The verdict for a name before resolving it: only OUTBOUND_DENY names refuse outright. */
  nameDenied(name: string): boolean {
    return this.deny.names.has(normalizeName(name));
  }

  nameAllowed(name: string): boolean {
    return this.allow.names.has(normalizeName(name));
  }

  /**
   * The verdict for one address (any spelling). `viaAllowedName`: the address came from resolving a host name the
   * operator allowed, which opens the default ranges (not OUTBOUND_DENY) for it.
   */
  check(addressText: string, viaAllowedName = false): EgressVerdict {
    const parsed = parseAddress(addressText);
    if (parsed === null) return { allowed: false, address: addressText, reason: 'is not an IP address' };
    const address = canonicalAddress(parsed);
    const family = isIPv4(address) ? 'ipv4' : 'ipv6';
    if (this.deny.blocks.check(address, family))
      return { allowed: false, address, reason: 'is in a range OUTBOUND_DENY refuses' };
    if (viaAllowedName || this.allow.blocks.check(address, family)) return { allowed: true, address };
    // An IPv6 form that reaches an IPv4 address is judged by that address too (::127.0.0.1, 64:ff9b::7f00:1).
    const embedded = embeddedIPv4(address);
    if (embedded !== null) {
      const inner = this.check(embedded);
      if (!inner.allowed)
        return { allowed: false, address, reason: `embeds ${embedded}, which ${inner.reason}` };
    }
    const hit = this.defaults.find(({ block }) => block.check(address, family));
    if (hit !== undefined)
      return { allowed: false, address, reason: `is a ${hit.what} address (open it with OUTBOUND_ALLOW)` };
    return { allowed: true, address };
  }
}
