// A real OpenID provider on loopback for the access-token specs: oauth2-mock-server's discovery, JWKS
// and token endpoints (client-credentials grant, RS256), served by a plain HTTP server of ours so a spec can count
// the JWKS fetches, rotate the keys without a restart (a new keystore: new key published, old one gone), and take
// the issuer down and up again on the same address.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { OAuth2Issuer, OAuth2Service, type JWK, type MutableToken } from 'oauth2-mock-server';

export const TEST_AUDIENCE = 'api://platform-api-test';

export class TestIssuer {
  private service!: OAuth2Service;
  private issuer!: OAuth2Issuer;
  private server: http.Server | undefined;
  private port = 0;
  /** Requests per path since start (e.g. '/jwks'). */
  readonly hits = new Map<string, number>();

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The kid of the key tokens are signed with now. */
  get kid(): string {
    const key = this.issuer.keys.get();
    if (key === undefined) throw new Error('the issuer has no key');
    return key.kid;
  }

  async start(): Promise<this> {
    await this.rotate();
    await this.up();
    this.issuer.url = this.url;
    return this;
  }

  /** A new keystore with one new RSA key: tokens signed with the old key no longer verify at a fresh fetch. */
  async rotate(): Promise<void> {
    const issuer = new OAuth2Issuer();
    issuer.url = this.port === 0 ? undefined : this.url;
    await issuer.keys.generate('RS256');
    const service = new OAuth2Service(issuer);
    // Client credentials: the token names its client (sub and client_id, as Okta and RFC 9068 do) and audience.
    service.on('beforeTokenSigning', (token: MutableToken, request: http.IncomingMessage) => {
      const client = (request as { body?: Record<string, unknown> }).body?.client_id;
      if (typeof client === 'string') Object.assign(token.payload, { sub: client, client_id: client });
    });
    this.issuer = issuer;
    this.service = service;
  }

  /** Listens (again) on the same port. */
  async up(): Promise<void> {
    const server = http.createServer((request, response) => {
      const path = (request.url ?? '').split('?')[0] ?? '';
      this.hits.set(path, (this.hits.get(path) ?? 0) + 1);
      this.service.requestHandler(request, response);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Stops answering: connections are refused until up(). */
  async down(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** A token from the client-credentials grant at the token endpoint, as a workload gets one. */
  async clientCredentials(clientId: string, scope: string, audience = TEST_AUDIENCE): Promise<string> {
    const response = await fetch(`${this.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: clientId,
        scope,
        aud: audience,
      }),
    });
    if (response.status !== 200) throw new Error(`token endpoint answered ${response.status}`);
    return ((await response.json()) as { access_token: string }).access_token;
  }

  /** A token signed by the issuer's current key with these claims (on top of iss, iat, nbf, exp, aud, sub). */
  sign(
    claims: Record<string, unknown>,
    options: { expiresIn?: number; header?: Record<string, unknown> } = {},
  ) {
    return this.issuer.buildToken({
      expiresIn: options.expiresIn ?? 300,
      scopesOrTransform: (header, payload) => {
        Object.assign(payload, { aud: TEST_AUDIENCE, sub: 'workload-1' }, claims);
        Object.assign(header, options.header);
      },
    });
  }

  /** The current public keys as the JWKS endpoint serves them. */
  publicJwks(): JWK[] {
    return this.issuer.keys.toJSON();
  }

  async close(): Promise<void> {
    await this.down();
  }
}
