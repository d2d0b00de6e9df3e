import { PlatformError } from '../errors/api-error.js';

// A tenant name as it can appear in one path segment: DNS-like labels, so it is safe in logs and URLs.
const DOMAIN = /^[a-z0-9](?:[a-z0-9._-]{0,251}[a-z0-9])?$/;

/** The `{domain}` path segment as the tenant key: trimmed and lower-cased like Context.Domain (tenantOf). */
export function normaliseDomain(raw: string | undefined): string {
  const domain = (raw ?? '').trim().toLowerCase();
  if (!DOMAIN.test(domain)) {
    throw PlatformError.validation([
      {
        Field: 'domain',
        Message:
          'domain must be 1-253 letters, digits, dots, hyphens or underscores, starting and ending with a letter or digit',
      },
    ]);
  }
  return domain;
}
