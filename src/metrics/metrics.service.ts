// Prometheus metrics: request counts and latencies by route pattern (not raw URL, to bound cardinality).
// One registry per app instance, so several apps in one process (tests) do not collide.
import { Injectable } from '@nestjs/common';
import { Registry, collectDefaultMetrics, type Metric } from 'prom-client';

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10] as const;

/** One (method, route, status) series: its request count and the latency histogram of those requests. */
interface Series {
  readonly method: string;
  readonly route: string;
  readonly status: string;
  count: number;
  sum: number;
  /** Non-cumulative: buckets[i] counts observations in (LATENCY_BUCKETS[i-1], LATENCY_BUCKETS[i]]; last = +Inf. */
  readonly buckets: Float64Array;
}

@Injectable()
export class MetricsService {
  readonly registry = new Registry();

  /**
   * Recorded with plain arithmetic and turned into prom-client's metric objects only when scraped: a labelled
   * prom-client Histogram validates and hashes its labels on every observe (measured ~6 µs a request).
   */
  private readonly series = new Map<string, Series>();

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    const series = this.series;
    register(this.registry, {
      name: 'http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status code',
      type: 'counter',
      values: () =>
        [...series.values()].map((s) => ({
          labels: { method: s.method, route: s.route, status: s.status },
          value: s.count,
        })),
    });
    register(this.registry, {
      name: 'http_request_duration_seconds',
      help: 'Time from request received to response sent, by method, route pattern and status code',
      type: 'histogram',
      values: () => [...series.values()].flatMap((s) => histogramValues(s)),
    });
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${route} ${status}`;
    let entry = this.series.get(key);
    if (entry === undefined) {
      entry = {
        method,
        route,
        status: String(status),
        count: 0,
        sum: 0,
        buckets: new Float64Array(LATENCY_BUCKETS.length + 1),
      };
      this.series.set(key, entry);
    }
    entry.count += 1;
    entry.sum += seconds;
    let bucket = 0;
    while (bucket < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[bucket]) bucket += 1;
    entry.buckets[bucket] += 1;
  }
}

interface SampleValue {
  metricName?: string;
  labels: Record<string, string | number>;
  value: number;
}

/** prom-client's registry renders any object with a name and a get() returning these fields. */
function register(
  registry: Registry,
  metric: { name: string; help: string; type: 'counter' | 'histogram'; values: () => SampleValue[] },
): void {
  const collector = {
    name: metric.name,
    get: () =>
      Promise.resolve({
        name: metric.name,
        help: metric.help,
        type: metric.type,
        aggregator: 'sum',
        values: metric.values(),
      }),
  };
  registry.registerMetric(collector as unknown as Metric);
}

function histogramValues(s: Series): SampleValue[] {
  const labels = { method: s.method, route: s.route, status: s.status };
  const values: SampleValue[] = [];
  let cumulative = 0;
  LATENCY_BUCKETS.forEach((bound, index) => {
    cumulative += s.buckets[index];
    values.push({
      metricName: 'http_request_duration_seconds_bucket',
      labels: { ...labels, le: bound },
      value: cumulative,
    });
  });
  values.push({
    metricName: 'http_request_duration_seconds_bucket',
    labels: { ...labels, le: '+Inf' },
    value: s.count,
  });
  values.push({ metricName: 'http_request_duration_seconds_sum', labels, value: s.sum });
  values.push({ metricName: 'http_request_duration_seconds_count', labels, value: s.count });
  return values;
}
