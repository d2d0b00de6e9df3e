import { SetMetadata } from '@nestjs/common';
import type { AppConfig } from '../config/config.js';

export const SCOPES = ['schedules', 'users', 'mail', 'replication', 'migrations', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

export interface AccessRule {
  scope: Scope | 'public';
  /** A scoped route that configuration may open to everyone (operation 1 with PUBLIC_OCCURRENCES). */
  publicWhen?: (config: AppConfig) => boolean;
}

export const ACCESS_RULE = 'platform:access-rule';

/** The one decorator a route uses to declare who may call it. Routes without it need the admin scope. */
export const RequireScope = (
  scope: Scope,
  options: Omit<AccessRule, 'scope'> = {},
): MethodDecorator & ClassDecorator => SetMetadata(ACCESS_RULE, { scope, ...options } satisfies AccessRule);

export const Public = (): MethodDecorator & ClassDecorator =>
  SetMetadata(ACCESS_RULE, { scope: 'public' } satisfies AccessRule);

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
