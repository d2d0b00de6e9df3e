import { describe, expect, it } from '@jest/globals';
import { PlatformError, PlatformErrorCode } from '../errors/api-error.js';
import { ImportAdmission } from './import-admission.js';

const MIB = 1024 * 1024;

describe('ImportAdmission: imports in progress within the instance budget', () => {
  it('admits imports while their bodies fit, refuses the next with 503 ServiceUnavailable naming the setting', () => {
    const admission = new ImportAdmission({ importInflightBytes: 32 * MIB });
    const first = admission.admit(20 * MIB);
    const second = admission.admit(12 * MIB);
    let refused: unknown;
    try {
      admission.admit(1);
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(PlatformError);
    expect((refused as PlatformError).code).toBe(PlatformErrorCode.ServiceUnavailable);
    expect((refused as PlatformError).status).toBe(503);
    expect((refused as PlatformError).message).toContain('IMPORT_INFLIGHT_BYTES allows 32 MiB');
    first();
    first();
    expect(admission.inFlightBytes).toBe(12 * MIB);
    second();
    expect(admission.inFlightBytes).toBe(0);
  });

  it('always admits one import when none is in progress, whatever its size', () => {
    const admission = new ImportAdmission({ importInflightBytes: 1024 });
    const release = admission.admit(32 * MIB);
    expect(() => admission.admit(1)).toThrow(PlatformError);
    release();
    expect(() => admission.admit(1)()).not.toThrow();
  });
});
