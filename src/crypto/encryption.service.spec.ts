import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { EncryptionError, EncryptionService, loadKeyRing } from './encryption.service.js';

const ring = (current = randomBytes(32), previous: Buffer[] = []) => ({ current, previous, file: undefined });

describe('EncryptionService', () => {
  it('round-trips, with a fresh IV each time and no plaintext in the ciphertext', () => {
    const service = new EncryptionService(ring());
    const a = service.encrypt('smtp-password');
    const b = service.encrypt('smtp-password');
    expect(a).not.toBe(b);
    expect(a).not.toContain('smtp-password');
    expect(service.decrypt(a)).toBe('smtp-password');
  });

  it('refuses an altered value and a value from an unknown key', () => {
    const service = new EncryptionService(ring());
    const value = service.encrypt('x');
    const parts = value.split(':');
    parts[4] = Buffer.from('tampered').toString('base64');
    expect(() => service.decrypt(parts.join(':'))).toThrow(EncryptionError);
    expect(() => new EncryptionService(ring()).decrypt(value)).toThrow(/not configured/);
  });

  it('decrypts with previous keys and tells what needs rotation', () => {
    const oldKey = randomBytes(32);
    const old = new EncryptionService(ring(oldKey));
    const value = old.encrypt('token');
    const rotated = new EncryptionService(ring(randomBytes(32), [oldKey]));
    expect(rotated.decrypt(value)).toBe('token');
    expect(rotated.needsRotation(value)).toBe(true);
    expect(rotated.needsRotation(rotated.encrypt('token'))).toBe(false);
  });

  it('creates the key file once, mode 0600, and reuses it', () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pa-key-'));
    const config = { encryptionKey: undefined, encryptionPreviousKeys: [], dataDir };
    const first = loadKeyRing(config);
    const second = loadKeyRing(config);
    expect(first.current.equals(second.current)).toBe(true);
    expect(fs.statSync(path.join(dataDir, 'encryption.key')).mode & 0o777).toBe(0o600);
    // The draft it was written to before being linked into place is gone.
    expect(fs.readdirSync(dataDir)).toEqual(['encryption.key']);
    fs.rmSync(dataDir, { recursive: true });
  });
});
