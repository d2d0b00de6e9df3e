// RFC 1123 §2.1 host names (letters, digits and hyphens; labels of 1–63 characters; at most 253 in all) and IP
// literals (RFC 791 dotted quad, RFC 4291 §2.2 text form), as an SMTP configuration's Host accepts them.
// Numeric spellings the system resolver would also take (2130706433, 0x7f000001, 127.1, [::ffff:127.0.0.1]) are
// accepted and stored in canonical form, so the egress policy (src/egress/) judges the address they stand for.
import { isIPv4, isIPv6 } from 'node:net';
import { canonicalAddress, parseAddress } from '../../egress/egress-policy.js';

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;
const ALL_DIGITS_AND_DOTS = /^[0-9.]+$/;

export const MAX_HOST_LENGTH = 253;

export function isSmtpHost(value: string): boolean {
  const host = value.trim();
  if (host.length === 0 || host.length > MAX_HOST_LENGTH) return false;
  if (isIPv6(host) || parseAddress(host) !== null) return true;
  // "999.1.1.1" is a syntactically valid host name but certainly a mistyped address: judge it as one.
  if (ALL_DIGITS_AND_DOTS.test(host)) return isIPv4(host);
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  return name.split('.').every((label) => LABEL.test(label));
}

/**
 * The form a host is stored and compared in: host names are case-insensitive (RFC 4343) and a trailing dot names
 * the same host, so "SMTP.Example.com." and "smtp.example.com" are one configuration identity.
 */
export function normalizeSmtpHost(value: string): string {
  const host = value.trim().toLowerCase();
  const address = parseAddress(host);
  if (address !== null) return canonicalAddress(address);
  return host.endsWith('.') && !isIPv6(host) ? host.slice(0, -1) : host;
}
