// API-key authentication (DESIGN §2): `Authorization: Bearer <key>`, checked against the route's declared scope.
// A Fastify onRequest hook per route, made when the route is added (src/http/plugins/auth.plugin.ts), rather than a global Nest
// guard: public routes run no auth code at all, and a request without a valid key is refused before its body is
// read. Its errors go through Nest's error handler, so they leave in the same envelope (or SCIM's) as the rest.
import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { APP_CONFIG, type AppConfig } from '../config/config.js';
import { PlatformError, PlatformErrorCode } from '../errors/api-error.js';
import { RateLimiter, sendTooManyRequests, type RateDecision } from '../http/rate-limiter.js';
import { ApiKeysService, type Principal } from './api-keys.service.js';
import type { AccessRule, Scope } from './scopes.js';
import { tenantsOfRequest, tenantsRefused } from './tenant.js';
import { DEFAULT_TENANT } from '../common/dto/context.dto.js';

export interface AuthenticatedRequest extends FastifyRequest {
  principal?: Principal;
}

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
      if (!this.rateLimiter.enabled) return undefined;
      return (request, reply, done) => {
        const token = bearerToken(request.headers.authorization);
        if (token === undefined) return this.limit(addressOf(request), request, reply, done, () => done());
        this.keys.verify(token).then((principal) => {
          const bucket = principal ? RateLimiter.keyBucket(principal.keyId) : addressOf(request);
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
    const refuse = (message: string): void =>
      this.limit(addressOf(request), request, reply, done, () =>
        done(new PlatformError(PlatformErrorCode.Unauthorized, message)),
      );
    if (token === undefined) return refuse('An API key is required: send Authorization: Bearer <key>.');
    this.keys.verify(token).then((principal) => {
      if (principal === undefined) return refuse('The API key is not valid or has been revoked.');
      this.limit(RateLimiter.keyBucket(principal.keyId), request, reply, done, () => {
        if (!principal.scopes.includes('admin') && !principal.scopes.includes(scope)) {
          return done(
            new PlatformError(PlatformErrorCode.Forbidden, `This API key lacks the "${scope}" scope.`),
          );
        }
        request.principal = principal;
        done();
      });
    }, done);
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
        `This API key is bound to other tenants; it may not act for ${refused.map((tenant) => `"${tenant}"`).join(', ')}.`,
      ),
    );
  };
}

function addressOf(request: FastifyRequest): string {
  return RateLimiter.addressBucket(request.ip);
}
