// The Grafana dashboard (docs/grafana/platform-api.json) and /metrics cannot drift: every metric name the
// dashboard's PromQL uses is exposed, with at least one sample, after requests that touch every area it shows.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { created, heartbeat } from './replication/replication-calls.js';
import { ROOT } from './support/spawn.js';
import { ADMIN_KEY, startTestApp, type TestApp } from './support/test-app.js';

interface Panel {
  type: string;
  targets?: Array<{ expr: string }>;
  panels?: Panel[];
}

const PROMQL_WORDS = new Set([
  'sum',
  'max',
  'min',
  'avg',
  'count',
  'rate',
  'increase',
  'irate',
  'histogram_quantile',
  'by',
  'without',
  'or',
  'and',
  'unless',
  'on',
  'ignoring',
  'vector',
  'le',
  'bool',
  'offset',
  'topk',
  'bottomk',
  'abs',
  'clamp_min',
]);

/** Metric names of a PromQL expression: identifiers outside label matchers, grouping lists and strings. */
export function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"[^"]*"/g, '""')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\b(by|without|on|ignoring)\s*\([^)]*\)/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\$\w+/g, '');
  return [...stripped.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)]
    .map((m) => m[0])
    .filter((word) => !PROMQL_WORDS.has(word));
}

function expressions(panels: Panel[]): string[] {
  return panels.flatMap((panel) => [
    ...(panel.targets ?? []).map((target) => target.expr),
    ...expressions(panel.panels ?? []),
  ]);
}

let t: TestApp;
const dashboard = JSON.parse(readFileSync(path.join(ROOT, 'docs/grafana/platform-api.json'), 'utf8')) as {
  panels: Panel[];
};

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

describe('Grafana dashboard', () => {
  it('extracts metric names from PromQL (the extraction itself)', () => {
    expect(
      metricNames(
        'histogram_quantile(0.99, sum by (le, route) (rate(http_request_duration_seconds_bucket{job=~"$job", route=~"/a/.*"}[$__rate_interval])))',
      ),
    ).toEqual(['http_request_duration_seconds_bucket']);
    expect(
      metricNames('count(max by (server, node) (replication_node_lag_seconds{a="b"}) > 300) or vector(0)'),
    ).toEqual(['replication_node_lag_seconds']);
  });

  it('queries only metrics that /metrics exposes after requests touching every area', async () => {
    const auth = { authorization: `Bearer ${ADMIN_KEY}` };
    // Operation 1, schedules, SCIM, mail, replication (a lagging node), the webhook (an unsigned call).
    expect(
      (
        await t.post('/api/v1/Occurrence/hasOccurrences/byGroup', {
          Groups: [{ Key: 'g', ScheduleIds: ['3f2504e0-4f89-11d3-9a0c-0305e82c3301'] }],
          Start: '2026-03-16T08:00:00Z',
          End: '2026-03-16T09:00:00Z',
        })
      ).statusCode,
    ).toBe(200);
    expect((await t.request({ method: 'GET', url: '/api/v1/Schedule', headers: auth })).statusCode).toBe(200);
    expect((await t.request({ method: 'GET', url: '/api/v1/scim/Users', headers: auth })).statusCode).toBe(
      200,
    );
    const mail = await t.post('/api/v1/mail/sendTestMessage', { To: 'ops@example.com' });
    expect(mail.statusCode).toBe(200);
    await heartbeat(t, 'berlin', 'berlin-1');
    await heartbeat(t, 'tokyo', 'tokyo-1');
    await created(t, 1);
    const webhook = await t.request({
      method: 'POST',
      url: '/api/v1/webhook/homeprovider/contoso.example',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ lifecycle: 'PING', pingData: { challenge: 'x' } }),
    });
    expect(webhook.statusCode).toBeLessThan(500);

    const text = (await t.request({ method: 'GET', url: '/metrics', headers: auth })).body;
    const exposed = new Set(
      text
        .split('\n')
        .filter((line) => line !== '' && !line.startsWith('#'))
        .map((line) => /^[A-Za-z_:][A-Za-z0-9_:]*/.exec(line)?.[0]),
    );
    const used = [...new Set(expressions(dashboard.panels).flatMap(metricNames))].sort();
    expect(used.length).toBeGreaterThanOrEqual(15);
    expect(used.filter((name) => !exposed.has(name))).toEqual([]);
    // The areas' own metrics are among them (the dashboard is not only HTTP).
    expect(used).toEqual(
      expect.arrayContaining([
        'occurrences_batch_groups_bucket',
        'mail_test_messages_total',
        'replication_node_lag_seconds',
        'webhook_lifecycles_total',
        'platform_jobs',
      ]),
    );
  });
});
