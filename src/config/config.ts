// Environment → one typed, frozen configuration object, validated once at start.
// A bad value stops the start with one line naming the variable (ConfigError.message).
import path from 'node:path';
import { DatabaseUrlError, parseDatabaseUrl, type DatabaseConfig } from '../database/database-url.js';

export type { DatabaseConfig };
import { EgressPolicy } from '../egress/egress-policy.js';

/** The areas this build serves; MODULES may name any of them (a new area adds its name here). */
export const AREAS = ['schedules', 'migrations', 'mail', 'webhook', 'users', 'replication'] as const;
export type Area = (typeof AREAS)[number];

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface AppConfig {
  port: number;
  host: string;
  dataDir: string;
  database: DatabaseConfig;
  apiKeys: readonly string[];
  encryptionKey: Buffer | undefined;
  encryptionPreviousKeys: readonly Buffer[];
  logLevel: LogLevel;
  migrationsRun: boolean;
  publicOccurrences: boolean;
  metricsPublic: boolean;
  bodyLimit: number;
  rateLimit: number;
  requestTimeoutMs: number;
  /**
   * PostgreSQL, while serving: how long a statement may wait for a lock (lock_timeout) and run at all
   * (statement_timeout) before it fails as busy; both below the request time-out, so a request is answered, and its
   * transaction over, before its deadline. 0 = no limit.
   */
  databaseTimeouts: { lockMs: number; statementMs: number };
  /** Requests of the long-work routes (imports, exports, bulk SCIM) one instance carries out at a time. */
  longWorkConcurrency: number;
  /** Requests of one database-bound area (schedules, SCIM) in flight at a time per instance; 0 = no limit. */
  areaConcurrency: number;
  trustProxy: boolean;
  securityHeaders: boolean;
  /** Controller methods called straight from their Fastify route where Nest's pipeline adds nothing (http/direct-routes.ts). */
  directRoutes: boolean;
  corsOrigins: readonly string[] | '*' | undefined;
  modules: readonly Area[];
  smartthings: {
    publicKey: string | undefined;
    keyUrl: string;
    apiUrl: string;
    /** OAuth token endpoint for refreshing installed apps' tokens (SMARTTHINGS_TOKEN_URL). */
    tokenUrl: string;
    clientId: string | undefined;
    clientSecret: string | undefined;
    verifySignatures: boolean;
  };
  replication: { serverId: string | undefined; staleSeconds: number };
  /** Mail area: connecting, the greeting and the TLS upgrade may each take this long; other replies twice that. */
  mail: { smtpTimeoutMs: number; maxConfigurationsPerTenant: number };
  /** Egress policy for caller-supplied destinations (src/egress/): CIDRs or host names opened / closed. */
  outbound: { allow: readonly string[]; deny: readonly string[] };
  /** Where RATE_LIMIT is counted: this process, the database (shared by every instance on it), or Redis. */
  rateLimitStore: RateLimitStore;
  /** SIGTERM: how long in-flight requests and running jobs may take to finish before the process exits. */
  shutdownTimeoutMs: number;
  /** SIGTERM: how long readiness is 503 while the instance still serves, before it stops accepting connections. */
  shutdownDelayMs: number;
  /** Mean event-loop delay (ms, sampled each second) above which new requests get 503 Overloaded; 0 = never. */
  overloadEventLoopDelayMs: number;
  /** iCalendar imports: the bodies of those in progress at once on this instance, at most (one is always admitted). */
  importInflightBytes: number;
  /** Background jobs (src/jobs/): how long a claimed job stays with its instance without a heartbeat. */
  jobs: { leaseMs: number; pollMs: number };
  retention: { replicationDays: number; webhookEventDays: number; auditDays: number };
  /** Access tokens (JWT) from the organisation's OpenID provider beside API keys (src/auth/access-tokens.service.ts). */
  oidc: OidcConfig | undefined;
}

export interface OidcConfig {
  /** OIDC_ISSUER exactly as the tokens' `iss` carries it (a trailing slash is kept: Auth0 sends one). */
  issuer: string;
  /** `<issuer without trailing slash>/.well-known/openid-configuration` (OpenID Connect Discovery 1.0 §4). */
  discoveryUrl: string;
  /** OIDC_AUDIENCE: a token's `aud` must name one of these. */
  audiences: readonly string[];
  /** OIDC_SCOPE_PREFIX: only claim values starting with it name the service's scopes ('' = the bare names). */
  scopePrefix: string;
  /** OIDC_TENANT_CLAIM: the claim listing the tenants a token may act for; undefined = every tenant. */
  tenantClaim: string | undefined;
  clockToleranceSeconds: number;
  /** The signing keys are fetched again at most this often (an unknown `kid`, a failed fetch). */
  jwksMinRefreshSeconds: number;
}

export type RateLimitStore = { kind: 'memory' } | { kind: 'database' } | { kind: 'redis'; url: string };

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`Invalid configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function text(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max)
    throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = text(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (['true', '1', 'yes', 'on'].includes(raw)) return true;
  if (['false', '0', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

const SIZE_UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  kb: 1024,
  kib: 1024,
  mb: 1024 ** 2,
  mib: 1024 ** 2,
};

function byteSize(env: Env, name: string, fallback: number, maxMib = 100): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  const match = /^(\d+)\s*([a-z]*)$/i.exec(raw);
  const unit = match ? SIZE_UNITS[match[2].toLowerCase()] : undefined;
  if (!match || unit === undefined)
    throw new ConfigError(name, `must be a size like 1048576, 512kb or 1mb, got "${raw}"`);
  const value = Number(match[1]) * unit;
  if (value < 1024 || value > maxMib * 1024 ** 2)
    throw new ConfigError(name, `must be between 1kb and ${maxMib}mb`);
  return value;
}

function url(env: Env, name: string, fallback: string): string {
  const raw = text(env, name) ?? fallback;
  try {
    const parsed = new URL(raw);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error();
  } catch {
    throw new ConfigError(name, `must be an http(s) URL, got "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
}

/** 32 bytes as base64 (44 chars) or hex (64 chars). */
export function parseEncryptionKey(raw: string, variable: string): Buffer {
  const value = raw.trim();
  const key = /^[0-9a-f]{64}$/i.test(value) ? Buffer.from(value, 'hex') : Buffer.from(value, 'base64');
  if (key.length !== 32 || (!/^[0-9a-f]{64}$/i.test(value) && key.toString('base64') !== value)) {
    throw new ConfigError(variable, 'must be 32 random bytes, base64 (44 characters) or hex (64 characters)');
  }
  return key;
}

function database(env: Env, dataDir: string): DatabaseConfig {
  const raw = text(env, 'DATABASE_URL') ?? `sqlite:${path.join(dataDir, 'platform.sqlite')}`;
  try {
    return parseDatabaseUrl(raw);
  } catch (error) {
    if (error instanceof DatabaseUrlError) throw new ConfigError('DATABASE_URL', error.problem);
    throw error;
  }
}

function list(env: Env, name: string): string[] {
  return (text(env, name) ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

function egressList(env: Env, name: string): string[] {
  const entries = list(env, name);
  try {
    EgressPolicy.validateEntries(entries);
  } catch (error) {
    throw new ConfigError(name, `must be comma-separated CIDRs or host names: ${(error as Error).message}`);
  }
  return entries;
}

function modules(env: Env): Area[] {
  const names = list(env, 'MODULES').map((name) => name.toLowerCase());
  if (names.length === 0 || (names.length === 1 && names[0] === 'all')) return [...AREAS];
  const unknown = names.filter((name) => !(AREAS as readonly string[]).includes(name));
  if (unknown.length > 0)
    throw new ConfigError(
      'MODULES',
      `names unknown areas: ${unknown.join(', ')} (known: ${AREAS.join(', ')})`,
    );
  return [...new Set(names)] as Area[];
}

function rateLimitStore(env: Env, db: DatabaseConfig): RateLimitStore {
  const raw = text(env, 'RATE_LIMIT_STORE');
  if (raw === undefined) return db.type === 'postgres' ? { kind: 'database' } : { kind: 'memory' };
  const lower = raw.toLowerCase();
  if (lower === 'memory' || lower === 'database') return { kind: lower };
  if (/^rediss?:\/\//i.test(raw)) {
    try {
      new URL(raw);
    } catch {
      throw new ConfigError('RATE_LIMIT_STORE', 'is not a valid redis:// URL');
    }
    return { kind: 'redis', url: raw };
  }
  throw new ConfigError('RATE_LIMIT_STORE', `must be memory, database or a redis:// URL, got "${raw}"`);
}

/** A bearer of this shape is read as a JWT when OIDC_ISSUER is set: three base64url parts joined by dots. */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*$/.test(token);
}

const OIDC_SETTINGS = [
  'OIDC_AUDIENCE',
  'OIDC_SCOPE_PREFIX',
  'OIDC_TENANT_CLAIM',
  'OIDC_CLOCK_TOLERANCE_SECONDS',
  'OIDC_JWKS_MIN_REFRESH_SECONDS',
] as const;

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** The issuer is trusted with every caller's identity: https, except on loopback (a development provider). */
function oidcIssuer(raw: string): string {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError('OIDC_ISSUER', `must be an https URL, got "${raw}"`);
  }
  const loopback = parsed.protocol === 'http:' && LOOPBACK_HOSTS.has(parsed.hostname);
  if (parsed.protocol !== 'https:' && !loopback)
    throw new ConfigError('OIDC_ISSUER', `must be an https URL (http only on loopback), got "${raw}"`);
  if (parsed.search !== '' || parsed.hash !== '' || parsed.username !== '' || parsed.password !== '')
    throw new ConfigError('OIDC_ISSUER', 'must have no query, fragment or credentials');
  return raw;
}

function oidc(env: Env, apiKeys: readonly string[]): OidcConfig | undefined {
  const raw = text(env, 'OIDC_ISSUER');
  if (raw === undefined) {
    const stray = OIDC_SETTINGS.find((name) => text(env, name) !== undefined);
    if (stray !== undefined) throw new ConfigError(stray, 'is set but OIDC_ISSUER is not');
    return undefined;
  }
  const issuer = oidcIssuer(raw);
  const audiences = list(env, 'OIDC_AUDIENCE');
  if (audiences.length === 0)
    throw new ConfigError('OIDC_AUDIENCE', 'is required with OIDC_ISSUER (the audience your tokens name)');
  if (apiKeys.some(looksLikeJwt))
    throw new ConfigError(
      'API_KEYS',
      'holds a key shaped like a JWT (a.b.c), which OIDC_ISSUER reads as a token',
    );
  const tenantClaim = text(env, 'OIDC_TENANT_CLAIM');
  if (tenantClaim !== undefined && !/^[A-Za-z0-9_:./-]{1,200}$/.test(tenantClaim))
    throw new ConfigError('OIDC_TENANT_CLAIM', `must be a claim name, got "${tenantClaim}"`);
  return {
    issuer,
    discoveryUrl: `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`,
    audiences,
    scopePrefix: text(env, 'OIDC_SCOPE_PREFIX') ?? '',
    tenantClaim,
    clockToleranceSeconds: integer(env, 'OIDC_CLOCK_TOLERANCE_SECONDS', 30, 0, 300),
    jwksMinRefreshSeconds: integer(env, 'OIDC_JWKS_MIN_REFRESH_SECONDS', 10, 1, 3600),
  };
}

/**
 * The statement limit defaults to half the request time-out (at least 3 s, at most 15 s), the lock wait to 3 s (at
 * most the statement limit): a blocked write is a 503 busy within seconds, and with a request time-out of 6 s or
 * more no statement outlives its request's answer. A value set explicitly must be below the request time-out.
 */
function databaseTimeouts(env: Env, requestTimeoutMs: number): AppConfig['databaseTimeouts'] {
  const statementDefault =
    requestTimeoutMs > 0 ? Math.min(15_000, Math.max(Math.ceil(requestTimeoutMs / 2), 3_000)) : 15_000;
  const statementMs = integer(env, 'DATABASE_STATEMENT_TIMEOUT_MS', statementDefault, 1, 3_600_000);
  if (
    text(env, 'DATABASE_STATEMENT_TIMEOUT_MS') !== undefined &&
    requestTimeoutMs > 0 &&
    statementMs >= requestTimeoutMs
  )
    throw new ConfigError(
      'DATABASE_STATEMENT_TIMEOUT_MS',
      `must be below REQUEST_TIMEOUT_MS (${requestTimeoutMs}), got ${statementMs}`,
    );
  const lockMs = integer(env, 'DATABASE_LOCK_TIMEOUT_MS', Math.min(3_000, statementMs), 1, statementMs);
  return { lockMs, statementMs };
}

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadConfig(env: Env = process.env): AppConfig {
  const dataDir = path.resolve(text(env, 'DATA_DIR') ?? './data');
  const logLevel = (text(env, 'LOG_LEVEL') ?? 'info').toLowerCase() as LogLevel;
  if (!LOG_LEVELS.includes(logLevel))
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  const host = text(env, 'HOST') ?? '0.0.0.0';
  const cors = text(env, 'CORS_ORIGINS');
  const apiKeys = list(env, 'API_KEYS');
  const shortKey = apiKeys.find((key) => key.length < 16);
  if (shortKey !== undefined) throw new ConfigError('API_KEYS', 'holds a key shorter than 16 characters');
  const publicKeyFile = text(env, 'SMARTTHINGS_PUBLIC_KEY_FILE');
  const publicKeyInline = text(env, 'SMARTTHINGS_PUBLIC_KEY');
  if (publicKeyFile !== undefined && publicKeyInline !== undefined) {
    throw new ConfigError('SMARTTHINGS_PUBLIC_KEY_FILE', 'and SMARTTHINGS_PUBLIC_KEY are both set; set one');
  }
  const encryptionKey = text(env, 'ENCRYPTION_KEY');
  const databaseConfig = database(env, dataDir);
  const requestTimeoutMs = integer(env, 'REQUEST_TIMEOUT_MS', 30_000, 0, 3_600_000);

  const config: AppConfig = {
    port: integer(env, 'PORT', 3000, 0, 65535),
    host,
    dataDir,
    database: databaseConfig,
    apiKeys,
    encryptionKey:
      encryptionKey === undefined ? undefined : parseEncryptionKey(encryptionKey, 'ENCRYPTION_KEY'),
    encryptionPreviousKeys: list(env, 'ENCRYPTION_PREVIOUS_KEYS').map((key) =>
      parseEncryptionKey(key, 'ENCRYPTION_PREVIOUS_KEYS'),
    ),
    logLevel,
    migrationsRun: boolean(env, 'MIGRATIONS_RUN', true),
    publicOccurrences: boolean(env, 'PUBLIC_OCCURRENCES', true),
    metricsPublic: boolean(env, 'METRICS_PUBLIC', false),
    bodyLimit: byteSize(env, 'BODY_LIMIT', 1024 * 1024),
    rateLimit: integer(env, 'RATE_LIMIT', 6000, 0, 10_000_000),
    requestTimeoutMs,
    databaseTimeouts: databaseTimeouts(env, requestTimeoutMs),
    longWorkConcurrency: integer(env, 'LONG_WORK_CONCURRENCY', 4, 1, 1_000),
    areaConcurrency: integer(env, 'AREA_CONCURRENCY', 6, 0, 1_000),
    trustProxy: boolean(env, 'TRUST_PROXY', false),
    securityHeaders: boolean(env, 'SECURITY_HEADERS', true),
    directRoutes: boolean(env, 'DIRECT_ROUTES', true),
    corsOrigins: cors === undefined ? undefined : cors === '*' ? '*' : list(env, 'CORS_ORIGINS'),
    modules: modules(env),
    smartthings: {
      publicKey: publicKeyFile !== undefined ? `file:${path.resolve(publicKeyFile)}` : publicKeyInline,
      keyUrl: url(env, 'SMARTTHINGS_KEY_URL', 'https://key.smartthings.com'),
      apiUrl: url(env, 'SMARTTHINGS_API_URL', 'https://api.smartthings.com'),
      // SmartThings' documented token endpoint; a non-default API URL (a proxy, a test double) serves it too.
      tokenUrl: url(
        env,
        'SMARTTHINGS_TOKEN_URL',
        text(env, 'SMARTTHINGS_API_URL') === undefined
          ? 'https://auth-global.api.smartthings.com/oauth/token'
          : `${url(env, 'SMARTTHINGS_API_URL', 'https://api.smartthings.com')}/oauth/token`,
      ),
      clientId: text(env, 'SMARTTHINGS_CLIENT_ID'),
      clientSecret: text(env, 'SMARTTHINGS_CLIENT_SECRET'),
      verifySignatures: !boolean(env, 'SMARTTHINGS_DISABLE_SIGNATURE_VERIFICATION_UNSAFE', false),
    },
    replication: {
      serverId: text(env, 'REPLICATION_SERVER_ID'),
      staleSeconds: integer(env, 'REPLICATION_STALE_SECONDS', 180, 1, 86_400 * 30),
    },
    mail: {
      smtpTimeoutMs: integer(env, 'SMTP_TIMEOUT_MS', 5000, 100, 120_000),
      maxConfigurationsPerTenant: integer(env, 'SMTP_MAX_CONFIGURATIONS_PER_TENANT', 20, 1, 1000),
    },
    outbound: { allow: egressList(env, 'OUTBOUND_ALLOW'), deny: egressList(env, 'OUTBOUND_DENY') },
    rateLimitStore: rateLimitStore(env, databaseConfig),
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    shutdownDelayMs: integer(env, 'SHUTDOWN_DELAY_MS', 0, 0, 600_000),
    overloadEventLoopDelayMs: integer(env, 'OVERLOAD_EVENT_LOOP_DELAY_MS', 1_000, 0, 60_000),
    importInflightBytes: byteSize(env, 'IMPORT_INFLIGHT_BYTES', 32 * 1024 ** 2, 4096),
    jobs: {
      leaseMs: integer(env, 'JOB_LEASE_MS', 30_000, 1_000, 3_600_000),
      pollMs: integer(env, 'JOB_POLL_MS', 1_000, 50, 60_000),
    },
    retention: {
      replicationDays: integer(env, 'REPLICATION_RETENTION_DAYS', 30, 1, 36_500),
      webhookEventDays: integer(env, 'WEBHOOK_EVENT_RETENTION_DAYS', 30, 1, 36_500),
      auditDays: integer(env, 'AUDIT_RETENTION_DAYS', 365, 1, 36_500),
    },
    oidc: oidc(env, apiKeys),
  };
  return deepFreeze(config);
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Buffer.isBuffer(value) && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

export const APP_CONFIG = Symbol('APP_CONFIG');
