// API-key authentication (DESIGN §2): `Authorization: Bearer <key>`, checked against the route's declared scope.
// A Fastify onRequest hook per route, made when the route is added (configure-http.ts), rather than a global Nest
// guard: public routes run no auth code at all, and a request without a valid key is refused before its body is
// read. Its errors go through Nest's error handler, so they leave in the same envelope (or SCIM's) as the rest.
import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { APP_CONFIG, type AppConfig } from '../config/config.js';
import { PlatformError, PlatformErrorCode } from '../errors/api-error.js';
import { RateLimiter } from '../http/rate-limiter.js';
import { ApiKeysService, type Principal } from './api-keys.service.js';
import type { AccessRule, Scope } from './scopes.js';

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

  /** The onRequest hook a route with this rule needs, or undefined when the route is open to everyone. */
  hookFor(rule: AccessRule): AuthHook | undefined {
    if (rule.scope === 'public' || rule.publicWhen?.(this.config)) return undefined;
    const scope = rule.scope;
    return (request, _reply, done) => {
      this.authenticate(request, scope).then(() => done(), done);
    };
  }

  private async authenticate(request: AuthenticatedRequest, scope: Scope): Promise<void> {
    const token = bearerToken(request.headers.authorization);
    if (token === undefined) {
      throw new PlatformError(
        PlatformErrorCode.Unauthorized,
        'An API key is required: send Authorization: Bearer <key>.',
      );
    }
    const principal = await this.keys.verify(token);
    if (principal === undefined) {
      // Guessing keys costs the caller's address its rate-limit budget too.
      this.rateLimiter.penalize(request.ip);
      throw new PlatformError(
        PlatformErrorCode.Unauthorized,
        'The API key is not valid or has been revoked.',
      );
    }
    if (!principal.scopes.includes('admin') && !principal.scopes.includes(scope)) {
      throw new PlatformError(PlatformErrorCode.Forbidden, `This API key lacks the "${scope}" scope.`);
    }
    request.principal = principal;
  }
}
