// The instance's shutdown, as the HTTP layer and readiness see it (main.ts drives it on SIGTERM/SIGINT):
// `draining` turns /health/ready 503 so a load balancer stops sending; `closing` comes once the listener is closed
// and makes every answer end its connection; `inFlight` counts requests not yet answered, so the drain knows when
// idle connections can be closed, and which routes they were is kept so that a drain cut short can say what it
// abandoned.
import { Injectable } from '@nestjs/common';

@Injectable()
export class ShutdownState {
  draining = false;
  closing = false;
  inFlight = 0;
  private readonly open = new Map<object, string>();

  /** A request in flight, by its answer object, and its route (`METHOD /path`, no query). */
  track(response: object, route: string): void {
    this.open.set(response, route);
  }

  untrack(response: object): void {
    this.open.delete(response);
  }

  /** The routes of the requests not yet answered, with how many of each. */
  openRoutes(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const route of this.open.values()) counts[route] = (counts[route] ?? 0) + 1;
    return counts;
  }
}
