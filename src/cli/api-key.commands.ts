import { Command, CommandRunner, Option } from 'nest-commander';
import { ApiKeysService } from '../auth/api-keys.service.js';
import { parseScopes, SCOPES, type Scope } from '../auth/scopes.js';

interface CreateOptions {
  name: string;
  scopes: Scope[];
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
    const { key, record } = await this.keys.create(options.name, options.scopes);
    console.log(`Created API key ${record.id} "${record.name}" with scopes ${record.scopes}.`);
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
      console.log(
        `${key.id}  ${key.keyPrefix}…  ${key.name}  [${key.scopes}]  created ${key.createdAt.toISOString()}  ${revoked}`,
      );
    }
  }
}

@Command({
  name: 'api-key:revoke',
  arguments: '<key>',
  description:
    'Revoke an API key by id or by its printed prefix (takes effect within 30 s on running instances)',
})
export class ApiKeyRevokeCommand extends CommandRunner {
  constructor(private readonly keys: ApiKeysService) {
    super();
  }

  async run([idOrPrefix]: string[]): Promise<void> {
    const revoked = await this.keys.revoke(idOrPrefix);
    if (!revoked) {
      console.error(`No active API key matches "${idOrPrefix}".`);
      process.exitCode = 1;
      return;
    }
    console.log(`Revoked ${revoked.id} "${revoked.name}".`);
  }
}
