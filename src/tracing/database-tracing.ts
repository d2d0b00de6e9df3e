// A span per database query (TypeORM query runners, both engines), installed only when tracing is on.
import type { DataSource, QueryRunner } from 'typeorm';
import type { Tracing } from './tracing.js';

const TRACED = Symbol('traced');
const MAX_STATEMENT = 2_000;

export function traceQueries(dataSource: DataSource, t: Tracing): void {
  const { api, tracer } = t;
  // OpenTelemetry's names (db.system.name): `postgresql`, `sqlite` (the driver here is better-sqlite3).
  const system = dataSource.options.type === 'postgres' ? 'postgresql' : 'sqlite';
  const driver = dataSource.driver;
  const create = driver.createQueryRunner.bind(driver);
  driver.createQueryRunner = (mode) => {
    const runner = create(mode) as QueryRunner & { [TRACED]?: true };
    if (runner[TRACED]) return runner;
    runner[TRACED] = true;
    const query = runner.query.bind(runner) as (...args: unknown[]) => Promise<unknown>;
    (runner as { query: (...args: unknown[]) => Promise<unknown> }).query = (...args: unknown[]) => {
      const statement = String(args[0]);
      const operation = /^\s*(\w+)/.exec(statement)?.[1]?.toUpperCase() ?? 'QUERY';
      return tracer.startActiveSpan(
        `db ${operation}`,
        {
          kind: api.SpanKind.CLIENT,
          attributes: {
            'db.system.name': system,
            'db.operation.name': operation,
            'db.query.text': statement.slice(0, MAX_STATEMENT),
          },
        },
        async (span) => {
          try {
            return await query(...args);
          } catch (error) {
            span.setStatus({
              code: api.SpanStatusCode.ERROR,
              message: error instanceof Error ? error.message : '',
            });
            throw error;
          } finally {
            span.end();
          }
        },
      );
    };
    return runner;
  };
}
