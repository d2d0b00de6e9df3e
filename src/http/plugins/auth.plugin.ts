// Authentication, tenants and the rate limit: each route gets the onRequest hook its access rule needs (after the
// correlation headers, so a 401/403 carries them) and, when it needs a key, the tenant check; a request no route
// matches is counted against its address.
import fp from 'fastify-plugin';
import type { FastifyPluginCallback } from 'fastify';
import { tenantHookFor, type ApiKeyAuthenticator } from '../../auth/api-key.auth.js';
import { accessRuleOf, ADMIN_ONLY, namesTenant, PUBLIC, type AccessRule } from '../../auth/scopes.js';
import type { AppConfig } from '../../config/config.js';
import { RateLimiter, sendTooManyRequests, type RateDecision } from '../../rate-limit/rate-limiter.js';
import { isDocsRoute } from '../security-headers.js';
import { appendRouteHooks } from './route-hooks.js';

export interface AuthOptions {
  config: AppConfig;
  authenticator: ApiKeyAuthenticator;
  rateLimiter: RateLimiter;
}

const auth: FastifyPluginCallback<AuthOptions> = (fastify, { config, authenticator, rateLimiter }, done) => {
  fastify.addHook('onRoute', (route) => {
    const rule = accessRuleOfRoute(route);
    const authenticate = authenticator.hookFor(rule);
    if (authenticate !== undefined) appendRouteHooks(route, 'onRequest', authenticate);
    const needsKey = !(rule.scope === 'public' || rule.publicWhen?.(config));
    if (needsKey) appendRouteHooks(route, 'preHandler', tenantHookFor(namesTenant(route.config)));
  });

  // Matched routes count requests in their auth hook, once the key is verified; unmatched ones by address.
  if (!rateLimiter.enabled) return done();
  fastify.addHook('onRequest', (request, reply, done) => {
    if (!request.is404) return done();
    const decision = rateLimiter.hit(RateLimiter.addressBucket(request.ip));
    const apply = (result: RateDecision): void => {
      if (result.allowed) done();
      else sendTooManyRequests(request, reply, result);
    };
    if (decision instanceof Promise) decision.then(apply, done);
    else apply(decision);
  });
  done();
};

export const authPlugin = fp(auth, {
  name: 'platform-auth',
  fastify: '5.x',
  dependencies: ['platform-correlation'],
});

/**
 * Who may call the route: its declared rule (auth/scopes.ts), else admin only. Routes added by plugins rather than
 * controllers are the documentation (Swagger UI) and CORS preflights, which are public.
 */
function accessRuleOfRoute(route: { config?: unknown; url: string; method: string | string[] }): AccessRule {
  const declared = accessRuleOf(route.config);
  if (declared !== undefined) return declared;
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  return isDocsRoute(route.url) || methods.every((method) => method === 'OPTIONS') ? PUBLIC : ADMIN_ONLY;
}
