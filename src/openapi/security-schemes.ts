// The document's security schemes: the API key as a plain bearer (no `bearerFormat: JWT`: a key
// is an opaque `pk_…` string) and, when OIDC_ISSUER is set, an `openIdConnect` scheme with the issuer's discovery
// URL. Every operation that takes an API key then also takes a token with the operation's scope, named as the
// provider grants it (OIDC_SCOPE_PREFIX + scope).
import type { INestApplication } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import type { DocumentBuilder, OpenAPIObject } from '@nestjs/swagger';
import { accessRuleOf } from '../auth/scopes.js';
import type { OidcConfig } from '../config/config.js';
import { routeConfigOf } from '../route-config/route-config.js';

type Json = Record<string, unknown>;

/** Where @ApiOperation keeps its options (@nestjs/swagger's API_OPERATION; not an exported subpath). */
const API_OPERATION = 'swagger/apiOperation';

export const TOKEN_SCHEME = 'oidc';

export function declareSecuritySchemes(
  builder: DocumentBuilder,
  oidc: OidcConfig | undefined,
): DocumentBuilder {
  builder.addSecurity('bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key (`pk_…`, see the CLI: api-key:create, or one of API_KEYS).',
  });
  if (oidc === undefined) return builder;
  return builder.addSecurity(TOKEN_SCHEME, {
    type: 'openIdConnect',
    openIdConnectUrl: oidc.discoveryUrl,
    description:
      `An OAuth 2.0 access token (JWT) from ${oidc.issuer} for audience ${oidc.audiences.join(' or ')}, sent as ` +
      '`Authorization: Bearer <token>` (e.g. obtained with the client-credentials grant at the token_endpoint ' +
      'of the discovery document). Its scp, scope or roles claim grants the scopes (docs/security.md).',
  });
}

/** operationId → the scope its route needs (routes without a declared rule need admin). */
function operationScopes(app: INestApplication): Map<string, string> {
  const scopes = new Map<string, string>();
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const prototype = (wrapper.metatype as { prototype?: Record<string, unknown> } | undefined)?.prototype;
      if (!prototype) continue;
      for (const name of Object.getOwnPropertyNames(prototype)) {
        const handler = prototype[name];
        if (typeof handler !== 'function' || name === 'constructor') continue;
        const operation = Reflect.getMetadata(API_OPERATION, handler) as { operationId?: string } | undefined;
        if (operation?.operationId === undefined) continue;
        const rule = accessRuleOf(routeConfigOf(handler as (...args: never[]) => unknown));
        scopes.set(operation.operationId, rule?.scope ?? 'admin');
      }
    }
  }
  return scopes;
}

/** Beside each API key requirement, the token requirement with the operation's scope. */
export function addTokenRequirements(
  document: OpenAPIObject,
  app: INestApplication,
  oidc: OidcConfig | undefined,
): void {
  if (oidc === undefined) return;
  const scopes = operationScopes(app);
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item as Record<string, Json>)) {
      const security = operation.security as Array<Record<string, string[]>> | undefined;
      if (!Array.isArray(security)) continue;
      const at = security.findIndex((requirement) => 'bearer' in requirement);
      const scope = scopes.get(String(operation.operationId)) ?? 'admin';
      if (at < 0 || scope === 'public') continue;
      // A new array: the generator shares one between the operations of a controller.
      operation.security = [
        ...security.slice(0, at + 1),
        { [TOKEN_SCHEME]: [`${oidc.scopePrefix}${scope}`] },
        ...security.slice(at + 1),
      ];
    }
  }
}
