// What answers on the service's port while start-up waits for its storage: live 200, ready 503 with the
// reason, every other request 507 StorageFull / 503 DatabaseUnavailable with Retry-After — nothing is served from a
// database that is not migrated or not opened. A bare node:http server: the app it stands in for could not be built.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { RETRY_AFTER_SECONDS } from '../errors/api-error.js';
import { CORRELATION_HEADER } from '../http/plugins/correlation.plugin.js';
import type { StartCondition } from './start-condition.js';

const SCIM_PATH = /^\/api\/v1\/scim(?:\/|\?|$)/i;
const SCIM_ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';
const CORRELATION_ID = /^[\w.:-]{1,128}$/;

interface Answer {
  status: number;
  code: string;
  message: string;
}

export class NotStartedListener {
  private constructor(
    private readonly server: http.Server,
    private condition: StartCondition,
    private readonly retryMs: number,
  ) {}

  /** Listens on `port`/`host` (the service's own) until close(). */
  static async listen(
    port: number,
    host: string,
    condition: StartCondition,
    retryMs: number,
  ): Promise<NotStartedListener> {
    const server = http.createServer();
    const listener = new NotStartedListener(server, condition, retryMs);
    server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) =>
      listener.answer(request, response),
    );
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    return listener;
  }

  /** The latest attempt's condition (a full disk may turn into a read-only one). */
  update(condition: StartCondition): void {
    this.condition = condition;
  }

  /** Frees the port for the started app: no new connections, open ones (keep-alive) ended. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private answer(request: http.IncomingMessage, response: http.ServerResponse): void {
    request.resume();
    const url = request.url ?? '/';
    const path = url.split('?')[0];
    const given = request.headers[CORRELATION_HEADER];
    const correlationId = typeof given === 'string' && CORRELATION_ID.test(given) ? given : randomUUID();
    response.setHeader(CORRELATION_HEADER, correlationId);
    response.setHeader('Cache-Control', 'no-store');
    if (path === '/health/live') return this.send(response, 200, { Status: 'Live' });
    const answer = path === '/health/ready' ? this.notReady() : this.refused();
    response.setHeader('Retry-After', String(RETRY_AFTER_SECONDS.get(answer.code) ?? 5));
    if (SCIM_PATH.test(url)) {
      return this.send(
        response,
        answer.status,
        { schemas: [SCIM_ERROR_SCHEMA], status: String(answer.status), detail: answer.message },
        'application/scim+json; charset=utf-8',
      );
    }
    this.send(response, answer.status, {
      Succeeded: false,
      Message: answer.message,
      Code: answer.code,
      CorrelationId: correlationId,
    });
  }

  private notReady(): Answer {
    const what =
      this.condition.kind === 'storage-full'
        ? "the database's storage is full"
        : "the database's storage cannot be written (read-only or failing)";
    return {
      status: 503,
      code: 'ServiceUnavailable',
      message: `Not started: ${what} (${this.condition.reason}); start-up is retried every ${this.retryMs / 1000} s.`,
    };
  }

  private refused(): Answer {
    if (this.condition.kind === 'storage-full') {
      return {
        status: 507,
        code: 'StorageFull',
        message: "The database's storage is full; the instance has not started. Nothing was stored.",
      };
    }
    return {
      status: 503,
      code: 'DatabaseUnavailable',
      message: "The database's storage cannot be written; the instance has not started. Nothing was stored.",
    };
  }

  private send(
    response: http.ServerResponse,
    status: number,
    body: unknown,
    contentType = 'application/json; charset=utf-8',
  ): void {
    response.writeHead(status, { 'Content-Type': contentType }).end(JSON.stringify(body));
  }
}
