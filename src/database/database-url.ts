// DATABASE_URL's forms, read in one place for the service, the CLI and db:copy/--from/--to:
// `sqlite:<file>`, `sqlite::memory:`, `postgres://…` (or `postgresql://…`).
import path from 'node:path';

/** Which database the service, the CLI or a copy opens (DATABASE_URL, --from, --to). */
export type DatabaseConfig =
  { type: 'sqlite'; database: string /* file path or ':memory:' */ } | { type: 'postgres'; url: string };

/** What is wrong with a database URL, phrased to follow the variable or option that carried it. */
export class DatabaseUrlError extends Error {
  constructor(readonly problem: string) {
    super(problem);
    this.name = 'DatabaseUrlError';
  }
}

export function parseDatabaseUrl(raw: string): DatabaseConfig {
  if (/^postgres(ql)?:\/\//i.test(raw)) {
    try {
      new URL(raw);
    } catch {
      throw new DatabaseUrlError('is not a valid postgres:// URL');
    }
    return { type: 'postgres', url: raw };
  }
  if (raw.toLowerCase().startsWith('sqlite:')) {
    const file = raw.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (file === '') throw new DatabaseUrlError('sqlite: needs a file path or :memory:');
    return { type: 'sqlite', database: file === ':memory:' ? ':memory:' : path.resolve(file) };
  }
  throw new DatabaseUrlError(`must start with sqlite: or postgres://, got "${raw.split(':')[0]}:…"`);
}

/** The URL again, for messages and backup metadata: a PostgreSQL password is masked. */
export function describeDatabase(database: DatabaseConfig): string {
  if (database.type === 'sqlite') return `sqlite:${database.database}`;
  const url = new URL(database.url);
  if (url.password !== '') url.password = '***';
  return url.toString();
}
