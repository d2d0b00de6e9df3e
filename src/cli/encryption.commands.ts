import { randomBytes } from 'node:crypto';
import { Inject } from '@nestjs/common';
import { Command, CommandRunner, Option } from 'nest-commander';
import { APP_CONFIG, parseEncryptionKey, type AppConfig } from '../config/config.js';
import { EncryptionService, keyId, loadKeyRing, stageNewKeyFile } from '../crypto/encryption.service.js';
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
  ) {
    super();
  }

  async run(_args: string[], options: RotateOptions): Promise<void> {
    const ring = loadKeyRing(this.config);
    if (!ring.file && !options.newKey) {
      throw new Error('The key comes from ENCRYPTION_KEY: pass the new key with --new-key <base64>.');
    }
    const newKey = options.newKey ?? randomBytes(32);
    const oldService = new EncryptionService(ring);
    const newService = new EncryptionService({
      current: newKey,
      previous: [ring.current, ...ring.previous],
      file: ring.file,
    });
    const staged = ring.file ? stageNewKeyFile(ring, newKey) : undefined;
    let total = 0;
    for (const store of this.stores.all()) {
      const count = await store.reencrypt((ciphertext) => newService.encrypt(oldService.decrypt(ciphertext)));
      console.log(`${store.name}: re-encrypted ${count} secret(s)`);
      total += count;
    }
    staged?.commit();
    console.log(`Re-encrypted ${total} secret(s) with key ${keyId(newKey)} (was ${keyId(ring.current)}).`);
    if (!ring.file) {
      console.log(
        'Now set ENCRYPTION_KEY to the new key and add the old one to ENCRYPTION_PREVIOUS_KEYS on every instance.',
      );
    }
  }

  @Option({
    flags: '--new-key <key>',
    description: '32 bytes, base64 or hex (required when ENCRYPTION_KEY is set)',
  })
  parseNewKey(value: string): Buffer {
    return parseEncryptionKey(value, '--new-key');
  }
}
