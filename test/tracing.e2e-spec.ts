// OpenTelemetry tracing against a tiny OTLP/HTTP JSON receiver on loopback: an incoming `traceparent` is
// continued, each request's span carries its route template and status, database queries are its children, a
// request without `traceparent` starts a new trace, and the request's log lines carry `trace_id`.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { trace } from '@opentelemetry/api';
import { JobsService } from '../src/jobs/jobs.service.js';
import { tracing } from '../src/tracing/tracing.js';
import { ADMIN_KEY, startTestApp, type TestApp } from './support/test-app.js';
import { isPostgresRun } from './support/test-database.js';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Array<{ key: string; value: { stringValue?: string; intValue?: number | string } }>;
}

const spans: OtlpSpan[] = [];
const contentTypes: string[] = [];
let receiver: Server;
let t: TestApp;
const saved = { ...process.env };

function attribute(span: OtlpSpan, key: string): string | undefined {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value === undefined ? undefined : String(value.stringValue ?? value.intValue);
}

async function exported(predicate: (span: OtlpSpan) => boolean): Promise<OtlpSpan[]> {
  for (let i = 0; i < 50; i++) {
    await tracing()?.forceFlush();
    const found = spans.filter(predicate);
    if (found.length > 0) return found;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return [];
}

beforeAll(async () => {
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.url === '/v1/traces') {
        contentTypes.push(String(request.headers['content-type']));
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }>;
        };
        for (const resource of body.resourceSpans)
          for (const scope of resource.scopeSpans) spans.push(...scope.spans);
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const { port } = receiver.address() as AddressInfo;
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${port}`;
  process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/json';
  process.env.OTEL_SERVICE_NAME = 'platform-api-test';
  process.env.OTEL_BSP_SCHEDULE_DELAY = '50';
  t = await startTestApp();
});

afterAll(async () => {
  await t?.close();
  await tracing()?.shutdown();
  process.env = saved;
  await new Promise((resolve) => receiver?.close(resolve));
});

describe('tracing', () => {
  it('continues an incoming traceparent: route template, status, database spans, trace_id in the logs', async () => {
    const traceId = randomBytes(16).toString('hex');
    const parentId = randomBytes(8).toString('hex');
    const response = await t.request({
      method: 'GET',
      url: '/api/v1/Schedule?PageSize=5',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, traceparent: `00-${traceId}-${parentId}-01` },
    });
    expect(response.statusCode).toBe(200);

    const [server] = await exported((s) => s.traceId === traceId && s.parentSpanId === parentId);
    expect(server).toBeDefined();
    expect(server.name).toBe('GET /api/v1/Schedule');
    expect(attribute(server, 'http.route')).toBe('/api/v1/Schedule');
    expect(attribute(server, 'http.response.status_code')).toBe('200');

    const queries = await exported((s) => s.traceId === traceId && s.name.startsWith('db '));
    expect(queries.length).toBeGreaterThan(0);
    expect(queries.every((q) => q.parentSpanId === server.spanId)).toBe(true);
    expect(attribute(queries[0], 'db.query.text')).toMatch(/schedules/i);
    expect(attribute(queries[0], 'db.system.name')).toBe(isPostgresRun() ? 'postgresql' : 'sqlite');
    expect(contentTypes[0]).toContain('application/json');

    const lines = t.logs.filter((line) => line.trace_id === traceId);
    expect(lines.map((line) => line.message)).toContain('request completed');
  });

  it('starts a new trace without traceparent, named by the route template (not the URL)', async () => {
    const response = await t.post('/api/v1/Occurrence/hasOccurrences/byGroup', {
      Groups: [{ Key: 'g', ScheduleIds: ['3f2504e0-4f89-11d3-9a0c-0305e82c3301'] }],
      Start: '2026-03-16T08:00:00Z',
      End: '2026-03-16T09:00:00Z',
    });
    expect(response.statusCode).toBe(200);
    const [span] = await exported((s) => s.name === 'POST /api/v1/Occurrence/hasOccurrences/byGroup');
    expect(span).toBeDefined();
    expect(span.parentSpanId ?? '').toBe('');
    expect(span.traceId).toMatch(/^[0-9a-f]{32}$/);
    const bad = await t.request({
      method: 'GET',
      url: '/api/v1/Schedule/not-a-uuid',
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    const [byId] = await exported((s) => s.name === 'GET /api/v1/Schedule/:id');
    expect(attribute(byId, 'http.route')).toBe('/api/v1/Schedule/:id');
    expect(attribute(byId, 'http.response.status_code')).toBe(String(bad.statusCode));
    const log = t.logs.find(
      (line) => line.message === 'request completed' && line.url === '/api/v1/Schedule/not-a-uuid',
    );
    expect(log?.trace_id).toBe(byId.traceId);
  });

  it('keeps the job poller out of the trace of the request that woke it (a review saw a span a second there)', async () => {
    const jobs = t.app.get(JobsService);
    const traceId = trace.getTracer('test').startActiveSpan('request that enqueues a job', (span) => {
      jobs.wake(); // what enqueueing a job does
      span.end();
      return span.spanContext().traceId;
    });
    // The poller runs at once and then every JOB_POLL_MS (1 s): give it a few rounds.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    await tracing()?.forceFlush();
    expect(spans.filter((span) => span.traceId === traceId).map((span) => span.name)).toEqual([
      'request that enqueues a job',
    ]);
  });
});
