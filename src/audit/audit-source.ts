// Who made a change, and from where: the actor and request facts every audit event carries. Built from the request
// by the controller (the `@AuditedBy()` parameter) and handed to the service explicitly, like the request's
// context (src/logging/request-context.ts explains why not AsyncLocalStorage). The CLI and the service itself
// act as named non-request actors.
import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { AuthenticatedRequest, Principal } from '../auth/principal.js';
import type { WithRequestContext } from '../logging/request-context.js';

export type ActorType = 'api-key' | 'env-key' | 'token' | 'cli' | 'system' | 'anonymous' | 'webhook';

export interface AuditActor {
  type: ActorType;
  /** API key id, `env:<16 hex of its hash>` (API_KEYS), or a token's `sub` (else `azp`, else `client_id`); null when nobody was identified. */
  id: string | null;
  name: string | null;
  /** A token's issuer (`iss`); null for keys. */
  issuer: string | null;
}

export interface AuditSource {
  actor: AuditActor;
  correlationId: string | null;
  clientAddress: string | null;
}

/**
 * The caller as the auth layer identified it. Token callers (OpenID Connect access tokens) carry `kind: 'token'`
 * and the token's claims; keys carry at most `kind`. Both shapes are read, so this works whichever auth code runs.
 */
type CallerPrincipal = Principal & {
  kind?: 'api-key' | 'env-key' | 'token';
  token?: { issuer: string; subject?: string; clientId?: string; azp?: string };
};

export function actorOf(principal: Principal | undefined): AuditActor {
  if (principal === undefined) return { type: 'anonymous', id: null, name: null, issuer: null };
  const caller = principal as CallerPrincipal;
  if (caller.token !== undefined) {
    const { issuer, subject, azp, clientId } = caller.token;
    return { type: 'token', id: subject ?? azp ?? clientId ?? caller.keyId, name: caller.name, issuer };
  }
  const envKey = caller.kind === 'env-key' || (caller.kind === undefined && caller.keyId.startsWith('env:'));
  return { type: envKey ? 'env-key' : 'api-key', id: caller.keyId, name: caller.name, issuer: null };
}

export function auditSourceOf(request: FastifyRequest): AuditSource {
  const context = (request as FastifyRequest & WithRequestContext).context;
  return {
    actor: actorOf((request as AuthenticatedRequest).principal),
    correlationId: context?.correlationId ?? String(request.id),
    clientAddress: request.ip ?? null,
  };
}

/** A maintenance command (`npm run cli -- <command>`): the operator at the machine, named by the OS user. */
export function cliSource(command: string): AuditSource {
  return {
    actor: { type: 'cli', id: command, name: process.env.USER ?? process.env.USERNAME ?? null, issuer: null },
    correlationId: null,
    clientAddress: null,
  };
}

/** The service acting on its own (e.g. migrations applied at start-up). */
export function systemSource(what: string): AuditSource {
  return {
    actor: { type: 'system', id: what, name: null, issuer: null },
    correlationId: null,
    clientAddress: null,
  };
}

/** A handler parameter: who is calling, for the audit trail. */
export const AuditedBy = createParamDecorator((_data: unknown, host: ExecutionContext): AuditSource =>
  auditSourceOf(host.switchToHttp().getRequest<FastifyRequest>()),
);
