// How many iCalendar imports one instance carries out at once, by their size: each holds its calendar, parsed, until
// it is stored (~10× its body at the limits in ical-limits.ts), so the instance admits imports while the bodies of
// those in progress stay within IMPORT_INFLIGHT_BYTES, and answers the others 503 with Retry-After at once instead
// of running out of memory. One import is always admitted when none is in progress, whatever its size.
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config.js';
import { PlatformError, PlatformErrorCode } from '../errors/api-error.js';

@Injectable()
export class ImportAdmission {
  private inFlight = 0;
  private readonly budget: number;

  constructor(@Inject(APP_CONFIG) config: Pick<AppConfig, 'importInflightBytes'>) {
    this.budget = config.importInflightBytes;
  }

  /** Bytes of the imports in progress. */
  get inFlightBytes(): number {
    return this.inFlight;
  }

  /**
   * Admits an import of `bytes` or refuses it (503 ServiceUnavailable, Retry-After); the returned function gives
   * its share back (once, whatever the number of calls).
   */
  admit(bytes: number): () => void {
    if (this.inFlight > 0 && this.inFlight + bytes > this.budget) {
      throw new PlatformError(
        PlatformErrorCode.ServiceUnavailable,
        `This instance is busy with other calendar imports (${mib(this.inFlight)} MiB in progress; ` +
          `IMPORT_INFLIGHT_BYTES allows ${mib(this.budget)} MiB at once); nothing was stored. Retry after ` +
          'Retry-After.',
      );
    }
    this.inFlight += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight -= bytes;
    };
  }
}

function mib(bytes: number): string {
  return (bytes / 1024 ** 2).toLocaleString('en', { maximumFractionDigits: 1 });
}
