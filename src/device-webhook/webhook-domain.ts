import type { ApiParamOptions } from '@nestjs/swagger';
import { PlatformError } from '../errors/api-error.js';

// A tenant name as it can appear in one path segment: DNS-like labels, so it is safe in logs and URLs. Tested on
// the trimmed, lower-cased value; the document states the pattern (upper case admitted, it is lower-cased).
const DOMAIN_PATTERN = '^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,251}[A-Za-z0-9])?$';
const DOMAIN = new RegExp(DOMAIN_PATTERN);

/** The `{domain}` path parameter as the document states it. */
export const DOMAIN_PARAM: ApiParamOptions = {
  name: 'domain',
  description:
    'The tenant the installation belongs to: 1-253 letters, digits, dots, hyphens or underscores, starting and ' +
    'ending with a letter or digit (matched case-insensitively).',
  schema: { type: 'string', pattern: DOMAIN_PATTERN, minLength: 1, maxLength: 253, example: 'acme' },
};

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
