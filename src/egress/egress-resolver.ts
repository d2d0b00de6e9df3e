// Turns a caller-supplied host into the one address to connect to: a literal is normalised and checked; a name is
// resolved once, every address it resolves to is checked, and the caller connects to the checked address (no
// second lookup, so a name that resolves differently a moment later — DNS rebinding — cannot slip through).
import { lookup as dnsLookup } from 'node:dns/promises';
import type { EgressPolicy } from './egress-policy.js';

export interface ResolvedAddress {
  address: string;
  family: number;
}

export type Lookup = (host: string) => Promise<ResolvedAddress[]>;

export const systemLookup: Lookup = (host) => dnsLookup(host, { all: true, verbatim: true });

export type Destination =
  /** Connect to `address`; present `servername` for TLS (SNI and certificate check) when the host is a name. */
  | { ok: true; address: string; servername: string | undefined }
  | { ok: false; refused: true; message: string }
  /** The name did not resolve (or not in time): `error` is what the resolver threw (code ENOTFOUND, …). */
  | { ok: false; refused: false; error: unknown };

export class EgressRefused extends Error {
  override name = 'EgressRefused';
}

export async function resolveDestination(
  policy: EgressPolicy,
  host: string,
  options: { timeoutMs: number; lookup?: Lookup },
): Promise<Destination> {
  const literal = policy.literalOf(host);
  if (literal !== null) {
    const verdict = policy.check(literal);
    return verdict.allowed
      ? { ok: true, address: verdict.address, servername: undefined }
      : { ok: false, refused: true, message: literalRefusal(host, verdict.address, verdict.reason) };
  }
  if (policy.nameDenied(host))
    return { ok: false, refused: true, message: `Host ${host} is refused by OUTBOUND_DENY.` };
  let addresses: ResolvedAddress[];
  let timer: NodeJS.Timeout | undefined;
  try {
    addresses = await Promise.race([
      (options.lookup ?? systemLookup)(host),
      new Promise<never>((_resolve, reject) => {
        timer = setTimeout(
          () => reject(Object.assign(new Error('DNS lookup timed out'), { code: 'EAI_AGAIN' })),
          options.timeoutMs,
        );
      }),
    ]);
  } catch (error) {
    return { ok: false, refused: false, error };
  } finally {
    clearTimeout(timer);
  }
  if (addresses.length === 0)
    return { ok: false, refused: false, error: Object.assign(new Error('no address'), { code: 'ENODATA' }) };
  const viaAllowedName = policy.nameAllowed(host);
  // Every address is checked: a name with one public and one loopback address is refused as a whole, so the
  // choice the resolver or a retry makes cannot matter.
  for (const { address } of addresses) {
    const verdict = policy.check(address, viaAllowedName);
    if (!verdict.allowed) return { ok: false, refused: true, message: refusal(host, verdict.reason) };
  }
  // IPv4 first, as nodemailer's own resolver does (resolve4, then resolve6): many hosts have no IPv6 route.
  const chosen = addresses.find((entry) => entry.family === 4) ?? addresses[0];
  return { ok: true, address: policy.literalOf(chosen.address) ?? chosen.address, servername: host };
}

/** A literal address, shown normalised (0x7f000001 → 127.0.0.1): it tells the caller nothing it did not send. */
function literalRefusal(host: string, address: string, reason: string): string {
  const shown = host === address ? host : `${host} (${address})`;
  return `Host ${shown} is not allowed: the address ${reason}.`;
}

/** A name: the address it resolved to is not shown, so refusals cannot map internal names to addresses. */
function refusal(host: string, reason: string): string {
  return `Host ${host} is not allowed: an address it resolves to ${reason}.`;
}
