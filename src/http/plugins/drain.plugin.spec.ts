import { afterEach, describe, expect, it } from '@jest/globals';
import Fastify, { type FastifyInstance } from 'fastify';
import { ShutdownState } from '../../health/shutdown-state.js';
import { drainPlugin } from './drain.plugin.js';

let app: FastifyInstance | undefined;

afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function serve(state: ShutdownState, handlerDone: Promise<void>): Promise<string> {
  app = Fastify();
  await app.register(drainPlugin, { state });
  app.get('/slow', async () => {
    await handlerDone;
    return { ok: true };
  });
  app.get('/fast', () => ({ ok: true }));
  return app.listen({ port: 0, host: '127.0.0.1' });
}

describe('drain plugin', () => {
  it('counts requests in flight, on the raw server, until their answer is sent', async () => {
    const state = new ShutdownState();
    let finish!: () => void;
    const url = await serve(state, new Promise<void>((resolve) => (finish = resolve)));
    const slow = fetch(`${url}/slow`);
    // Until the server sees the request, however long a loaded machine takes (the test's time limit ends a hang).
    while (state.inFlight === 0) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(state.inFlight).toBe(1);
    finish();
    expect((await slow).status).toBe(200);
    while (state.inFlight > 0) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(state.inFlight).toBe(0);
  });

  it('answers with Connection: close once the shutdown is closing, keep-alive before', async () => {
    const state = new ShutdownState();
    const url = await serve(state, Promise.resolve());
    expect((await fetch(`${url}/fast`)).headers.get('connection')).toBe('keep-alive');
    state.closing = true;
    const answer = await fetch(`${url}/fast`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('connection')).toBe('close');
  });

  it('tells a request in flight when closing starts to close its connection too', async () => {
    const state = new ShutdownState();
    let finish!: () => void;
    const url = await serve(state, new Promise<void>((resolve) => (finish = resolve)));
    const slow = fetch(`${url}/slow`);
    // Until the server sees the request, however long a loaded machine takes (the test's time limit ends a hang).
    while (state.inFlight === 0) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(state.openRoutes()).toEqual({ 'GET /slow': 1 });
    state.closing = true;
    finish();
    const answer = await slow;
    expect(answer.status).toBe(200);
    expect(answer.headers.get('connection')).toBe('close');
  });
});
