// API keys: random 256-bit keys shown once, stored as SHA-256 hashes with per-area scopes.
// Keys from API_KEYS have full access. Verified keys are cached briefly so a request costs no query.
// Revocation reaches every instance: on PostgreSQL a revoke sends NOTIFY on REVOCATION_CHANNEL and every instance
// drops its cache at once (while its listener is down, cached entries live only REVOCATION_FALLBACK_TTL_MS); on
// SQLite another process's revoke is seen when the entry expires (CACHE_TTL_MS).
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Logger } from 'pino';
import { IsNull, type EntityManager, type Repository } from 'typeorm';
import { systemSource, type AuditSource } from '../audit/audit-source.js';
import { writeAuditEvent, type AuditEntry } from '../audit/audit-trail.js';
import { APP_CONFIG, type AppConfig } from '../config/config.js';
import { ROOT_LOGGER } from '../core/tokens.js';
import { PgListener } from '../database/pg-listener.js';
import { ApiKey } from './entities/api-key.entity.js';
import type { Principal } from './principal.js';
import type { Scope } from './scopes.js';

export interface CreatedApiKey {
  key: string;
  record: ApiKey;
}

const KEY_PREFIX = 'pk_';
export const CACHE_TTL_MS = 30_000;
/** PostgreSQL without a working listener: short enough that a revocation still lands within ~2 s. */
const REVOCATION_FALLBACK_TTL_MS = 1_000;
export const REVOCATION_CHANNEL = 'platform_api_keys';
const CACHE_MAX = 10_000;

export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

@Injectable()
export class ApiKeysService implements OnModuleDestroy {
  private readonly envKeys: Array<{ hash: Buffer; principal: Principal }>;
  private readonly cache = new Map<string, { principal: Principal | undefined; expires: number }>();
  private listener: PgListener | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectRepository(ApiKey) private readonly keys: Repository<ApiKey>,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
  ) {
    this.envKeys = config.apiKeys.map((key, index) => {
      const hash = hashKey(key);
      return { hash: Buffer.from(hash, 'hex'), principal: envKeyPrincipal(hash, index) };
    });
  }

  /** The service (not the CLI) listens for revocations made by any process on the database. */
  async watchRevocations(): Promise<void> {
    if (this.config.database.type !== 'postgres' || this.listener !== undefined) return;
    this.listener = new PgListener(this.config.database.url, this.logger, 'platform-api-keys');
    await this.listener.listen(REVOCATION_CHANNEL, () => this.cache.clear());
  }

  async onModuleDestroy(): Promise<void> {
    await this.listener?.close();
  }

  private get cacheTtlMs(): number {
    if (this.config.database.type !== 'postgres') return CACHE_TTL_MS;
    return this.listener?.listening === true ? CACHE_TTL_MS : REVOCATION_FALLBACK_TTL_MS;
  }

  async verify(token: string): Promise<Principal | undefined> {
    const hash = hashKey(token);
    const hashBytes = Buffer.from(hash, 'hex');
    const envKey = this.envKeys.find((candidate) => timingSafeEqual(candidate.hash, hashBytes));
    if (envKey !== undefined) return envKey.principal;

    // Monotonic: a step back of the wall clock must not keep a cached answer (or a refusal) for hours.
    const now = performance.now();
    const cached = this.cache.get(hash);
    if (cached && cached.expires > now) return cached.principal;
    const record = await this.keys.findOne({ where: { keyHash: hash, revokedAt: IsNull() } });
    const principal = record ? toPrincipal(record) : undefined;
    if (this.cache.size >= CACHE_MAX) this.cache.clear();
    this.cache.set(hash, { principal, expires: now + this.cacheTtlMs });
    return principal;
  }

  /** `by`: who creates it, for the audit trail (the CLI passes its operator; otherwise the service itself). */
  async create(
    name: string,
    scopes: readonly Scope[],
    domains?: readonly string[],
    by: AuditSource = systemSource('api-keys'),
  ): Promise<CreatedApiKey> {
    const created = newKey(name, scopes, domains);
    await this.keys.manager.transaction(async (manager) => {
      await manager.insert(ApiKey, created.record);
      await writeAuditEvent(manager, keyChange(by, 'create', created.record));
    });
    return created;
  }

  list(): Promise<ApiKey[]> {
    return this.keys.find({ order: { createdAt: 'ASC' } });
  }

  /** Revokes by id or by the displayed prefix; returns the revoked key, or undefined when none matched. */
  async revoke(idOrPrefix: string, by: AuditSource = systemSource('api-keys')): Promise<ApiKey | undefined> {
    const matches = (await this.keys.find({ where: { revokedAt: IsNull() } })).filter(
      (key) => key.id === idOrPrefix || key.keyPrefix === idOrPrefix,
    );
    if (matches.length > 1) throw new Error(`"${idOrPrefix}" matches ${matches.length} keys; use the id`);
    const [key] = matches;
    if (!key) return undefined;
    key.revokedAt = new Date();
    await this.keys.manager.transaction(async (manager) => {
      await manager.update(ApiKey, { id: key.id }, { revokedAt: key.revokedAt });
      await writeAuditEvent(manager, keyChange(by, 'revoke', key));
      // Delivered to every listening instance when the transaction commits.
      if (this.config.database.type === 'postgres') {
        await manager.query('SELECT pg_notify($1, $2)', [REVOCATION_CHANNEL, key.id]);
      }
    });
    this.cache.clear();
    return key;
  }
}

/**
 * First start of an empty database with no configured key: create one admin key so the service is usable, and
 * hand it back to be printed once. Callers hold the migration lock, so two instances cannot both create one.
 */
export async function createBootstrapKeyIfNeeded(
  keys: Repository<ApiKey>,
  config: Pick<AppConfig, 'apiKeys'>,
  /**
   * Gives the key to its reader before the transaction storing its hash commits: if that fails (a full disk),
   * nothing is stored and the next start makes another key; if the commit fails, the next start makes another
   * key and hands that over. Never a stored key whose value nobody got.
   */
  handOver: (key: string) => void = () => undefined,
): Promise<CreatedApiKey | undefined> {
  if (config.apiKeys.length > 0 || (await keys.count()) > 0) return undefined;
  const { key, record } = newKey('bootstrap-admin', ['admin']);
  const store = async (manager: EntityManager): Promise<void> => {
    await manager.insert(ApiKey, record);
    await writeAuditEvent(manager, keyChange(systemSource('bootstrap'), 'create', record));
    handOver(key);
  };
  // On SQLite the migration lock is a BEGIN IMMEDIATE on this runner, which TypeORM does not see: the key joins
  // that transaction (SQLite cannot nest one). PostgreSQL's lock is advisory, outside any transaction.
  if (keys.manager.connection.options.type === 'better-sqlite3') await store(keys.manager);
  else await keys.manager.transaction(store);
  return { key, record };
}

function newKey(name: string, scopes: readonly Scope[], domains?: readonly string[]): CreatedApiKey {
  const key = KEY_PREFIX + randomBytes(32).toString('base64url');
  const record = Object.assign(new ApiKey(), {
    id: randomUUID(),
    name,
    keyHash: hashKey(key),
    keyPrefix: key.slice(0, 10),
    scopes: scopes.join(','),
    domains: domains === undefined || domains.length === 0 ? null : domains.join(','),
    createdAt: new Date(),
    revokedAt: null,
  });
  return { key, record };
}

/**
 * A key from API_KEYS is identified by its own hash, not its place in the list: replacing the key at a position
 * must not hand the new key the old one's Idempotency-Key answers or rate-limit budget. 16 hex digits (64 bits)
 * of the SHA-256 cannot be turned back into the 256-bit key, so the id may be logged; the name shows the position.
 */
export function envKeyPrincipal(hash: string, index: number): Principal {
  return {
    keyId: `env:${hash.slice(0, 16)}`,
    name: `API_KEYS[${index}]`,
    scopes: ['admin'],
    kind: 'env-key',
  };
}

/** The key's id, name, scopes and tenants: never the key, its hash or its prefix. */
function keyChange(by: AuditSource, verb: 'create' | 'revoke', record: ApiKey): AuditEntry {
  return {
    by,
    action: `api-key.${verb}`,
    resourceType: 'ApiKey',
    resourceId: record.id,
    detail: { name: record.name, scopes: record.scopes.split(','), domains: record.domains },
  };
}

function toPrincipal(record: ApiKey): Principal {
  return {
    keyId: record.id,
    name: record.name,
    scopes: record.scopes.split(',') as Scope[],
    kind: 'api-key',
    ...(record.domains === null ? {} : { domains: record.domains.split(',') }),
  };
}
