// What a verified access token's claims grant: the service's scopes and tenants, and who the caller is.
// Providers spell these differently (docs/security.md "Access tokens"): scopes in `scp` as a space-separated string
// (Entra ID delegated, Keycloak) or an array (Okta), in `scope` (RFC 8693 §4.2, RFC 9068 §2.2.3; Keycloak, Auth0), and
// in `roles` (Entra ID application roles, what client-credentials tokens carry). Framework-free: unit-tested beside.
import { SCOPES, type Scope } from './scopes.js';

export type Claims = Readonly<Record<string, unknown>>;

/** A claim holding a list: a JSON array of strings, or one string with the items separated by spaces. */
function listClaim(value: unknown): string[] {
  if (typeof value === 'string') return value.split(/\s+/).filter((item) => item !== '');
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string');
  return [];
}

/**
 * The service's scopes a token grants: the values of `scp`, `scope` and `roles` that name one (compared
 * case-insensitively), each behind `prefix` when one is configured. Values naming nothing here are ignored: the
 * same token may carry scopes of other APIs.
 */
export function scopesOfClaims(claims: Claims, prefix: string): Scope[] {
  const lowerPrefix = prefix.toLowerCase();
  const granted = new Set<Scope>();
  for (const value of [...listClaim(claims.scp), ...listClaim(claims.scope), ...listClaim(claims.roles)]) {
    const lower = value.toLowerCase();
    if (!lower.startsWith(lowerPrefix)) continue;
    const name = lower.slice(lowerPrefix.length);
    if ((SCOPES as readonly string[]).includes(name)) granted.add(name as Scope);
  }
  return SCOPES.filter((scope) => granted.has(scope));
}

/** The tenant claim's value meaning "every tenant" (like a key created without --domains). */
export const ALL_TENANTS = '*';

/**
 * The tenants a token may act for, from the configured claim (a string with items separated by spaces or commas,
 * or an array), lower-cased like `--domains`. Undefined (every tenant) when no claim is configured or the claim
 * holds `*`; a token without the claim acts for no tenant at all, so forgetting the claim's mapping at the
 * provider fails closed.
 */
export function tenantsOfClaims(claims: Claims, claim: string | undefined): string[] | undefined {
  if (claim === undefined) return undefined;
  const value = claims[claim];
  const items = (typeof value === 'string' ? value.split(/[\s,]+/) : listClaim(value))
    .map((item) => item.trim().toLowerCase())
    .filter((item) => item !== '');
  if (items.includes(ALL_TENANTS)) return undefined;
  return [...new Set(items)];
}

export interface TokenIdentity {
  issuer: string;
  subject?: string;
  /** `client_id` (RFC 9068, Okta) or `appid` (Entra ID v1 tokens). */
  clientId?: string;
  /** The authorised party (Entra ID v2, Keycloak): the client the token was issued to. */
  azp?: string;
}

function stringClaim(claims: Claims, name: string): string | undefined {
  const value = claims[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Who the token speaks for; undefined when it names neither a subject nor a client. */
export function identityOfClaims(claims: Claims): TokenIdentity | undefined {
  const issuer = stringClaim(claims, 'iss');
  if (issuer === undefined) return undefined;
  const identity: TokenIdentity = { issuer };
  const subject = stringClaim(claims, 'sub');
  const clientId = stringClaim(claims, 'client_id') ?? stringClaim(claims, 'appid');
  const azp = stringClaim(claims, 'azp');
  if (subject !== undefined) identity.subject = subject;
  if (clientId !== undefined) identity.clientId = clientId;
  if (azp !== undefined) identity.azp = azp;
  return (subject ?? clientId ?? azp) ? identity : undefined;
}

/** The caller id of a token principal: its rate-limit bucket and the actor the audit trail records. */
export function tokenKeyId(identity: TokenIdentity): string {
  return `token:${identity.issuer}#${identity.subject ?? identity.clientId ?? identity.azp ?? ''}`;
}
