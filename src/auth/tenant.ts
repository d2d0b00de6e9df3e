// Tenant-bound API keys (docs/security.md): the tenants a request acts for, read the same way for every route
// in one place, so a new route cannot forget the check. A request names its tenant by the `{domain}` path segment
// (webhook read routes), the `Domain` query parameter (listings) or `Context.Domain` in its JSON body (mail,
// migrations); names match case-insensitively. A request that names none acts for the tenant `default`.
import { DEFAULT_TENANT } from '../common/dto/context.dto.js';

/** Every tenant a request names (lower-cased), or [`default`] when it names none. */
export function tenantsOfRequest(params: unknown, query: unknown, body: unknown): string[] {
  const named = [
    valueOf(params, 'domain'),
    valueOf(query, 'domain'),
    valueOf(valueOf(body, 'context'), 'domain'),
  ].filter((value): value is string => typeof value === 'string' && value.trim() !== '');
  return named.length === 0
    ? [DEFAULT_TENANT]
    : [...new Set(named.map((value) => value.trim().toLowerCase()))];
}

/** The tenants of `tenants` a key bound to `allowed` may not act for (none when the key is not bound). */
export function tenantsRefused(allowed: readonly string[] | undefined, tenants: readonly string[]): string[] {
  if (allowed === undefined) return [];
  return tenants.filter((tenant) => !allowed.includes(tenant));
}

/** `--domains a,b` as stored: trimmed, lower-cased, unique; each a DNS-like name as tenants are. */
export function parseDomains(text: string): string[] {
  const domains = [
    ...new Set(
      text
        .split(',')
        .map((domain) => domain.trim().toLowerCase())
        .filter((domain) => domain !== ''),
    ),
  ];
  if (domains.length === 0) throw new Error('--domains needs at least one domain');
  const bad = domains.filter((domain) => !/^[a-z0-9](?:[a-z0-9._-]{0,251}[a-z0-9])?$/.test(domain));
  if (bad.length > 0) throw new Error(`Invalid domain(s): ${bad.join(', ')}`);
  if (domains.join(',').length > 2000) throw new Error('--domains is longer than 2000 characters');
  return domains;
}

/** A property of a JSON object or query/params object, matched case-insensitively like all JSON keys. */
function valueOf(source: unknown, name: string): unknown {
  if (source === null || typeof source !== 'object' || Array.isArray(source)) return undefined;
  const record = source as Record<string, unknown>;
  if (name in record) return record[name];
  const key = Object.keys(record).find((candidate) => candidate.toLowerCase() === name);
  return key === undefined ? undefined : record[key];
}
