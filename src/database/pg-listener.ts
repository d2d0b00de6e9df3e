// One PostgreSQL LISTEN connection per process for notifications between instances (API-key revocations, …).
// It reconnects with back-off after a failure; `listening` tells callers whether they can rely on it, so they can
// fall back to polling meanwhile. SQLite has no such channel: there callers rely on their own time-outs.
import pg from 'pg';
import type { Logger } from 'pino';

const RECONNECT_MS = [500, 1_000, 2_000, 5_000];

export class PgListener {
  private client: pg.Client | undefined;
  private readonly handlers = new Map<string, Array<(payload: string) => void>>();
  private closed = false;
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly url: string,
    private readonly logger: Logger,
    private readonly applicationName = 'platform-api-listener',
  ) {}

  get listening(): boolean {
    return this.client !== undefined;
  }

  /** Registers `handler` for `channel` (an identifier) and makes sure the connection is up. */
  async listen(channel: string, handler: (payload: string) => void): Promise<void> {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`invalid channel name ${channel}`);
    const list = this.handlers.get(channel) ?? [];
    list.push(handler);
    this.handlers.set(channel, list);
    if (this.client !== undefined) await this.client.query(`LISTEN ${channel}`);
    else await this.connect();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({
      connectionString: this.url,
      application_name: this.applicationName,
      connectionTimeoutMillis: 5_000,
      keepAlive: true,
    });
    client.on('notification', (message) => {
      for (const handler of this.handlers.get(message.channel) ?? []) handler(message.payload ?? '');
    });
    const lost = (reason: string): void => {
      if (this.client !== client) return;
      this.client = undefined;
      this.logger.warn({ reason }, 'database listener lost; reconnecting');
      this.retry();
    };
    client.on('error', (error) => lost(error.message));
    client.on('end', () => lost('connection ended'));
    try {
      await client.connect();
      for (const channel of this.handlers.keys()) await client.query(`LISTEN ${channel}`);
      if (this.closed) {
        await client.end();
        return;
      }
      this.client = client;
      if (this.failures > 0) this.logger.info('database listener connected again');
      this.failures = 0;
      // Whatever was sent while disconnected is lost: let every handler treat it as "something changed".
      for (const list of this.handlers.values()) for (const handler of list) handler('');
    } catch (error) {
      await client.end().catch(() => undefined);
      // Once per outage: the reconnects that follow say nothing new (DatabaseHealth logs the outage's end).
      if (this.failures === 0) {
        this.logger.warn(
          { err: error instanceof Error ? error.message : String(error) },
          'database listener could not connect; retrying until it can',
        );
      }
      this.retry();
    }
  }

  private retry(): void {
    if (this.closed) return;
    const delay = RECONNECT_MS[Math.min(this.failures, RECONNECT_MS.length - 1)];
    this.failures += 1;
    this.timer = setTimeout(() => void this.connect(), delay);
    this.timer.unref();
  }
}
