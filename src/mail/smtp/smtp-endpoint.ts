// How a stored SMTP configuration becomes nodemailer transport options: TLS per Ssl (implicit TLS on port 465,
// RFC 8314 §3.3; otherwise mandatory STARTTLS, RFC 3207), authentication per AuthRequired (RFC 4954), and bounded
// time-outs for every phase so a silent server cannot hold a request.
import { isIP } from 'node:net';
import type { SMTPTransportOptions } from 'nodemailer';

export interface SmtpEndpoint {
  host: string;
  port: number;
  ssl: boolean;
  authRequired: boolean;
  allowInvalidCertificate: boolean;
  /** '' when the configuration has none. */
  username: string;
  password: string | null;
  /**
   * The address the egress policy checked (src/egress/): the session connects there, with no look-up of its own,
   * and presents `host` as the TLS server name when it is a name. Absent: connect to `host` (unit tests only).
   */
  address?: string;
}

export type TlsMode = 'Implicit' | 'StartTls' | 'None';

export const IMPLICIT_TLS_PORT = 465;

/**
 * A reply may take longer than connecting (servers scan a message before answering DATA), and a longer idle limit
 * lets the greeting time-out, not the idle one, name what a silent server failed to do.
 */
export const REPLY_TIMEOUT_FACTOR = 2;

export function tlsModeOf(endpoint: Pick<SmtpEndpoint, 'ssl' | 'port'>): TlsMode {
  if (!endpoint.ssl) return 'None';
  return endpoint.port === IMPLICIT_TLS_PORT ? 'Implicit' : 'StartTls';
}

export function smtpTransportOptions(endpoint: SmtpEndpoint, timeoutMs: number): SMTPTransportOptions {
  const mode = tlsModeOf(endpoint);
  const address = endpoint.address ?? endpoint.host;
  const servername = address !== endpoint.host && isIP(endpoint.host) === 0 ? endpoint.host : undefined;
  return {
    host: address,
    port: endpoint.port,
    secure: mode === 'Implicit',
    // Ssl:true on a submission port means TLS or nothing: never fall back to sending the password in clear.
    requireTLS: mode === 'StartTls',
    // Ssl:false means plain SMTP, as .NET's EnableSsl=false: no opportunistic upgrade that could fail on a cert.
    ignoreTLS: mode === 'None',
    // The certificate is checked against the host name the caller configured, not the address connected to.
    tls: {
      rejectUnauthorized: !endpoint.allowInvalidCertificate,
      minVersion: 'TLSv1.2',
      ...(servername === undefined ? {} : { servername }),
    },
    ...(servername === undefined ? {} : { servername }),
    auth: endpoint.authRequired ? { user: endpoint.username, pass: endpoint.password ?? '' } : undefined,
    // AuthRequired must mean "we logged in": without forceAuth nodemailer silently skips AUTH when not advertised.
    forceAuth: endpoint.authRequired,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs * REPLY_TIMEOUT_FACTOR,
    dnsTimeout: timeoutMs,
    socketCloseTimeout: Math.min(timeoutMs, 1000),
    logger: false,
    debug: false,
    // Messages are built from configuration text only; never let a value name a local file or URL to attach.
    disableFileAccess: true,
    disableUrlAccess: true,
  };
}
