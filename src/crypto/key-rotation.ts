// The work of `encryption:rotate-key`, kept apart from the CLI wrapper (nest-commander cannot load under jest) so
// that specs run exactly the code the command runs.
import { randomBytes } from 'node:crypto';
import type { AppConfig } from '../config/config.js';
import { EncryptionService, keyId, loadKeyRing, stageNewKeyFile } from './encryption.service.js';
import type { SecretStoreRegistry } from './secret-store.registry.js';

/** Re-encrypts every registered store with `newKey` (default: a random key); returns how many secrets. */
export async function rotateEncryptionKey(
  config: Pick<AppConfig, 'encryptionKey' | 'encryptionPreviousKeys' | 'dataDir'>,
  stores: SecretStoreRegistry,
  newKeyOption: Buffer | undefined,
  report: (line: string) => void,
): Promise<number> {
  const ring = loadKeyRing(config);
  if (!ring.file && !newKeyOption) {
    throw new Error('The key comes from ENCRYPTION_KEY: pass the new key with --new-key <base64>.');
  }
  const newKey = newKeyOption ?? randomBytes(32);
  const oldService = new EncryptionService(ring);
  const newService = new EncryptionService({
    current: newKey,
    previous: [ring.current, ...ring.previous],
    file: ring.file,
  });
  const staged = ring.file ? stageNewKeyFile(ring, newKey) : undefined;
  let total = 0;
  for (const store of stores.all()) {
    const count = await store.reencrypt((ciphertext) => newService.encrypt(oldService.decrypt(ciphertext)));
    report(`${store.name}: re-encrypted ${count} secret(s)`);
    total += count;
  }
  staged?.commit();
  report(`Re-encrypted ${total} secret(s) with key ${keyId(newKey)} (was ${keyId(ring.current)}).`);
  if (!ring.file) {
    report(
      'Now set ENCRYPTION_KEY to the new key and add the old one to ENCRYPTION_PREVIOUS_KEYS on every instance.',
    );
  }
  return total;
}
