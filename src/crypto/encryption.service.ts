// Secrets at rest, never returned: AES-256-GCM with a random 96-bit IV per value. The key comes from ENCRYPTION_KEY
// or from a key file created on first start in the data folder (mode 0600). Ciphertexts name the key that made
// them, so older keys (ENCRYPTION_PREVIOUS_KEYS, or the file's predecessor after a rotation) still decrypt.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseEncryptionKey, type AppConfig } from '../config/config.js';

const FORMAT = 'v1';
const KEY_FILE = 'encryption.key';

export class EncryptionError extends Error {
  override name = 'EncryptionError';
}

export interface KeyRing {
  current: Buffer;
  previous: readonly Buffer[];
  /** Where the current key came from: the environment, or this file. */
  file: string | undefined;
}

export function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

/** Reads (or on first start creates) the key ring. */
export function loadKeyRing(
  config: Pick<AppConfig, 'encryptionKey' | 'encryptionPreviousKeys' | 'dataDir'>,
): KeyRing {
  if (config.encryptionKey) {
    return { current: config.encryptionKey, previous: config.encryptionPreviousKeys, file: undefined };
  }
  const file = path.join(config.dataDir, KEY_FILE);
  const previous = [...config.encryptionPreviousKeys];
  // .next exists only while (or because) a rotation did not finish: values it already wrote must stay readable.
  for (const extra of [`${file}.previous`, `${file}.next`]) {
    if (fs.existsSync(extra)) previous.push(readKeyFile(extra));
  }
  if (!fs.existsSync(file)) {
    fs.mkdirSync(config.dataDir, { recursive: true });
    // Written whole under a name of its own, then linked into place: link() fails if the file exists, so two
    // processes starting together cannot both create (and disagree about) the key, and neither can read the
    // other's file half-written (with a plain 'wx' write it was briefly empty: seen as a failed start).
    const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      // On a full disk the write fails with ENOSPC after creating the draft: removed below, the start is deferred.
      fs.writeFileSync(draft, randomBytes(32).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
      fs.linkSync(draft, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      fs.rmSync(draft, { force: true });
    }
  }
  return { current: readKeyFile(file), previous, file };
}

function readKeyFile(file: string): Buffer {
  return parseEncryptionKey(fs.readFileSync(file, 'utf8'), `key file ${file}`);
}

export class EncryptionService {
  private readonly keys = new Map<string, Buffer>();
  private currentId: string;

  constructor(
    private ring: KeyRing,
    /** Re-reads the key ring when a value names a key this instance has not seen (another process rotated). */
    private readonly reload?: () => KeyRing,
  ) {
    this.currentId = this.adopt(ring);
  }

  private adopt(ring: KeyRing): string {
    this.ring = ring;
    for (const key of [ring.current, ...ring.previous]) this.keys.set(keyId(key), key);
    return keyId(ring.current);
  }

  get currentKeyId(): string {
    return this.currentId;
  }

  encrypt(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.ring.current, iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [
      FORMAT,
      this.currentId,
      iv.toString('base64'),
      cipher.getAuthTag().toString('base64'),
      body.toString('base64'),
    ].join(':');
  }

  decrypt(ciphertext: string): string {
    const [format, id, iv, tag, body] = ciphertext.split(':');
    if (
      format !== FORMAT ||
      id === undefined ||
      iv === undefined ||
      tag === undefined ||
      body === undefined
    ) {
      throw new EncryptionError('Not a value produced by the encryption service');
    }
    if (!this.keys.has(id) && this.reload) this.currentId = this.adopt(this.reload());
    const key = this.keys.get(id);
    if (!key) throw new EncryptionError(`Secret was encrypted with key ${id}, which is not configured`);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'));
      decipher.setAuthTag(Buffer.from(tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8');
    } catch {
      throw new EncryptionError('Secret could not be decrypted (wrong key or altered value)');
    }
  }

  /** True when the value was not made with the current key and should be re-encrypted. */
  needsRotation(ciphertext: string): boolean {
    return ciphertext.split(':')[1] !== this.currentId;
  }
}

/**
 * Key-file rotation: the new key is written beside the old one first, every store is re-encrypted, and only then
 * does the new key replace the old (which stays as `.previous` for values written meanwhile).
 */
export function stageNewKeyFile(ring: KeyRing, newKey: Buffer): { commit(): void; discard(): void } {
  if (!ring.file)
    throw new EncryptionError('The key comes from ENCRYPTION_KEY: rotate by setting a new key (see README)');
  const file = ring.file;
  const staged = `${file}.next`;
  fs.writeFileSync(staged, newKey.toString('base64') + '\n', { mode: 0o600 });
  return {
    commit() {
      fs.copyFileSync(file, `${file}.previous`);
      fs.chmodSync(`${file}.previous`, 0o600);
      fs.renameSync(staged, file);
    },
    /** After a failed rotation: the key file stays as it was. */
    discard() {
      fs.rmSync(staged, { force: true });
    },
  };
}
