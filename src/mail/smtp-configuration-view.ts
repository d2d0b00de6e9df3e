// How an SMTP configuration is shown and named: the answer's view (secrets only as Has… flags), the words messages
// use for it, the audit event of a change (field names, never a password or its cipher), and the input rules the
// service applies to BCC and Password.
import type { AuditSource } from '../audit/audit-source.js';
import type { AuditEntry } from '../audit/audit-trail.js';
import { PlatformError } from '../errors/api-error.js';
import type { SmtpConfigurationView } from './dto/mail-responses.dto.js';
import type { SmtpConfiguration } from './entities/smtp-configuration.entity.js';
import { tlsModeOf } from './smtp/smtp-endpoint.js';

/** Host, port, username and tenant: what identifies a configuration (ensureSmtpConfiguration matches on it). */
export interface SmtpIdentity {
  tenant: string;
  host: string;
  port: number;
  username: string;
}

export function describeConfiguration(
  identity: Pick<SmtpIdentity, 'tenant' | 'host' | 'port' | 'username'>,
): string {
  const user = identity.username === '' ? 'no username' : `username "${identity.username}"`;
  return `SMTP configuration ${identity.host}:${identity.port} (${user}) of tenant "${identity.tenant}"`;
}

export function toView(row: SmtpConfiguration): SmtpConfigurationView {
  return {
    Domain: row.tenant,
    Host: row.host,
    Port: row.port,
    Ssl: row.ssl,
    Tls: tlsModeOf(row),
    AuthRequired: row.authRequired,
    Username: row.username === '' ? null : row.username,
    HasPassword: row.passwordCiphertext !== null,
    HasInternalPassword: row.internalPasswordCiphertext !== null,
    SenderAddress: row.senderAddress,
    Priority: row.priority,
    Enabled: row.enabled,
    BCC: row.bcc,
    AllowInvalidCertificate: row.allowInvalidCertificate,
    CreatedAt: new Date(row.createdAt).toISOString(),
    UpdatedAt: new Date(row.updatedAt).toISOString(),
  };
}

/** Trimmed, without repeats (addresses compared case-insensitively, as mailbox domains are). */
export function normalizeBcc(bcc: readonly string[] | null | undefined): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const address of bcc ?? []) {
    const trimmed = address.trim();
    const key = trimmed.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(trimmed);
  }
  return out;
}

export function passwordRequired(what: string): PlatformError {
  return PlatformError.validation([
    { Field: 'Password', Message: `Password is required when AuthRequired is true for ${what}` },
  ]);
}

/** Who changed which configuration: its identity and the names of changed fields, never a password or its cipher. */
export function smtpChange(
  by: AuditSource,
  verb: 'create' | 'update' | 'remove',
  id: string,
  identity: SmtpIdentity,
  changed?: string[],
): AuditEntry {
  return {
    by,
    action: `smtp-configuration.${verb}`,
    resourceType: 'SmtpConfiguration',
    resourceId: id,
    detail: {
      tenant: identity.tenant,
      host: identity.host,
      port: identity.port,
      username: identity.username,
      ...(changed === undefined ? {} : { changedFields: changed }),
    },
  };
}
