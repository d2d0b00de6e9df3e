// The instance's shutdown, as the HTTP layer and readiness see it (main.ts drives it on SIGTERM/SIGINT):
// `draining` turns /health/ready 503 so a load balancer stops sending; `closing` comes once the listener is closed
// and makes every answer end its connection; `inFlight` counts requests not yet answered, so the drain knows when
// idle connections can be closed.
import { Injectable } from '@nestjs/common';

@Injectable()
export class ShutdownState {
  draining = false;
  closing = false;
  inFlight = 0;
}
