// Load shedding (src/http/plugins/overload.plugin.ts): while the event loop's mean delay is over
// OVERLOAD_EVENT_LOOP_DELAY_MS, requests are answered 503 Overloaded with Retry-After in the envelope (SCIM's error
// on SCIM routes), the health routes and /metrics still answer, and once the loop is free again nothing is shed.
// The app runs in this process, so the test overloads the loop itself: busy stretches with a turn of the loop
// between them, as a flood of expensive requests would.
import { setImmediate as turn } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN_KEY, startTestApp, type TestApp } from './support/test-app.js';

const busyFor = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // the event loop is held, as by a long synchronous request
  }
};

/**
 * Holds the loop in 150 ms stretches for a little over two of under-pressure's one-second sampling intervals, so
 * that one whole interval lies inside the overload wherever its boundaries fall.
 */
async function overload(): Promise<void> {
  const until = performance.now() + 2_300;
  while (performance.now() < until) {
    busyFor(150);
    await turn();
  }
}

describe('load shedding', () => {
  let t: TestApp;
  const auth = { authorization: `Bearer ${ADMIN_KEY}` };

  beforeAll(async () => {
    t = await startTestApp({ env: { OVERLOAD_EVENT_LOOP_DELAY_MS: '50' } });
  });
  afterAll(() => t.close());

  it('answers 503 Overloaded with Retry-After while the loop is overloaded, never on health routes', async () => {
    await overload();
    const shed = await t.request({ method: 'GET', url: '/api/v1/Schedule', headers: auth });
    expect(shed.statusCode).toBe(503);
    expect(shed.headers['retry-after']).toBe('2');
    expect(shed.json()).toMatchObject({ Succeeded: false, Code: 'Overloaded' });
    const scim = await t.request({ method: 'GET', url: '/api/v1/scim/Users', headers: auth });
    expect(scim.statusCode).toBe(503);
    expect(scim.headers['content-type']).toMatch(/^application\/scim\+json/);
    expect(scim.json()).toMatchObject({ status: '503' });
    expect((await t.request({ method: 'GET', url: '/health/live' })).statusCode).toBe(200);
    const metrics = await t.request({ method: 'GET', url: '/metrics', headers: auth });
    expect(metrics.statusCode).toBe(200);
    expect(metrics.body).toMatch(/platform_requests_shed_total [1-9]/);
  });

  it('serves again once the loop is free', async () => {
    // Two quiet sampling intervals: the mean delay falls back under the threshold.
    await new Promise((resolve) => setTimeout(resolve, 2_200));
    const served = await t.request({ method: 'GET', url: '/api/v1/Schedule', headers: auth });
    expect(served.statusCode).toBe(200);
  });
});

describe('load shedding off', () => {
  it('never sheds with OVERLOAD_EVENT_LOOP_DELAY_MS=0', async () => {
    const t = await startTestApp({ env: { OVERLOAD_EVENT_LOOP_DELAY_MS: '0' } });
    try {
      await overload();
      const served = await t.request({
        method: 'GET',
        url: '/api/v1/Schedule',
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      });
      expect(served.statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });
});
