import { describe, expect, it } from '@jest/globals';
import { AREAS, ConfigError, loadConfig } from './config.js';

const load = (env: Record<string, string>) => loadConfig({ DATA_DIR: '/tmp/pa-config-spec', ...env });

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const config = load({});
    expect(config).toMatchObject({
      port: 3000,
      host: '0.0.0.0',
      database: { type: 'sqlite', database: '/tmp/pa-config-spec/platform.sqlite' },
      apiKeys: [],
      logLevel: 'info',
      migrationsRun: true,
      publicOccurrences: true,
      bodyLimit: 1024 * 1024,
      rateLimit: 6000,
      shutdownTimeoutMs: 10_000,
      shutdownDelayMs: 0,
      modules: [...AREAS],
      corsOrigins: undefined,
      smartthings: {
        apiUrl: 'https://api.smartthings.com',
        keyUrl: 'https://key.smartthings.com',
        verifySignatures: true,
      },
    });
    expect(Object.isFrozen(config) && Object.isFrozen(config.smartthings)).toBe(true);
  });

  it('bounds PostgreSQL lock waits and statements below the request time-out', () => {
    expect(load({}).databaseTimeouts).toEqual({ lockMs: 3_000, statementMs: 15_000 });
    expect(load({}).longWorkConcurrency).toBe(4);
    expect(load({}).areaConcurrency).toBe(6);
    expect(load({ REQUEST_TIMEOUT_MS: '10000' }).databaseTimeouts).toEqual({
      lockMs: 3_000,
      statementMs: 5_000,
    });
    expect(load({ REQUEST_TIMEOUT_MS: '300' }).databaseTimeouts).toEqual({
      lockMs: 3_000,
      statementMs: 3_000,
    });
    expect(
      load({ REQUEST_TIMEOUT_MS: '4000', DATABASE_STATEMENT_TIMEOUT_MS: '2000' }).databaseTimeouts,
    ).toEqual({ lockMs: 2_000, statementMs: 2_000 });
    expect(load({ REQUEST_TIMEOUT_MS: '0' }).databaseTimeouts).toEqual({
      lockMs: 3_000,
      statementMs: 15_000,
    });
    expect(
      load({ DATABASE_STATEMENT_TIMEOUT_MS: '20000', DATABASE_LOCK_TIMEOUT_MS: '500' }).databaseTimeouts,
    ).toEqual({ lockMs: 500, statementMs: 20_000 });
    expect(() => load({ DATABASE_STATEMENT_TIMEOUT_MS: '30000' })).toThrow(/DATABASE_STATEMENT_TIMEOUT_MS/);
    expect(() => load({ DATABASE_STATEMENT_TIMEOUT_MS: '0' })).toThrow(/DATABASE_STATEMENT_TIMEOUT_MS/);
    expect(() => load({ DATABASE_LOCK_TIMEOUT_MS: '20000' })).toThrow(/DATABASE_LOCK_TIMEOUT_MS/);
    expect(() => load({ LONG_WORK_CONCURRENCY: '0' })).toThrow(/LONG_WORK_CONCURRENCY/);
  });

  it('reads the egress policy (OUTBOUND_ALLOW / OUTBOUND_DENY) and the per-tenant SMTP cap', () => {
    expect(load({}).outbound).toEqual({ allow: [], deny: [] });
    expect(load({}).mail.maxConfigurationsPerTenant).toBe(20);
    const config = load({
      OUTBOUND_ALLOW: '127.0.0.1, relay.internal ,::1/128',
      OUTBOUND_DENY: '10.0.0.0/8,db.internal',
      SMTP_MAX_CONFIGURATIONS_PER_TENANT: '5',
    });
    expect(config.outbound).toEqual({
      allow: ['127.0.0.1', 'relay.internal', '::1/128'],
      deny: ['10.0.0.0/8', 'db.internal'],
    });
    expect(config.mail.maxConfigurationsPerTenant).toBe(5);
    for (const [name, value] of [
      ['OUTBOUND_ALLOW', '127.0.0.1/33'],
      ['OUTBOUND_DENY', 'not a host!'],
      ['OUTBOUND_DENY', 'example.com/8'],
    ]) {
      expect(() => load({ [name]: value })).toThrow(ConfigError);
      expect(() => load({ [name]: value })).toThrow(name);
    }
  });

  it('reads every kind of value', () => {
    const key = Buffer.alloc(32, 7);
    const config = load({
      PORT: '8080',
      DATABASE_URL: 'postgres://u@db.internal:5432/platform',
      API_KEYS: 'aaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbb',
      ENCRYPTION_KEY: key.toString('base64'),
      ENCRYPTION_PREVIOUS_KEYS: key.toString('hex'),
      PUBLIC_OCCURRENCES: 'false',
      BODY_LIMIT: '512kb',
      RATE_LIMIT: '0',
      CORS_ORIGINS: 'https://a.example, https://b.example',
      MODULES: 'Migrations',
      LOG_LEVEL: 'WARN',
      SHUTDOWN_DELAY_MS: '10000',
    });
    expect(config).toMatchObject({
      port: 8080,
      database: { type: 'postgres', url: 'postgres://u@db.internal:5432/platform' },
      apiKeys: ['aaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbb'],
      publicOccurrences: false,
      bodyLimit: 512 * 1024,
      rateLimit: 0,
      corsOrigins: ['https://a.example', 'https://b.example'],
      modules: ['migrations'],
      logLevel: 'warn',
      shutdownDelayMs: 10_000,
    });
    expect(config.encryptionKey?.equals(key)).toBe(true);
    expect(config.encryptionPreviousKeys[0]?.equals(key)).toBe(true);
    expect(load({ DATABASE_URL: 'sqlite::memory:' }).database).toEqual({
      type: 'sqlite',
      database: ':memory:',
    });
  });

  it('bounds the imports in progress by IMPORT_INFLIGHT_BYTES: 32 MiB by default, up to 4096 MiB', () => {
    expect(load({}).importInflightBytes).toBe(32 * 1024 * 1024);
    expect(load({ IMPORT_INFLIGHT_BYTES: '4096mb' }).importInflightBytes).toBe(4096 * 1024 * 1024);
  });

  it.each([
    ['PORT', '70000'],
    ['PORT', '12ab'],
    ['DATABASE_URL', 'mysql://x'],
    ['API_KEYS', 'short'],
    ['ENCRYPTION_KEY', 'abc'],
    ['MIGRATIONS_RUN', 'maybe'],
    ['BODY_LIMIT', '10 parsecs'],
    ['RATE_LIMIT', '-5'],
    ['MODULES', 'warp-drive'],
    ['LOG_LEVEL', 'loud'],
    ['SMARTTHINGS_API_URL', 'ftp://x'],
    ['SHUTDOWN_DELAY_MS', '-1'],
    ['SHUTDOWN_DELAY_MS', '5s'],
    ['IMPORT_INFLIGHT_BYTES', '5gb'],
    ['IMPORT_INFLIGHT_BYTES', '5000mb'],
  ])('names %s when its value %p is bad', (variable, value) => {
    expect(() => load({ [variable]: value })).toThrow(ConfigError);
    expect(() => load({ [variable]: value })).toThrow(new RegExp(`^Invalid configuration: ${variable} `));
  });
});

describe('loadConfig: access tokens (OIDC_*)', () => {
  const issuer = 'https://login.example.com/tenant/v2.0';

  it('is off without OIDC_ISSUER, and refuses other OIDC_* settings then', () => {
    expect(load({}).oidc).toBeUndefined();
    expect(() => load({ OIDC_AUDIENCE: 'api://x' })).toThrow('OIDC_AUDIENCE is set but OIDC_ISSUER is not');
  });

  it('reads the issuer, audiences, prefix, tenant claim and timings, with defaults', () => {
    expect(load({ OIDC_ISSUER: `${issuer}/`, OIDC_AUDIENCE: 'api://a, b' }).oidc).toEqual({
      issuer: `${issuer}/`,
      discoveryUrl: `${issuer}/.well-known/openid-configuration`,
      audiences: ['api://a', 'b'],
      scopePrefix: '',
      tenantClaim: undefined,
      clockToleranceSeconds: 30,
      jwksMinRefreshSeconds: 10,
    });
    expect(
      load({
        OIDC_ISSUER: 'http://127.0.0.1:8080/realms/platform',
        OIDC_AUDIENCE: 'platform-api',
        OIDC_SCOPE_PREFIX: 'platform.',
        OIDC_TENANT_CLAIM: 'platform_tenants',
        OIDC_CLOCK_TOLERANCE_SECONDS: '5',
        OIDC_JWKS_MIN_REFRESH_SECONDS: '60',
      }).oidc,
    ).toMatchObject({
      scopePrefix: 'platform.',
      tenantClaim: 'platform_tenants',
      clockToleranceSeconds: 5,
      jwksMinRefreshSeconds: 60,
    });
  });

  it.each([
    [{ OIDC_ISSUER: issuer }, 'OIDC_AUDIENCE is required'],
    [{ OIDC_ISSUER: 'http://idp.example.com', OIDC_AUDIENCE: 'a' }, 'OIDC_ISSUER must be an https URL'],
    [{ OIDC_ISSUER: 'not a url', OIDC_AUDIENCE: 'a' }, 'OIDC_ISSUER must be an https URL'],
    [{ OIDC_ISSUER: `${issuer}?x=1`, OIDC_AUDIENCE: 'a' }, 'OIDC_ISSUER must have no query'],
    [
      { OIDC_ISSUER: issuer, OIDC_AUDIENCE: 'a', OIDC_TENANT_CLAIM: 'a b' },
      'OIDC_TENANT_CLAIM must be a claim',
    ],
    [{ OIDC_ISSUER: issuer, OIDC_AUDIENCE: 'a', OIDC_CLOCK_TOLERANCE_SECONDS: '301' }, 'between 0 and 300'],
    [{ OIDC_ISSUER: issuer, OIDC_AUDIENCE: 'a', OIDC_JWKS_MIN_REFRESH_SECONDS: '0' }, 'between 1 and 3600'],
    [
      { OIDC_ISSUER: issuer, OIDC_AUDIENCE: 'a', API_KEYS: 'aaaaaaaaaa.bbbbbbbbbb.cccc' },
      'API_KEYS holds a key shaped',
    ],
  ])('stops the start on %j', (env, message) => {
    expect(() => load(env)).toThrow(ConfigError);
    expect(() => load(env)).toThrow(message);
  });
});
