// Jobs across wall-clock steps: a periodic job rescheduled while the clock was 2 days ahead, and a job whose
// instance held it with a lease written 2 days ahead and died, are due at once after the clock is back — not two
// days later; a job never waits more than JOB_HORIZON_MS, whatever it asks.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { IDEMPOTENCY_RETENTION_JOB } from '../src/http/idempotency-store.js';
import { Job } from '../src/jobs/entities/job.entity.js';
import { JOB_HORIZON_MS } from '../src/jobs/job-store.js';
import { JobsService } from '../src/jobs/jobs.service.js';
import { startTestApp, type TestApp } from './support/test-app.js';

const DAY_MS = 24 * 3_600_000;

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
}, 60_000);

afterAll(async () => {
  await t.close();
});

async function retentionJob(): Promise<Job> {
  const job = await t.dataSource
    .getRepository(Job)
    .findOneBy({ uniqueKey: `periodic:${IDEMPOTENCY_RETENTION_JOB}` });
  expect(job).not.toBeNull();
  return job!;
}

describe('jobs across wall-clock steps', () => {
  it('a periodic job rescheduled while the clock was 2 days ahead runs now, not in 2 days', async () => {
    const job = await retentionJob();
    await t.dataSource
      .getRepository(Job)
      .update({ id: job.id }, { state: 'queued', runAt: Date.now() + 2 * DAY_MS + 3_600_000 });
    expect(await t.app.get(JobsService).runNow(job.id, 10_000)).toBe('completed');
    const after = await retentionJob();
    expect(after.runAt).toBeLessThanOrEqual(Date.now() + JOB_HORIZON_MS);
  });

  it('a job held under a lease written 2 days ahead by an instance that is gone is taken over now', async () => {
    const job = await retentionJob();
    await t.dataSource
      .getRepository(Job)
      .update(
        { id: job.id },
        { state: 'running', lockedBy: 'an-instance-that-died', lockedUntil: Date.now() + 2 * DAY_MS },
      );
    expect(await t.app.get(JobsService).runNow(job.id, 10_000)).toBe('completed');
  });

  it('a job asking to run days ahead is set to run within the horizon', async () => {
    const id = await t.app
      .get(JobsService)
      .enqueue({ kind: 'clock-steps.not-registered', payload: null, runAt: Date.now() + 3 * DAY_MS });
    const row = await t.dataSource.getRepository(Job).findOneByOrFail({ id });
    expect(row.runAt).toBeLessThanOrEqual(Date.now() + JOB_HORIZON_MS);
    await t.dataSource.getRepository(Job).delete({ id });
  });
});
