import { Inject } from '@nestjs/common';
import { Command, CommandRunner, Option } from 'nest-commander';
import { DataSource } from 'typeorm';
import { cliSource } from '../audit/audit-source.js';
import { APP_CONFIG, parseEncryptionKey, type AppConfig } from '../config/config.js';
import { rotateEncryptionKey } from '../crypto/key-rotation.js';
import { SecretStoreRegistry } from '../crypto/secret-store.registry.js';

interface RotateOptions {
  newKey?: Buffer;
}

@Command({
  name: 'encryption:rotate-key',
  description:
    'Re-encrypt every stored secret with a new key. Key file: the file is replaced (old key kept as .previous). ' +
    'ENCRYPTION_KEY: pass --new-key, then deploy it as ENCRYPTION_KEY with the old one in ENCRYPTION_PREVIOUS_KEYS',
})
export class EncryptionRotateKeyCommand extends CommandRunner {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly stores: SecretStoreRegistry,
    private readonly dataSource: DataSource,
  ) {
    super();
  }

  async run(_args: string[], options: RotateOptions): Promise<void> {
    // Every store and the audit event in one transaction (key-rotation.ts).
    await rotateEncryptionKey(
      this.config,
      this.stores,
      this.dataSource,
      cliSource('encryption:rotate-key'),
      options.newKey,
      (line) => console.log(line),
    );
  }

  @Option({
    flags: '--new-key <key>',
    description: '32 bytes, base64 or hex (required when ENCRYPTION_KEY is set)',
  })
  parseNewKey(value: string): Buffer {
    return parseEncryptionKey(value, '--new-key');
  }
}
