// A stand-in for the SmartThings cloud on 127.0.0.1: the REST API (subscriptions, schedules, device commands),
// the OAuth token endpoint, the key server for `/pl/…` signing certificates and confirmation URLs. It records
// every call, and can be told to answer slowly, refuse tokens, fail with 5xx or drop connections.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedCall {
  method: string;
  /** Path and query as requested. */
  url: string;
  path: string;
  authorization: string | undefined;
  contentType: string | undefined;
  rawBody: string;
  /** Parsed JSON (or form fields for the token endpoint); undefined when empty. */
  body: unknown;
  receivedAt: number;
  /** Status answered, set when the answer went out (undefined while pending or when dropped). */
  status?: number;
  answeredAt?: number;
}

export interface Rule {
  /** Which calls the rule applies to. */
  match: (call: RecordedCall) => boolean;
  /** Answer this status instead of the normal one (e.g. 503, 401); 'drop' closes the connection. */
  status?: number | 'drop';
  /** Wait this long before answering. */
  delayMs?: number;
  /** How many matching calls the rule applies to; default unlimited. */
  times?: number;
  retryAfter?: string;
}

export interface TokenGrant {
  accessToken: string;
  refreshToken: string;
  expiresIn?: number;
}

export class FakeSmartThings {
  readonly calls: RecordedCall[] = [];
  readonly rules: Rule[] = [];
  /** Bearer tokens the API refuses with 401. */
  readonly refusedTokens = new Set<string>();
  /** refresh_token → what /oauth/token answers (each usable once, as SmartThings does). */
  readonly grants = new Map<string, TokenGrant>();
  /** `/pl/…` key id → PEM served by the key server. */
  readonly certificates = new Map<string, string>();
  clientId = 'test-client-id';
  clientSecret = 'test-client-secret';
  /** Delay of the token endpoint (to make concurrent refreshes overlap). */
  tokenDelayMs = 0;
  private server: http.Server | undefined;
  url = '';

  async start(): Promise<void> {
    this.server = http.createServer((request, response) => void this.handle(request, response));
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  /** Calls whose path contains `fragment` (e.g. an installed app id or a device id). */
  callsTo(fragment: string): RecordedCall[] {
    return this.calls.filter((call) => call.path.includes(fragment));
  }

  /** Waits until `predicate` holds for the recorded calls (polling), or fails after `timeoutMs`. */
  async waitFor(predicate: (calls: RecordedCall[]) => boolean, timeoutMs = 5_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (!predicate(this.calls)) {
      if (Date.now() > until) {
        throw new Error(
          `fake SmartThings: condition not met in ${timeoutMs} ms; calls: ${JSON.stringify(
            this.calls.map((call) => `${call.method} ${call.path} → ${String(call.status)}`),
          )}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  private async handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const rawBody = Buffer.concat(chunks).toString('utf8');
    const url = request.url ?? '/';
    const path = url.split('?')[0];
    const contentType = request.headers['content-type'];
    let body: unknown;
    if (rawBody !== '') {
      body = contentType?.includes('x-www-form-urlencoded')
        ? Object.fromEntries(new URLSearchParams(rawBody))
        : safeJson(rawBody);
    }
    const call: RecordedCall = {
      method: request.method ?? 'GET',
      url,
      path,
      authorization: request.headers.authorization,
      contentType,
      rawBody,
      body,
      receivedAt: Date.now(),
    };
    this.calls.push(call);

    const rule = this.rules.find((candidate) => candidate.match(call) && (candidate.times ?? 1) > 0);
    if (rule?.times !== undefined) rule.times--;
    if (rule?.delayMs) await new Promise((resolve) => setTimeout(resolve, rule.delayMs));
    if (rule?.status === 'drop') {
      request.socket.destroy();
      return;
    }
    if (typeof rule?.status === 'number') {
      return this.answer(
        call,
        response,
        rule.status,
        { error: { code: 'Injected', message: 'test rule' } },
        {
          ...(rule.retryAfter === undefined ? {} : { 'retry-after': rule.retryAfter }),
        },
      );
    }

    if (path.startsWith('/pl/')) {
      const pem = this.certificates.get(path);
      if (pem === undefined) return this.answer(call, response, 404, { error: 'no such key' });
      response.writeHead(200, { 'content-type': 'application/x-pem-file' });
      response.end(pem);
      call.status = 200;
      call.answeredAt = Date.now();
      return;
    }
    if (path === '/oauth/token') return this.token(call, response);
    if (path.includes('/confirm-registration')) return this.answer(call, response, 200, { targetUrl: 'ok' });

    const bearer = /^Bearer (.+)$/.exec(call.authorization ?? '')?.[1];
    if (bearer === undefined || this.refusedTokens.has(bearer)) {
      return this.answer(call, response, 401, { error: { code: 'Unauthorized' } });
    }
    if (call.method === 'DELETE') return this.answer(call, response, 200, { count: 1 });
    return this.answer(call, response, 200, { id: `created-${this.calls.length}` });
  }

  private async token(call: RecordedCall, response: http.ServerResponse): Promise<void> {
    if (this.tokenDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.tokenDelayMs));
    const expected = `Basic ${Buffer.from(`${this.clientId}:${this.clientSecret}`).toString('base64')}`;
    if (call.authorization !== expected) return this.answer(call, response, 401, { error: 'invalid_client' });
    const form = (call.body ?? {}) as Record<string, string>;
    const grant = form.grant_type === 'refresh_token' ? this.grants.get(form.refresh_token) : undefined;
    if (grant === undefined) return this.answer(call, response, 400, { error: 'invalid_grant' });
    this.grants.delete(form.refresh_token);
    return this.answer(call, response, 200, {
      access_token: grant.accessToken,
      token_type: 'bearer',
      refresh_token: grant.refreshToken,
      expires_in: grant.expiresIn ?? 86_399,
      scope: 'r:devices:*',
    });
  }

  private answer(
    call: RecordedCall,
    response: http.ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ): void {
    response.writeHead(status, { 'content-type': 'application/json', ...headers });
    response.end(JSON.stringify(body));
    call.status = status;
    call.answeredAt = Date.now();
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
