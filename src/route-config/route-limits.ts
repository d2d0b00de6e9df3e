// Per-route exceptions to the global settings, declared on the route: a larger body (operation 1 takes 50,000 ids,
// ~2 MB), a longer time-out (changeSetState may wait for replication), the exact bytes of the body kept beside
// the parsed one (the device webhook verifies an HTTP signature over them), or a text body type besides JSON (the
// iCalendar import takes text/calendar). Kept in the route's Fastify config
// (route-config.ts): configureHttp reads it there when the route is added.
import type { FastifyRequest } from 'fastify';
import { mergeRouteConfig } from './route-config.js';

export interface RouteLimitsOptions {
  /** Largest body this route takes (never less than BODY_LIMIT). */
  bodyLimit?: number;
  /** Added to REQUEST_TIMEOUT_MS for this route. */
  extraTimeoutMs?: number;
  /**
   * Long work (an import, a whole export): runs only while one of LONG_WORK_CONCURRENCY places of the instance is
   * free, else 503 Overloaded with Retry-After before the body is read (src/http/plugins/long-work.plugin.ts).
   */
  longWork?: boolean;
  /** Keep the body's bytes as received in `request.rawBody` (a Buffer), beside the parsed body. */
  rawBody?: boolean;
  /**
   * Text media types this route takes besides JSON (e.g. `text/calendar`), handed to it as a string; other routes
   * answer 415 for them.
   */
  textBodies?: readonly string[];
  /**
   * Checks the body as its chunks arrive, before it is collected (the iCalendar import measures its lines):
   * `check` throws to refuse the request at that chunk; the rest of the body is then read and discarded unkept.
   * Returns undefined when this request's body is not checked so.
   */
  bodyCheck?: (request: FastifyRequest) => ((chunk: Buffer) => void) | undefined;
}

export const ROUTE_LIMITS = 'platformRouteLimits';

export const RouteLimits =
  (limits: RouteLimitsOptions): MethodDecorator =>
  (_target, _key, descriptor) =>
    mergeRouteConfig(descriptor.value as (...args: never[]) => unknown, { [ROUTE_LIMITS]: limits });

export function routeLimitsOf(config: unknown): RouteLimitsOptions | undefined {
  return (config as Record<string, RouteLimitsOptions | undefined> | undefined)?.[ROUTE_LIMITS];
}
