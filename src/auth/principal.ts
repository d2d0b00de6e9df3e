// Who is calling: what authentication (api-key.auth.ts) puts on a request and what the audit trail records as
// the actor. Its own file so auth's services and the audit trail both import it without importing each other.
import type { FastifyRequest } from 'fastify';
import type { Scope } from './scopes.js';

/** The caller, whichever way it came in: a stored API key, an API_KEYS key, or an access token. */
export interface Principal {
  /** The key's id, `env:<first 16 hex of its SHA-256>` for API_KEYS, `token:<issuer>#<sub or client id>` for a token: the rate-limit bucket. */
  keyId: string;
  name: string;
  scopes: readonly Scope[];
  /** The tenants a tenant-bound key may act for; undefined = every tenant. */
  domains?: readonly string[];
  kind?: 'api-key' | 'env-key' | 'token';
  /** Who a token speaks for (kind 'token'). */
  token?: { issuer: string; subject?: string; clientId?: string; azp?: string };
}

export interface AuthenticatedRequest extends FastifyRequest {
  principal?: Principal;
}
