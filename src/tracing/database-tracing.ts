// A span per database query (TypeORM query runners, both engines), installed only when tracing is on; and the same
// span for statements run beside TypeORM (named PostgreSQL statements, raw better-sqlite3 sections).
import type { DataSource, QueryRunner } from 'typeorm';
import { tracing, type Tracing } from './tracing.js';

const TRACED = Symbol('traced');
const MAX_STATEMENT = 2_000;

export function traceQueries(dataSource: DataSource, t: Tracing): void {
  // OpenTelemetry's names (db.system.name): `postgresql`, `sqlite` (the driver here is better-sqlite3).
  const system = dataSource.options.type === 'postgres' ? 'postgresql' : 'sqlite';
  const driver = dataSource.driver;
  const create = driver.createQueryRunner.bind(driver);
  driver.createQueryRunner = (mode) => {
    const runner = create(mode) as QueryRunner & { [TRACED]?: true };
    if (runner[TRACED]) return runner;
    runner[TRACED] = true;
    const query = runner.query.bind(runner) as (...args: unknown[]) => Promise<unknown>;
    (runner as { query: (...args: unknown[]) => Promise<unknown> }).query = (...args: unknown[]) =>
      spanned(t, system, String(args[0]), () => query(...args));
    return runner;
  };
}

/**
 * Runs a statement made outside TypeORM's query runners (a named PostgreSQL statement, a raw better-sqlite3 one)
 * in the same `db <OPERATION>` span traceQueries gives the others; without tracing it just runs.
 */
export function traceStatement<T>(system: 'postgresql' | 'sqlite', statement: string, run: () => T): T {
  const t = tracing();
  return t === undefined ? run() : spanned(t, system, statement, run);
}

function spanned<T>({ api, tracer }: Tracing, system: string, statement: string, run: () => T): T {
  const operation = /^\s*\(?\s*(\w+)/.exec(statement)?.[1]?.toUpperCase() ?? 'QUERY';
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
    (span) => {
      const failed = (error: unknown) => {
        span.setStatus({
          code: api.SpanStatusCode.ERROR,
          message: error instanceof Error ? error.message : '',
        });
        span.end();
        throw error;
      };
      try {
        const result = run();
        if (!(result instanceof Promise)) {
          span.end();
          return result;
        }
        return result.then((value: unknown) => {
          span.end();
          return value;
        }, failed) as T;
      } catch (error) {
        return failed(error);
      }
    },
  );
}
