// Who may call a route, declared with one decorator on the route or its controller (a route's own wins). The rule
// lives in the route's Fastify config (route-config/route-config.ts), where the auth plugin (http/plugins/auth.plugin.ts) turns it into the route's
// authentication hook when the route is added: public routes get no hook at all.
import type { AppConfig } from '../config/config.js';
import { mergeRouteConfig, routeConfigOf, routeHandlersOf } from '../route-config/route-config.js';

export const SCOPES = ['schedules', 'users', 'mail', 'replication', 'migrations', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

export interface AccessRule {
  scope: Scope | 'public';
  /** A scoped route that configuration may open to everyone (operation 1 with PUBLIC_OCCURRENCES). */
  publicWhen?: (config: AppConfig) => boolean;
}

const ACCESS_RULE = 'platformAccessRule';

/** What a route without a declaration needs: secure by default. */
export const ADMIN_ONLY: AccessRule = { scope: 'admin' };
export const PUBLIC: AccessRule = { scope: 'public' };

function declareAccess(rule: AccessRule): MethodDecorator & ClassDecorator {
  return (target: object, _key?: string | symbol, descriptor?: PropertyDescriptor): void => {
    for (const { handler, own } of routeHandlersOf(target, descriptor)) {
      // Class decorators run after the methods' own: a method that declared its rule keeps it.
      if (!own && accessRuleOf(routeConfigOf(handler)) !== undefined) continue;
      mergeRouteConfig(handler, { [ACCESS_RULE]: rule });
    }
  };
}

/** The one decorator a route uses to declare who may call it. Routes without it need the admin scope. */
export const RequireScope = (
  scope: Scope,
  options: Omit<AccessRule, 'scope'> = {},
): MethodDecorator & ClassDecorator => declareAccess({ scope, ...options });

export const Public = (): MethodDecorator & ClassDecorator => declareAccess(PUBLIC);

const NAMES_TENANT = 'platformNamesTenant';

/**
 * Marks the routes of an area whose requests name a tenant (`Context.Domain` for mail and
 * migrations, the `{domain}` path segment of the webhook read routes, the `Domain` query of listings). On every
 * other route a request acts for no tenant but `default`, whatever it sends: a tenant-bound key cannot make an
 * untenanted route (SCIM, schedules, replication) its own by adding `?Domain=<its tenant>`.
 */
export const NamesTenant = (): MethodDecorator & ClassDecorator => {
  return (target: object, _key?: string | symbol, descriptor?: PropertyDescriptor): void => {
    for (const { handler } of routeHandlersOf(target, descriptor)) {
      mergeRouteConfig(handler, { [NAMES_TENANT]: true });
    }
  };
};

export function namesTenant(routeConfig: unknown): boolean {
  return (routeConfig as Record<string, unknown> | undefined)?.[NAMES_TENANT] === true;
}

export function accessRuleOf(routeConfig: unknown): AccessRule | undefined {
  return (routeConfig as Record<string, AccessRule | undefined> | undefined)?.[ACCESS_RULE];
}

export function parseScopes(text: string): Scope[] {
  const scopes = text
    .split(',')
    .map((scope) => scope.trim().toLowerCase())
    .filter((scope) => scope !== '');
  const unknown = scopes.filter((scope) => !(SCOPES as readonly string[]).includes(scope));
  if (unknown.length > 0)
    throw new Error(`Unknown scope(s): ${unknown.join(', ')} (known: ${SCOPES.join(', ')})`);
  if (scopes.length === 0) throw new Error(`At least one scope is needed (known: ${SCOPES.join(', ')})`);
  return [...new Set(scopes)] as Scope[];
}
