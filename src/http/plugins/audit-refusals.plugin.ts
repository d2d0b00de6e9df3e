// Every 401 and 403 goes to the audit trail (src/audit/audit-trail.ts queues and batches them, bounded). An
// onResponse hook per route, so whichever layer refused (API key, token, scope, tenant, webhook signature, SCIM)
// is covered; operation 1 while it is public can answer neither and gets no hook, so it pays nothing.
import fp from 'fastify-plugin';
import type { FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import type { AuditTrail } from '../../audit/audit-trail.js';
import { accessRuleOf } from '../../auth/scopes.js';
import type { AppConfig } from '../../config/config.js';
import { appendRouteHooks } from './route-hooks.js';

export interface AuditRefusalsOptions {
  config: AppConfig;
  trail: AuditTrail;
}

const auditRefusals: FastifyPluginCallback<AuditRefusalsOptions> = (fastify, { config, trail }, done) => {
  fastify.addHook('onRoute', (route) => {
    if (accessRuleOf(route.config)?.publicWhen?.(config) === true) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.every((method) => method === 'OPTIONS' || method === 'HEAD')) return;
    const name = `${methods.join(',')} ${route.url}`;
    appendRouteHooks(
      route,
      'onResponse',
      (request: FastifyRequest, reply: FastifyReply, next: () => void) => {
        const status = reply.statusCode;
        if (status === 401 || status === 403) trail.refused(request, status, name);
        next();
      },
    );
  });
  done();
};

export const auditRefusalsPlugin = fp(auditRefusals, {
  name: 'platform-audit-refusals',
  fastify: '5.x',
  dependencies: ['platform-auth'],
});
