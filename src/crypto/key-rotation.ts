// The work of `encryption:rotate-key`, kept apart from the CLI wrapper (nest-commander cannot load under jest) so
// that specs run exactly the code the command runs.
import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { AuditSource } from '../audit/audit-source.js';
import { writeAuditEvent } from '../audit/audit-trail.js';
import type { AppConfig } from '../config/config.js';
import { inTransaction } from '../database/transaction.js';
import { EncryptionService, keyId, loadKeyRing, stageNewKeyFile } from './encryption.service.js';
import type { SecretStoreRegistry } from './secret-store.registry.js';

/**
 * Re-encrypts every registered store with `newKey` (default: a random key) in ONE transaction, with its audit event
 * (`encryption-key.rotate`, by `by`): every secret moves to the new key and the trail says so, or nothing changes.
 * The key file is replaced only after that transaction commits. Returns how many secrets were re-encrypted.
 */
export async function rotateEncryptionKey(
  config: Pick<AppConfig, 'encryptionKey' | 'encryptionPreviousKeys' | 'dataDir'>,
  stores: SecretStoreRegistry,
  dataSource: DataSource,
  by: AuditSource,
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
  const rewrite = (ciphertext: string) => newService.encrypt(oldService.decrypt(ciphertext));
  const counts = await inTransaction(dataSource, async (manager) => {
    const done: Array<[store: string, count: number]> = [];
    for (const store of stores.all()) done.push([store.name, await store.reencrypt(rewrite, manager)]);
    await writeAuditEvent(manager, {
      by,
      action: 'encryption-key.rotate',
      resourceType: 'EncryptionKey',
      resourceId: keyId(newKey),
      detail: {
        reencrypted: done.reduce((sum, [, count]) => sum + count, 0),
        stores: done.map(([name]) => name),
      },
    });
    return done;
  }).catch((error: unknown) => {
    staged?.discard();
    throw error;
  });
  staged?.commit();
  for (const [store, count] of counts) report(`${store}: re-encrypted ${count} secret(s)`);
  const total = counts.reduce((sum, [, count]) => sum + count, 0);
  report(`Re-encrypted ${total} secret(s) with key ${keyId(newKey)} (was ${keyId(ring.current)}).`);
  if (!ring.file) {
    report(
      'Now set ENCRYPTION_KEY to the new key and add the old one to ENCRYPTION_PREVIOUS_KEYS on every instance.',
    );
  }
  return total;
}
