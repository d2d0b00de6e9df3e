// Drain: counts the requests in flight on the raw server (every request, matched or not, and one its client
// abandons), and once the shutdown has closed the listener answers each request with `Connection: close`, so a
// client that still holds a kept-alive connection is told to open a new one elsewhere instead of being cut off.
// The sequence itself (readiness 503, SHUTDOWN_DELAY_MS, closing, SHUTDOWN_TIMEOUT_MS) is in src/shutdown.ts.
import fp from 'fastify-plugin';
import type { FastifyPluginCallback } from 'fastify';
import type { ShutdownState } from '../../health/shutdown-state.js';

export interface DrainOptions {
  state: ShutdownState;
}

const drain: FastifyPluginCallback<DrainOptions> = (fastify, { state }, done) => {
  // Before Fastify's own listener, so the header is there before any answer is written.
  fastify.server.prependListener('request', (_request, response) => {
    state.inFlight += 1;
    response.once('close', () => {
      state.inFlight -= 1;
    });
    // Merged into the answer's head by writeHead, whatever the route sets.
    if (state.closing) response.setHeader('connection', 'close');
  });
  done();
};

export const drainPlugin = fp(drain, { name: 'platform-drain', fastify: '5.x' });
