// Prometheus metrics: request counts and latencies by route pattern (not raw URL, to bound cardinality).
// One registry per app instance, so several apps in one process (tests) do not collide.
import { Injectable } from '@nestjs/common';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

@Injectable()
export class MetricsService {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from request received to response sent, by method and route pattern',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /** Labelled children cached by key: prom-client would otherwise hash the label object twice per request. */
  private readonly children = new Map<
    string,
    { count: { inc(): void }; latency: { observe(value: number): void } }
  >();

  observe(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${route} ${status}`;
    let child = this.children.get(key);
    if (child === undefined) {
      child = {
        count: this.requests.labels(method, route, String(status)),
        latency: this.latency.labels(method, route),
      };
      this.children.set(key, child);
    }
    child.count.inc();
    child.latency.observe(seconds);
  }
}
