// API keys (DESIGN §2): random 256-bit keys shown once, stored as SHA-256 hashes with per-area scopes.
// Keys from API_KEYS have full access. Verified keys are cached briefly so a request costs no query.
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, type Repository } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/config.js';
import { ApiKey } from './entities/api-key.entity.js';
import type { Scope } from './scopes.js';

export interface Principal {
  keyId: string;
  name: string;
  scopes: readonly Scope[];
}

export interface CreatedApiKey {
  key: string;
  record: ApiKey;
}

const KEY_PREFIX = 'pk_';
const CACHE_TTL_MS = 30_000;
const CACHE_MAX = 10_000;

export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

@Injectable()
export class ApiKeysService {
  private readonly envKeyHashes: Buffer[];
  private readonly cache = new Map<string, { principal: Principal | undefined; expires: number }>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectRepository(ApiKey) private readonly keys: Repository<ApiKey>,
  ) {
    this.envKeyHashes = config.apiKeys.map((key) => Buffer.from(hashKey(key), 'hex'));
  }

  async verify(token: string): Promise<Principal | undefined> {
    const hash = hashKey(token);
    const hashBytes = Buffer.from(hash, 'hex');
    const envIndex = this.envKeyHashes.findIndex((candidate) => timingSafeEqual(candidate, hashBytes));
    if (envIndex >= 0) return { keyId: `env:${envIndex}`, name: `API_KEYS[${envIndex}]`, scopes: ['admin'] };

    const now = Date.now();
    const cached = this.cache.get(hash);
    if (cached && cached.expires > now) return cached.principal;
    const record = await this.keys.findOne({ where: { keyHash: hash, revokedAt: IsNull() } });
    const principal = record ? toPrincipal(record) : undefined;
    if (this.cache.size >= CACHE_MAX) this.cache.clear();
    this.cache.set(hash, { principal, expires: now + CACHE_TTL_MS });
    return principal;
  }

  async create(name: string, scopes: readonly Scope[]): Promise<CreatedApiKey> {
    const created = newKey(name, scopes);
    await this.keys.insert(created.record);
    return created;
  }

  list(): Promise<ApiKey[]> {
    return this.keys.find({ order: { createdAt: 'ASC' } });
  }

  /** Revokes by id or by the displayed prefix; returns the revoked key, or undefined when none matched. */
  async revoke(idOrPrefix: string): Promise<ApiKey | undefined> {
    const matches = (await this.keys.find({ where: { revokedAt: IsNull() } })).filter(
      (key) => key.id === idOrPrefix || key.keyPrefix === idOrPrefix,
    );
    if (matches.length > 1) throw new Error(`"${idOrPrefix}" matches ${matches.length} keys; use the id`);
    const [key] = matches;
    if (!key) return undefined;
    key.revokedAt = new Date();
    await this.keys.update({ id: key.id }, { revokedAt: key.revokedAt });
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
): Promise<CreatedApiKey | undefined> {
  if (config.apiKeys.length > 0 || (await keys.count()) > 0) return undefined;
  const { key, record } = newKey('bootstrap-admin', ['admin']);
  await keys.insert(record);
  return { key, record };
}

function newKey(name: string, scopes: readonly Scope[]): CreatedApiKey {
  const key = KEY_PREFIX + randomBytes(32).toString('base64url');
  const record = Object.assign(new ApiKey(), {
    id: randomUUID(),
    name,
    keyHash: hashKey(key),
    keyPrefix: key.slice(0, 10),
    scopes: scopes.join(','),
    createdAt: new Date(),
    revokedAt: null,
  });
  return { key, record };
}

function toPrincipal(record: ApiKey): Principal {
  return { keyId: record.id, name: record.name, scopes: record.scopes.split(',') as Scope[] };
}
