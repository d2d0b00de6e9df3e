import { ApiError } from '../errors/api-error.js';

export enum MailErrorCode {
  SmtpConfigurationNotFound = 'SmtpConfigurationNotFound',
}

/** Codes of successful (and reported, not thrown) outcomes of the mail operations. */
export enum MailOutcomeCode {
  Created = 'Created',
  Updated = 'Updated',
  Unchanged = 'Unchanged',
  Removed = 'Removed',
  Verified = 'Verified',
  Sent = 'Sent',
  NoSmtpConfiguration = 'NoSmtpConfiguration',
  DeliveryFailed = 'DeliveryFailed',
  SecretUnavailable = 'SecretUnavailable',
  NotAttempted = 'NotAttempted',
  /** The egress policy (docs/egress.md) refuses the configuration's Host; no connection was attempted. */
  HostNotAllowed = 'HostNotAllowed',
}

export class MailError extends ApiError<MailErrorCode> {
  /** Business outcome: 200 with Succeeded:false, keeping the operation's documented fields. */
  readonly status = 200;

  static notFound(
    identity: { tenant: string; host: string; port: number; username: string },
    fields: Readonly<Record<string, unknown>> = {},
  ): MailError {
    const user = identity.username === '' ? 'no username' : `username "${identity.username}"`;
    return new MailError(
      MailErrorCode.SmtpConfigurationNotFound,
      `Tenant "${identity.tenant}" has no SMTP configuration for ${identity.host}:${identity.port} with ${user}.`,
      undefined,
      fields,
    );
  }
}
