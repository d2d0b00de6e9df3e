// Drain: counts the requests in flight on the raw server (every request, matched or not, and one its client
// abandons), and once the shutdown has closed the listener every answer written from then on — also the answer of
// a request that arrived before — says `Connection: close`: Node then ends that socket after the answer is out, and
// the client, told not to reuse it, opens a new connection elsewhere instead of writing into a socket the drain is
// about to close (an answer saying keep-alive followed by a close is a reset for a client that reuses it at once).
// The sequence itself (readiness 503, SHUTDOWN_DELAY_MS, closing, SHUTDOWN_TIMEOUT_MS) is in src/shutdown.ts.
import type { IncomingMessage, ServerResponse } from 'node:http';
import fp from 'fastify-plugin';
import type { FastifyPluginCallback } from 'fastify';
import type { ShutdownState } from '../../health/shutdown-state.js';

export interface DrainOptions {
  state: ShutdownState;
}

const drain: FastifyPluginCallback<DrainOptions> = (fastify, { state }, done) => {
  // Before Fastify's own listener, so the hook is in place before any answer is written.
  fastify.server.prependListener('request', (request, response) => {
    state.inFlight += 1;
    state.track(response, routeOf(request));
    response.once('close', () => {
      state.inFlight -= 1;
      state.untrack(response);
    });
    closeWhenDraining(response, state);
  });
  done();
};

/** `METHOD /path` without the query (which may carry what a log must not) and bounded in length. */
function routeOf(request: IncomingMessage): string {
  const path = (request.url ?? '').split('?')[0];
  return `${request.method ?? '?'} ${path.length > 200 ? `${path.slice(0, 200)}…` : path}`;
}

/**
 * Decides `Connection` when the head is written (every answer's head goes through writeHead, also an implicit one),
 * not when the request arrived: a request in flight when the listener closes answers `close` too.
 */
function closeWhenDraining(response: ServerResponse, state: ShutdownState): void {
  const writeHead = response.writeHead.bind(response) as (...args: unknown[]) => ServerResponse;
  response.writeHead = (...args: unknown[]) => {
    if (state.closing && !response.headersSent) response.setHeader('connection', 'close');
    return writeHead(...args);
  };
}

export const drainPlugin = fp(drain, { name: 'platform-drain', fastify: '5.x' });
