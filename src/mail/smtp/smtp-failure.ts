// Turns what an SMTP client reports (nodemailer error codes, Node socket/TLS codes, RFC 5321 §4.2 reply codes)
// into one outcome a caller can act on: a stable Code, a Message that says what went wrong in plain words
// (never a secret), and whether trying the next configuration could help.
export enum SmtpFailureCode {
  AuthenticationFailed = 'AuthenticationFailed',
  ConnectionRefused = 'ConnectionRefused',
  HostNotFound = 'HostNotFound',
  TlsFailed = 'TlsFailed',
  TimedOut = 'TimedOut',
  ConnectionFailed = 'ConnectionFailed',
  MessageRejected = 'MessageRejected',
}

export interface SmtpFailure {
  code: SmtpFailureCode;
  message: string;
  /** Connection, TLS, time-out and authentication failures, and temporary (4xx) rejections. */
  failOver: boolean;
}

export interface SmtpErrorContext {
  host: string;
  port: number;
  username: string;
  /** Connecting, the greeting and the TLS upgrade. */
  timeoutMs: number;
  /** Waiting for any other reply. */
  replyTimeoutMs: number;
  /** Values that must never appear in a message (the passwords); also removed in their base64 forms. */
  secrets: readonly string[];
}

/** What the client reported; every field optional because anything can be thrown. */
export interface SmtpErrorLike {
  code?: unknown;
  originalCode?: unknown;
  responseCode?: unknown;
  response?: unknown;
  permanent?: unknown;
  timeoutType?: unknown;
  message?: unknown;
}

const TLS_CODE =
  /^(ERR_SSL_|ERR_TLS_|CERT_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT|UNABLE_TO_|HOSTNAME_MISMATCH)/;
const CERTIFICATE_CODE =
  /^(CERT_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT|UNABLE_TO_|ERR_TLS_CERT_|HOSTNAME_MISMATCH)/;
const DNS_CODE = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'ENODATA']);
const REFUSED_CODE = new Set(['ECONNREFUSED']);
const UNREACHABLE_CODE = new Set(['EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET', 'EPIPE']);

const TIMEOUT_PHASE: Record<string, string> = {
  CONNECT_TIMEOUT: 'connecting to',
  GREETING_TIMEOUT: 'waiting for the greeting of',
  UPGRADE_TIMEOUT: 'upgrading to TLS with',
  SOCKET_TIMEOUT: 'waiting for a response from',
};

const MAX_DETAIL = 300;

/** RFC 5321 §4.2: a reply starts with a three-digit code (2xx–5xx) followed by a space, a hyphen or the end. */
const SMTP_REPLY = /^[2-5][0-9]{2}(?:[ -]|$)/;

/**
 * What a TLS failure is called, by code only: Node's messages quote the certificate's names
 * ("…is not in the cert's altnames: DNS:db01.internal.corp, …"), which a caller must not learn.
 */
const TLS_REASON: Array<[RegExp, string]> = [
  [/^ERR_TLS_CERT_ALTNAME_INVALID$|^HOSTNAME_MISMATCH$/, 'the certificate is not valid for this host'],
  [/^(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN)$/, 'self-signed certificate'],
  [/^CERT_HAS_EXPIRED$/, 'the certificate has expired'],
  [/^CERT_NOT_YET_VALID$/, 'the certificate is not yet valid'],
  [
    /^(UNABLE_TO_GET_ISSUER_CERT|UNABLE_TO_GET_ISSUER_CERT_LOCALLY|UNABLE_TO_VERIFY_LEAF_SIGNATURE)$/,
    'the certificate is not signed by a trusted authority',
  ],
];

export function classifySmtpError(error: unknown, context: SmtpErrorContext): SmtpFailure {
  const e: SmtpErrorLike = error !== null && typeof error === 'object' ? error : { message: String(error) };
  const code = typeof e.code === 'string' ? e.code : '';
  const original = typeof e.originalCode === 'string' ? e.originalCode : '';
  const where = `${context.host}:${context.port}`;
  const scrub = scrubber(context.secrets);
  const rawResponse = typeof e.response === 'string' ? e.response : '';
  // The peer's bytes are quoted only when they are an SMTP reply: a NATS `INFO {...}` or a database greeting on the
  // port is reported as "not an SMTP server", never echoed (it would turn verify into a banner reader).
  const notSmtp = rawResponse.trim() !== '' && !SMTP_REPLY.test(rawResponse.trim());
  const response = notSmtp ? '' : scrub(rawResponse);
  const message = typeof e.message === 'string' ? e.message : '';
  const detail = notSmtp ? '' : scrub(firstLine(message));
  const serverSaid = response === '' ? '' : ` (server said: ${response})`;
  if (notSmtp) {
    return {
      code: SmtpFailureCode.ConnectionFailed,
      message:
        `Connection to ${where} failed: the peer did not answer as an SMTP server ` +
        '(its reply is not an SMTP reply; is this the right port?).',
      failOver: true,
    };
  }

  if (code === 'EAUTH' || code === 'ENOAUTH') {
    return {
      code: SmtpFailureCode.AuthenticationFailed,
      message: `Authentication failed for "${scrub(context.username)}" at ${where}${serverSaid}.`,
      failOver: true,
    };
  }
  if (code === 'ETIMEDOUT' || code === 'EABORT' || original === 'ETIMEDOUT') {
    const type = typeof e.timeoutType === 'string' ? e.timeoutType : '';
    const phase = TIMEOUT_PHASE[type] ?? 'talking to';
    const limit = type === 'SOCKET_TIMEOUT' ? context.replyTimeoutMs : context.timeoutMs;
    return {
      code: SmtpFailureCode.TimedOut,
      message: `Timed out after ${limit} ms ${phase} ${where}.`,
      failOver: true,
    };
  }
  if (REFUSED_CODE.has(original)) {
    return {
      code: SmtpFailureCode.ConnectionRefused,
      message: `Connection refused by ${where}: nothing accepts connections on that port.`,
      failOver: true,
    };
  }
  if (code === 'EDNS' || DNS_CODE.has(original)) {
    return {
      code: SmtpFailureCode.HostNotFound,
      message: `Host ${context.host} could not be resolved${original === '' ? '' : ` (${original})`}.`,
      failOver: true,
    };
  }
  if (code === 'ETLS' || TLS_CODE.test(original)) {
    const reason =
      code === 'ETLS' && response !== ''
        ? `the server refused STARTTLS${serverSaid}`
        : original === 'ERR_SSL_WRONG_VERSION_NUMBER'
          ? 'the server does not speak TLS from the first byte on this port (implicit TLS is used on port 465 only)'
          : (TLS_REASON.find(([pattern]) => pattern.test(original))?.[1] ??
            (original === '' ? 'handshake failed' : `handshake failed (${original})`));
    const hint = CERTIFICATE_CODE.test(original)
      ? " The server's certificate was not trusted; AllowInvalidCertificate:true accepts it (only for a server you" +
        ' know, e.g. one with a self-signed certificate).'
      : '';
    return {
      code: SmtpFailureCode.TlsFailed,
      message: `TLS failed with ${where}: ${reason}.${hint}`,
      failOver: true,
    };
  }
  if (code === 'EENVELOPE' || code === 'EMESSAGE' || code === 'EREQUIRETLS') {
    // 4xx (and 503) are temporary, so another server may take the message; 5xx would be refused again.
    const temporary = e.permanent === false;
    return {
      code: SmtpFailureCode.MessageRejected,
      message: `${where} rejected the message${serverSaid || (detail ? `: ${detail}` : '')}.`,
      failOver: temporary,
    };
  }
  const because = UNREACHABLE_CODE.has(original)
    ? original
    : response !== ''
      ? response
      : detail || code || 'unknown error';
  return {
    code: SmtpFailureCode.ConnectionFailed,
    message: `Connection to ${where} failed: ${because}.`,
    failOver: true,
  };
}

function firstLine(text: string): string {
  return text.split(/\r?\n/, 1)[0].trim();
}

/** Removes the secrets (and their base64 forms, as AUTH PLAIN/LOGIN send them) and bounds the length. */
export function scrubber(secrets: readonly string[]): (text: string) => string {
  const needles = secrets
    .filter((secret) => secret.length > 0)
    .flatMap((secret) => [secret, Buffer.from(secret, 'utf8').toString('base64')])
    .sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    for (const needle of needles) out = out.split(needle).join('[REDACTED]');
    // RFC 5321 §4.2: a reply's text is printable US-ASCII; anything else a peer sends after a valid reply code
    // (control bytes, binary) is not quoted back: each such character shows as "?".
    out = out
      .replace(/\s+/g, ' ')
      .replace(/[^\x20-\x7E]/g, '?')
      .trim();
    return out.length > MAX_DETAIL ? `${out.slice(0, MAX_DETAIL)}…` : out;
  };
}
