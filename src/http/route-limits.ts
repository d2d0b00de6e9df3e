// Per-route exceptions to the global limits, declared on the route: a larger body (operation 1 takes 50,000 ids,
// ~2 MB) or a longer time-out (changeSetState may wait for replication). Nest's FastifyAdapter passes @RouteConfig
// into the route's `config` only: configureHttp reads the mark there (onRoute for the body limit, the request
// deadline in onRequest for the time-out).
import { RouteConfig } from '@nestjs/platform-fastify';

export interface RouteLimitsOptions {
  /** Largest body this route takes (never less than BODY_LIMIT). */
  bodyLimit?: number;
  /** Added to REQUEST_TIMEOUT_MS for this route. */
  extraTimeoutMs?: number;
}

export const ROUTE_LIMITS = 'platformRouteLimits';

export const RouteLimits = (limits: RouteLimitsOptions): MethodDecorator =>
  RouteConfig({ [ROUTE_LIMITS]: limits });

export function routeLimitsOf(config: unknown): RouteLimitsOptions | undefined {
  return (config as Record<string, RouteLimitsOptions | undefined> | undefined)?.[ROUTE_LIMITS];
}
