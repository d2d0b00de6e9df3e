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
  ])('names %s when its value %p is bad', (variable, value) => {
    expect(() => load({ [variable]: value })).toThrow(ConfigError);
    expect(() => load({ [variable]: value })).toThrow(new RegExp(`^Invalid configuration: ${variable} `));
  });
});
