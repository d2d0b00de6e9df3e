import { Command, CommandRunner, Option } from 'nest-commander';
import { JOB_STATES, type JobState } from '../jobs/entities/job.entity.js';
import { JobsService } from '../jobs/jobs.service.js';

interface ListOptions {
  state?: JobState;
  kind?: string;
  limit: number;
}

@Command({
  name: 'jobs:list',
  description: 'List background jobs (id, kind, state, attempts, next run, holder, last error)',
})
export class JobsListCommand extends CommandRunner {
  constructor(private readonly jobs: JobsService) {
    super();
  }

  async run(_args: string[], options: ListOptions): Promise<void> {
    const jobs = await this.jobs.list({
      state: options.state,
      kind: options.kind,
      limit: options.limit ?? 100,
    });
    if (jobs.length === 0) console.log('No jobs.');
    for (const job of jobs) {
      const holder = job.state === 'running' && job.lockedBy !== null ? `  held by ${job.lockedBy}` : '';
      const error = job.lastError === null ? '' : `  last error: ${job.lastError.replace(/\s+/g, ' ')}`;
      console.log(
        `${job.id}  ${job.kind}  ${job.state}  attempts ${job.attempts}  run at ${new Date(job.runAt).toISOString()}${holder}${error}`,
      );
    }
  }

  @Option({ flags: '--state <state>', description: `only jobs in this state: ${JOB_STATES.join(', ')}` })
  parseState(value: string): JobState {
    if (!(JOB_STATES as readonly string[]).includes(value)) {
      throw new Error(`--state must be one of ${JOB_STATES.join(', ')}`);
    }
    return value as JobState;
  }

  @Option({ flags: '--kind <kind>', description: 'only jobs of this kind (e.g. smartthings.calls)' })
  parseKind(value: string): string {
    return value.trim();
  }

  @Option({ flags: '--limit <n>', description: 'at most this many (default 100)' })
  parseLimit(value: string): number {
    const limit = Number(value);
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000)
      throw new Error('--limit must be 1 to 10000');
    return limit;
  }
}

@Command({
  name: 'jobs:retry',
  arguments: '<id>',
  description: 'Run a dead (or waiting) job again now, with its attempts reset',
})
export class JobsRetryCommand extends CommandRunner {
  constructor(private readonly jobs: JobsService) {
    super();
  }

  async run([raw]: string[]): Promise<void> {
    const id = Number(raw);
    if (!Number.isInteger(id) || id < 1) {
      console.error(`"${raw}" is not a job id.`);
      process.exitCode = 1;
      return;
    }
    if (!(await this.jobs.retry(id))) {
      const job = await this.jobs.find(id);
      console.error(
        job === undefined
          ? `No job ${id}.`
          : `Job ${id} is ${job.state}; only dead or failed jobs can be retried.`,
      );
      process.exitCode = 1;
      return;
    }
    console.log(`Job ${id} is queued again; a running instance picks it up.`);
  }
}
