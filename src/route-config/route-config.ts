// Per-route settings that Fastify needs when the route is added (the plugins in src/http/plugins/ read them in onRoute): Nest's
// FastifyAdapter passes a handler's FASTIFY_ROUTE_CONFIG_METADATA into the route's `config`, and nothing else.
// Nest's own @RouteConfig replaces that metadata, so the platform's decorators merge into it instead: a route can
// carry both an access rule and route limits.
import { RouteConfig } from '@nestjs/platform-fastify';

/** The metadata key Nest's @RouteConfig writes and the FastifyAdapter reads, taken from the public decorator. */
const FASTIFY_ROUTE_CONFIG_METADATA = RouteConfig({}).KEY;

type Handler = (...args: never[]) => unknown;

export function mergeRouteConfig(handler: Handler, patch: Record<string, unknown>): void {
  const current = Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, handler) as
    Record<string, unknown> | undefined;
  Reflect.defineMetadata(FASTIFY_ROUTE_CONFIG_METADATA, { ...current, ...patch }, handler);
}

export function routeConfigOf(handler: Handler): Record<string, unknown> | undefined {
  return Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, handler) as Record<string, unknown> | undefined;
}

/** A method decorator's handler, or every method of a decorated class (for class-level defaults). */
export function routeHandlersOf(
  target: object,
  descriptor: PropertyDescriptor | undefined,
): Array<{ handler: Handler; own: boolean }> {
  if (descriptor !== undefined) return [{ handler: descriptor.value as Handler, own: true }];
  const prototype = (target as { prototype: object }).prototype;
  return Object.getOwnPropertyNames(prototype)
    .filter((name) => name !== 'constructor')
    .map((name) => Object.getOwnPropertyDescriptor(prototype, name)?.value as unknown)
    .filter((value): value is Handler => typeof value === 'function')
    .map((handler) => ({ handler, own: false }));
}
