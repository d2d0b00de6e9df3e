// Retries are safe: `Idempotency-Key` on the routes marked @Idempotent() (src/http/idempotency.ts). After the auth
// plugin, so the key is scoped to the verified caller.
import fp from 'fastify-plugin';
import type { FastifyPluginCallback } from 'fastify';
import { idempotencyOnRoute } from '../idempotency.js';
import type { IdempotencyStore } from '../idempotency-store.js';

export interface IdempotencyOptions {
  store: IdempotencyStore;
}

const idempotency: FastifyPluginCallback<IdempotencyOptions> = (fastify, { store }, done) => {
  fastify.addHook('onRoute', idempotencyOnRoute(store));
  done();
};

export const idempotencyPlugin = fp(idempotency, {
  name: 'platform-idempotency',
  fastify: '5.x',
  dependencies: ['platform-auth'],
});
