// API-key authentication: `Authorization: Bearer <key>`, checked against the route's declared scope.
// With OIDC_ISSUER set, a bearer shaped like a JWT is an access token instead (access-tokens.service.ts): both end
// as one Principal, so scopes, tenants and the rate limit apply alike.
// A Fastify onRequest hook per route, made when the route is added (src/http/plugins/auth.plugin.ts), rather than a global Nest
// guard: public routes run no auth code at all, and a request without a valid key is refused before its body is
// read. Its errors go through Nest's error handler, so they leave in the same envelope (or SCIM's) as the rest.
import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { APP_CONFIG, type AppConfig } from '../config/config.js';
import { PlatformError, PlatformErrorCode } from '../errors/api-error.js';
import { RateLimiter, sendTooManyRequests, type RateDecision } from '../rate-limit/rate-limiter.js';
import { AccessTokensService, type TokenVerdict } from './access-tokens.service.js';
import { ApiKeysService } from './api-keys.service.js';
import { IssuerUnavailableError } from './issuer-keys.js';
import type { AuthenticatedRequest, Principal } from './principal.js';
import type { AccessRule, Scope } from './scopes.js';
import { tenantsOfRequest, tenantsRefused } from './tenant.js';
import { DEFAULT_TENANT } from '../common/dto/context.dto.js';

export type AuthHook = (
  request: AuthenticatedRequest,
  reply: FastifyReply,
  done: (error?: Error) => void,
) => void;

export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

@Injectable()
export class ApiKeyAuthenticator {
  constructor(
    private readonly keys: ApiKeysService,
    private readonly tokens: AccessTokensService,
    private readonly rateLimiter: RateLimiter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * The onRequest hook a route with this rule needs: authentication and the rate limit, or on a route open to
   * everyone the rate limit alone (by key when a valid one is sent, else by address); undefined when there is
   * nothing to do.
   */
  hookFor(rule: AccessRule): AuthHook | undefined {
    if (rule.scope === 'public' || rule.publicWhen?.(this.config)) {
      // An operation that is public only by configuration (operation 1) takes no key, but a key that IS sent
      // must be valid: a client with a wrong or revoked key learns it (401) instead of being served anonymously.
      const refuseUnknown = rule.scope !== 'public';
      if (!this.rateLimiter.enabled && !refuseUnknown) return undefined;
      return (request, reply, done) => {
        const token = bearerToken(request.headers.authorization);
        if (token === undefined) return this.limit(addressOf(request), request, reply, done, () => done());
        // A public route needs no credential; one that cannot be checked just counts against the address — unless
        // the route is public only by configuration, where a credential that is sent must be valid.
        const verdict = this.verify(token).catch((): TokenVerdict => ({ refused: '' }));
        verdict.then((result) => {
          if ('refused' in result && refuseUnknown)
            return this.limit(addressOf(request), request, reply, done, () => {
              const message = result.refused || 'The API key or access token could not be checked.';
              reply.header('WWW-Authenticate', invalidTokenChallenge(message));
              done(new PlatformError(PlatformErrorCode.Unauthorized, message));
            });
          const bucket =
            'principal' in result ? RateLimiter.keyBucket(result.principal.keyId) : addressOf(request);
          this.limit(bucket, request, reply, done, () => done());
        }, done);
      };
    }
    const scope = rule.scope;
    return (request, reply, done) => this.authenticate(request, reply, scope, done);
  }

  private authenticate(
    request: AuthenticatedRequest,
    reply: FastifyReply,
    scope: Scope,
    done: (error?: Error) => void,
  ): void {
    const token = bearerToken(request.headers.authorization);
    // A request without a valid key is counted against its address, so guessing keys is throttled too.
    const refuse = (message: string, challenge: string): void =>
      this.limit(addressOf(request), request, reply, done, () => {
        reply.header('WWW-Authenticate', challenge);
        done(new PlatformError(PlatformErrorCode.Unauthorized, message));
      });
    if (token === undefined)
      return refuse('An API key or access token is required: send Authorization: Bearer <key>.', 'Bearer');
    this.verify(token).then(
      (verdict) => {
        if ('refused' in verdict) return refuse(verdict.refused, invalidTokenChallenge(verdict.refused));
        const principal = verdict.principal;
        this.limit(RateLimiter.keyBucket(principal.keyId), request, reply, done, () => {
          // Known before the scope check, so that a 403 names its caller in the audit trail.
          request.principal = principal;
          if (!principal.scopes.includes('admin') && !principal.scopes.includes(scope)) {
            reply.header(
              'WWW-Authenticate',
              insufficientScopeChallenge(this.scopeAsGranted(principal, scope)),
            );
            return done(
              new PlatformError(
                PlatformErrorCode.Forbidden,
                `${callerNoun(principal)} lacks the "${scope}" scope.`,
              ),
            );
          }
          done();
        });
      },
      (error: unknown) =>
        done(error instanceof IssuerUnavailableError ? issuerUnavailable(request, error) : (error as Error)),
    );
  }

  /** The scope's name as the caller's credential carries it: behind OIDC_SCOPE_PREFIX for an access token. */
  private scopeAsGranted(principal: Principal, scope: Scope): string {
    return principal.kind === 'token' ? `${this.config.oidc?.scopePrefix ?? ''}${scope}` : scope;
  }

  /** An access token when OIDC is configured and the bearer is shaped like one; an API key otherwise. */
  private async verify(bearer: string): Promise<TokenVerdict> {
    if (this.tokens.handles(bearer)) return this.tokens.verify(bearer);
    const principal = await this.keys.verify(bearer);
    return principal ? { principal } : { refused: 'The API key is not valid or has been revoked.' };
  }

  /** Counts the request in `bucket`; over the limit it is answered 429 here, otherwise `next` runs. */
  private limit(
    bucket: string,
    request: AuthenticatedRequest,
    reply: FastifyReply,
    done: (error?: Error) => void,
    next: () => void,
  ): void {
    if (!this.rateLimiter.enabled) return next();
    const decision = this.rateLimiter.hit(bucket);
    const apply = (result: RateDecision): void => {
      if (result.allowed) next();
      else sendTooManyRequests(request, reply, result);
    };
    if (decision instanceof Promise) decision.then(apply, done);
    else apply(decision);
  }
}

/**
 * The preHandler of every route that needs a key: a tenant-bound key acts only for its tenants (auth/tenant.ts).
 * Runs once the body is parsed, before the handler; keys without `--domains` pass. On a route that names no tenant
 * (see NamesTenant) the request acts for `default`, whatever its query or body says.
 */
export function tenantHookFor(routeNamesTenant: boolean) {
  return (request: AuthenticatedRequest, _reply: FastifyReply, done: (error?: Error) => void): void => {
    const allowed = request.principal?.domains;
    if (allowed === undefined) return done();
    const tenants = routeNamesTenant
      ? tenantsOfRequest(request.params, request.query, request.body)
      : [DEFAULT_TENANT];
    const refused = tenantsRefused(allowed, tenants);
    if (refused.length === 0) return done();
    done(
      new PlatformError(
        PlatformErrorCode.Forbidden,
        `${callerNoun(request.principal)} is bound to other tenants; it may not act for ${refused.map((tenant) => `"${tenant}"`).join(', ')}.`,
      ),
    );
  };
}

function callerNoun(principal: Principal | undefined): string {
  return principal?.kind === 'token' ? 'This access token' : 'This API key';
}

/**
 * RFC 6750 §3: a refused credential is `invalid_token`, its description limited to the characters the header's
 * quoted string allows.
 */
export function invalidTokenChallenge(description: string): string {
  return `Bearer error="invalid_token", error_description="${quotable(description)}"`;
}

/**
 * RFC 6750 §3.1: a valid credential without the scope an operation needs is `insufficient_scope`, naming the scope
 * (a key or token with `admin` would do too). A 403 for another reason (a tenant-bound caller) carries no challenge.
 */
export function insufficientScopeChallenge(scope: string): string {
  return `Bearer error="insufficient_scope", scope="${quotable(scope)}"`;
}

/** Text the challenge's quoted strings may hold: printable US-ASCII without quotes or backslashes. */
function quotable(text: string): string {
  return text.replace(/["\\]/g, "'").replace(/[^\x20-\x7e]/g, '');
}

/** The issuer is down and the token needs a key not cached: not the caller's fault, so 503 + Retry-After. */
function issuerUnavailable(request: FastifyRequest, error: IssuerUnavailableError): PlatformError {
  request.log.warn({ reason: error.message }, 'Access token refused for now: the issuer cannot be reached');
  return new PlatformError(
    PlatformErrorCode.ServiceUnavailable,
    "The access token's signing key cannot be fetched from its issuer right now; retry after Retry-After.",
  );
}

function addressOf(request: FastifyRequest): string {
  return RateLimiter.addressBucket(request.ip);
}
