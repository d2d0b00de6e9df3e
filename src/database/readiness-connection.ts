// Whether the database answers, asked without queueing behind the requests' work: readiness must say "this
// instance can serve", and a pool that legitimate work (or a lock someone else holds on one table) keeps busy
// does not make the instance unable to serve. On PostgreSQL the question goes over one connection of its own,
// outside the pool, opened on first use and again after it fails; on SQLite straight to the one connection, which
// answers a read at once whoever holds its turn.
import pg from 'pg';
import type { DataSource } from 'typeorm';

/** How long a connect or the probe's statement may take before readiness counts the database as unreachable. */
const PROBE_TIMEOUT_MS = 2_000;

export class ReadinessConnection {
  private connecting: Promise<pg.Client> | undefined;
  private open: pg.Client | undefined;
  private closed = false;

  constructor(private readonly dataSource: DataSource) {}

  /** Resolves when the database answers a statement; rejects when it cannot be reached. */
  async check(): Promise<void> {
    const options = this.dataSource.options;
    if (options.type === 'better-sqlite3') {
      const driver = this.dataSource.driver as unknown as {
        databaseConnection: { prepare(sql: string): { get(): unknown } };
      };
      // Reads the file's header: a closed connection or an unreadable file throws.
      driver.databaseConnection.prepare('PRAGMA schema_version').get();
      return;
    }
    if (options.type !== 'postgres' || options.url === undefined) {
      await this.dataSource.query('SELECT 1');
      return;
    }
    if (this.closed) throw new Error('The readiness connection is closed');
    const pending = (this.connecting ??= this.connect(options.url));
    try {
      await (await pending).query('SELECT 1');
    } catch (error) {
      if (this.connecting === pending) this.connecting = undefined;
      void pending.then((client) => client.end()).catch(() => undefined);
      throw error;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const pending = this.connecting;
    this.connecting = undefined;
    await pending?.then((client) => client.end()).catch(() => undefined);
  }

  private async connect(url: string): Promise<pg.Client> {
    const client = new pg.Client({
      connectionString: url,
      application_name: 'platform-api readiness',
      connectionTimeoutMillis: PROBE_TIMEOUT_MS,
      statement_timeout: PROBE_TIMEOUT_MS,
      query_timeout: PROBE_TIMEOUT_MS,
      keepAlive: true,
    });
    // A connection the server ends emits `error` and `end`: the next probe opens another.
    client.on('error', () => undefined);
    client.on('end', () => {
      if (this.open !== client) return;
      this.open = undefined;
      this.connecting = undefined;
    });
    await client.connect();
    this.open = client;
    return client;
  }
}
