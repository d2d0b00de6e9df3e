// The drain a load balancer can follow. On SIGTERM:
//   1. /health/ready answers 503 at once, and for SHUTDOWN_DELAY_MS the instance keeps accepting and answering as
//      usual — the time a balancer (or Kubernetes, which removes the endpoint while it sends SIGTERM) needs to stop
//      sending here;
//   2. then the listener closes (no new connections); a request arriving on a connection kept alive from before
//      is still answered, with `Connection: close`; idle connections are closed once nothing is in flight;
//   3. requests in flight finish (after SHUTDOWN_TIMEOUT_MS their connections are closed), running jobs are handed
//      back, the app and its database pool close, the last spans are exported, and the process exits 0.
// SIGINT (a terminal) skips the delay; a second signal cuts the wait short.
//
// Why not close-with-grace: its `delay` is a kill timeout, not a wait before closing, and it calls fastify.close(),
// which answers 503 to every request at once. Why not @fastify/under-pressure: its failing health check sheds every
// request, while a draining instance must go on serving.
import net from 'node:net';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Logger } from 'pino';
import type { AppConfig } from './config/config.js';
import { ShutdownState } from './health/shutdown-state.js';
import { JobsService } from './jobs/jobs.service.js';

/** How often, once the listener is closed, idle connections are closed while nothing is in flight. */
const IDLE_SWEEP_MS = 50;

export function drainOnSignals(
  app: NestFastifyApplication,
  config: Pick<AppConfig, 'shutdownDelayMs' | 'shutdownTimeoutMs'>,
  logger: Logger,
  finished: () => Promise<void>,
): void {
  const state = app.get(ShutdownState);
  const server = app.getHttpAdapter().getInstance().server;
  let hurry: (() => void) | undefined;

  const drain = async (signal: NodeJS.Signals): Promise<Abandoned | undefined> => {
    state.draining = true;
    const delayMs = signal === 'SIGTERM' ? config.shutdownDelayMs : 0;
    logger.info(
      { signal, delayMs, timeoutMs: config.shutdownTimeoutMs },
      delayMs > 0
        ? 'shutting down: not ready, still serving until the delay ends'
        : 'shutting down: finishing requests in flight',
    );
    if (delayMs > 0) {
      await new Promise<void>((resolve) => {
        hurry = resolve;
        setTimeout(resolve, delayMs);
      });
      logger.info(
        { inFlight: state.inFlight },
        'shutting down: closing the listener, finishing requests in flight',
      );
    }
    const abandoned = await closeServer(
      server,
      state,
      config.shutdownTimeoutMs,
      logger,
      (cut) => (hurry = cut),
    );
    await app.get(JobsService).stop();
    await app.close();
    await finished();
    return abandoned;
  };

  let started = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (started) {
      logger.warn({ signal }, 'second signal: not waiting any longer');
      hurry?.();
      return;
    }
    started = true;
    drain(signal).then(
      (abandoned) => {
        if (abandoned === undefined) logger.info('shut down cleanly');
        else
          logger.warn(
            { abandoned: abandoned.count, routes: abandoned.routes },
            `shut down after abandoning ${abandoned.count} request(s) still in flight`,
          );
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error instanceof Error ? error.message : String(error) }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

/** Requests whose connections the drain closed before they were answered. */
interface Abandoned {
  count: number;
  /** `METHOD /path` → how many. */
  routes: Record<string, number>;
}

/**
 * Stops accepting connections but — unlike http.Server.close(), which also drops idle kept-alive connections at
 * once — leaves open connections to answer what arrives on them (with `Connection: close`, the drain plugin), and
 * closes idle ones only while no request is in flight. Resolves when the last connection is gone, with what was
 * abandoned when SHUTDOWN_TIMEOUT_MS (or a second signal) cut requests off.
 */
function closeServer(
  server: net.Server & { closeIdleConnections(): void; closeAllConnections(): void },
  state: ShutdownState,
  timeoutMs: number,
  logger: Logger,
  onHurry: (cut: () => void) => void,
): Promise<Abandoned | undefined> {
  state.closing = true;
  let abandoned: Abandoned | undefined;
  return new Promise((resolve) => {
    const forceClose = (reason: string): void => {
      const routes = state.openRoutes();
      const count = Object.values(routes).reduce((sum, n) => sum + n, 0);
      if (count > 0) {
        abandoned = { count: (abandoned?.count ?? 0) + count, routes: { ...abandoned?.routes, ...routes } };
        logger.warn(
          { abandoned: count, routes },
          `${reason}: closing the connections still open, abandoning ${count} request(s) in flight`,
        );
      } else {
        logger.warn({}, `${reason}: closing the connections still open`);
      }
      server.closeAllConnections();
    };
    const idle = setInterval(() => {
      if (state.inFlight === 0) server.closeIdleConnections();
    }, IDLE_SWEEP_MS);
    const force = setTimeout(() => forceClose('shutdown time-out reached'), timeoutMs);
    onHurry(() => forceClose('second signal'));
    net.Server.prototype.close.call(server, () => {
      clearInterval(idle);
      clearTimeout(force);
      resolve(abandoned);
    });
  });
}
