// Direct routes (docs/decisions.md): a controller method that needs nothing of Nest's pipeline but the validation
// pipe is called straight from its Fastify route. Off with DIRECT_ROUTES=false.
import fp from 'fastify-plugin';
import type { FastifyPluginCallback } from 'fastify';
import type { Logger } from 'pino';
import type { DirectRoutes } from '../direct-routes.js';

export interface DirectRoutesOptions {
  directRoutes: DirectRoutes | undefined;
  logger: Logger;
}

const directRoutes_: FastifyPluginCallback<DirectRoutesOptions> = (
  fastify,
  { directRoutes, logger },
  done,
) => {
  if (directRoutes === undefined) return done();
  fastify.addHook('onRoute', (route) => {
    const direct = directRoutes.handlerFor(route);
    if (direct !== undefined) route.handler = direct;
  });
  fastify.addHook('onReady', (done) => {
    logger.info(
      { direct: directRoutes.direct, viaNest: directRoutes.viaNest },
      `${directRoutes.direct} routes are called directly; ${directRoutes.viaNest.length} go through Nest's pipeline`,
    );
    done();
  });
  done();
};

export const directRoutesPlugin = fp(directRoutes_, { name: 'platform-direct-routes', fastify: '5.x' });
