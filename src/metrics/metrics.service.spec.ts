import { describe, expect, it } from '@jest/globals';
import { MetricsService } from './metrics.service.js';

describe('MetricsService', () => {
  it('renders request counts and cumulative latency buckets in the Prometheus text format', async () => {
    const metrics = new MetricsService();
    metrics.observe('POST', '/api/v1/x', 200, 0.0005);
    metrics.observe('POST', '/api/v1/x', 200, 0.003);
    metrics.observe('POST', '/api/v1/x', 200, 0.003);
    metrics.observe('POST', '/api/v1/x', 400, 20);
    const text = await metrics.registry.metrics();

    expect(text).toContain('# TYPE http_requests_total counter');
    expect(text).toContain('http_requests_total{method="POST",route="/api/v1/x",status="200"} 3');
    expect(text).toContain('http_requests_total{method="POST",route="/api/v1/x",status="400"} 1');
    expect(text).toContain('# TYPE http_request_duration_seconds histogram');
    const bucket = (le: string, status = '200') =>
      `http_request_duration_seconds_bucket{method="POST",route="/api/v1/x",status="${status}",le="${le}"}`;
    expect(text).toContain(`${bucket('0.001')} 1`);
    expect(text).toContain(`${bucket('0.0025')} 1`);
    expect(text).toContain(`${bucket('0.005')} 3`);
    expect(text).toContain(`${bucket('10')} 3`);
    expect(text).toContain(`${bucket('+Inf')} 3`);
    expect(text).toContain(`${bucket('10', '400')} 0`);
    expect(text).toContain(`${bucket('+Inf', '400')} 1`);
    expect(text).toContain(
      'http_request_duration_seconds_sum{method="POST",route="/api/v1/x",status="200"} 0.0065',
    );
    expect(text).toContain(
      'http_request_duration_seconds_count{method="POST",route="/api/v1/x",status="400"} 1',
    );
  });

  it('counts an observation equal to a bound in that bound', async () => {
    const metrics = new MetricsService();
    metrics.observe('GET', '/r', 200, 0.01);
    const text = await metrics.registry.metrics();
    expect(text).toContain(
      'http_request_duration_seconds_bucket{method="GET",route="/r",status="200",le="0.005"} 0',
    );
    expect(text).toContain(
      'http_request_duration_seconds_bucket{method="GET",route="/r",status="200",le="0.01"} 1',
    );
  });
});
