// Global guard: every route is admin-only unless it declares otherwise with @RequireScope or @Public.
import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { APP_CONFIG, type AppConfig } from '../config/config.js';
import { PlatformError, PlatformErrorCode } from '../errors/api-error.js';
import { RateLimiter } from '../http/rate-limiter.js';
import { ApiKeysService, type Principal } from './api-keys.service.js';
import { ACCESS_RULE, type AccessRule, type Scope } from './scopes.js';

const ADMIN_ONLY: AccessRule = { scope: 'admin' };

export interface AuthenticatedRequest extends FastifyRequest {
  principal?: Principal;
}

export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

@Injectable()
export class ApiKeyGuard implements CanActivate {
  /** The rule of each handler, looked up once: route metadata never changes after start. */
  private readonly rules = new WeakMap<object, AccessRule>();

  constructor(
    private readonly reflector: Reflector,
    private readonly keys: ApiKeysService,
    private readonly rateLimiter: RateLimiter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const handler = context.getHandler();
    let rule = this.rules.get(handler);
    if (rule === undefined) {
      rule =
        this.reflector.getAllAndOverride<AccessRule | undefined>(ACCESS_RULE, [
          handler,
          context.getClass(),
        ]) ?? ADMIN_ONLY;
      this.rules.set(handler, rule);
    }
    // Public routes answer synchronously: no promise on the hot path of operation 1.
    if (rule.scope === 'public' || rule.publicWhen?.(this.config)) return true;
    return this.authenticate(context, rule.scope);
  }

  private async authenticate(context: ExecutionContext, scope: Scope): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
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
    return true;
  }
}
