// Set when the process starts draining on SIGTERM: /health/ready answers 503 from then on, so a load balancer
// stops sending new requests while in-flight ones finish (main.ts).
import { Injectable } from '@nestjs/common';

@Injectable()
export class ShutdownState {
  draining = false;
}
