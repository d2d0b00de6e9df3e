import { describe, expect, it } from '@jest/globals';
import type { Logger } from 'pino';
import { DatabaseHealth, outageReason } from './database-health.js';
import { SqliteFileLostError } from './sqlite-file-watch.js';

interface Line {
  level: 'error' | 'warn';
  fields: Record<string, unknown>;
  message: string;
}

function recorder(): { logger: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const at =
    (level: Line['level']) =>
    (fields: Record<string, unknown>, message: string): void => {
      lines.push({ level, fields, message });
    };
  return { logger: { error: at('error'), warn: at('warn') } as unknown as Logger, lines };
}

const refused = (): Error =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
const waitCalm = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 30));

describe('DatabaseHealth outage lines', () => {
  it('logs one error when an outage starts and one warn when it ends, however many statements failed', async () => {
    const { logger, lines } = recorder();
    const health = new DatabaseHealth(logger, 20);
    for (let i = 0; i < 50; i++) health.observe(refused());
    expect(health.reachable).toBe(false);
    health.succeeded(false);
    expect(health.reachable).toBe(true);
    await waitCalm();
    expect(lines.map((line) => line.level)).toEqual(['error', 'warn']);
    expect(lines[1].fields).toMatchObject({ failures: 50 });
    expect(typeof lines[1].fields.outageSeconds).toBe('number');
  });

  it('a database that fails and answers in turns (a pool exhausted now and then) is one outage, not a pair per turn', async () => {
    const { logger, lines } = recorder();
    const health = new DatabaseHealth(logger, 20);
    for (let i = 0; i < 26; i++) {
      health.observe(refused());
      health.succeeded(false);
    }
    expect(lines.map((line) => line.level)).toEqual(['error']);
    await waitCalm();
    expect(lines.map((line) => line.level)).toEqual(['error', 'warn']);
    expect(lines[1].fields).toMatchObject({ failures: 26 });
  });

  it("gives the driver's reason, not the framework's message about a released query runner", () => {
    expect(outageReason(refused())).toBe('ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:5432');
    const released = Object.assign(new Error('Query runner already released. Cannot run queries anymore.'), {
      name: 'QueryRunnerAlreadyReleasedError',
    });
    expect(outageReason(released)).toBe('the connection to the database was lost');
    const wrapped = Object.assign(new Error('wrapped'), { name: 'QueryFailedError', driverError: refused() });
    expect(outageReason(wrapped)).toContain('ECONNREFUSED');
  });

  it('a lost database file is logged once with its name, keeps the instance unreachable and opens no outage', () => {
    const { logger, lines } = recorder();
    const health = new DatabaseHealth(logger, 20);
    const lost = new SqliteFileLostError('/data/platform.db-wal', 'removed');
    health.lostFile(lost);
    health.lostFile(lost);
    health.observe(new SqliteFileLostError(lost.file, lost.how));
    health.succeeded(true);
    expect(health.reachable).toBe(false);
    expect(health.fileLost).toBe(lost);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'error', fields: { file: '/data/platform.db-wal' } });
  });
});
