import { Command, CommandRunner, Option } from 'nest-commander';
import { cliSource } from '../audit/audit-source.js';
import { ApiKeysService } from '../auth/api-keys.service.js';
import { parseScopes, SCOPES, type Scope } from '../auth/scopes.js';
import { parseDomains } from '../auth/tenant.js';

interface CreateOptions {
  name: string;
  scopes: Scope[];
  domains?: string[];
}

@Command({
  name: 'api-key:create',
  description: 'Create an API key; the key is printed once and only its hash is kept',
})
export class ApiKeyCreateCommand extends CommandRunner {
  constructor(private readonly keys: ApiKeysService) {
    super();
  }

  async run(_args: string[], options: CreateOptions): Promise<void> {
    const { key, record } = await this.keys.create(
      options.name,
      options.scopes,
      options.domains,
      cliSource('api-key:create'),
    );
    const tenants = record.domains === null ? 'every tenant' : `tenants ${record.domains}`;
    console.log(`Created API key ${record.id} "${record.name}" with scopes ${record.scopes} for ${tenants}.`);
    console.log('Store it now; it is not shown again:');
    console.log(key);
  }

  @Option({ flags: '-n, --name <name>', description: 'who or what uses the key', required: true })
  parseName(value: string): string {
    if (value.trim() === '' || value.length > 100) throw new Error('--name must be 1 to 100 characters');
    return value.trim();
  }

  @Option({
    flags: '-s, --scopes <scopes>',
    description: `comma-separated: ${SCOPES.join(', ')} (admin = all)`,
    required: true,
  })
  parseScopes(value: string): Scope[] {
    return parseScopes(value);
  }

  @Option({
    flags: '-d, --domains <domains>',
    description: 'comma-separated tenants the key is bound to (default: every tenant)',
  })
  parseDomains(value: string): string[] {
    return parseDomains(value);
  }
}

@Command({ name: 'api-key:list', description: 'List API keys (id, prefix, name, scopes, created, revoked)' })
export class ApiKeyListCommand extends CommandRunner {
  constructor(private readonly keys: ApiKeysService) {
    super();
  }

  async run(): Promise<void> {
    const keys = await this.keys.list();
    if (keys.length === 0) console.log('No API keys.');
    for (const key of keys) {
      const revoked = key.revokedAt ? `revoked ${key.revokedAt.toISOString()}` : 'active';
      const tenants = key.domains === null ? 'all tenants' : `tenants ${key.domains}`;
      console.log(
        `${key.id}  ${key.keyPrefix}…  ${key.name}  [${key.scopes}]  ${tenants}  created ${key.createdAt.toISOString()}  ${revoked}`,
      );
    }
  }
}

@Command({
  name: 'api-key:revoke',
  arguments: '<key>',
  description:
    'Revoke an API key by id or by its printed prefix (PostgreSQL: every running instance refuses it within 2 s; SQLite: within 30 s)',
})
export class ApiKeyRevokeCommand extends CommandRunner {
  constructor(private readonly keys: ApiKeysService) {
    super();
  }

  async run([idOrPrefix]: string[]): Promise<void> {
    const revoked = await this.keys.revoke(idOrPrefix, cliSource('api-key:revoke'));
    if (!revoked) {
      console.error(`No active API key matches "${idOrPrefix}".`);
      process.exitCode = 1;
      return;
    }
    console.log(`Revoked ${revoked.id} "${revoked.name}".`);
  }
}
