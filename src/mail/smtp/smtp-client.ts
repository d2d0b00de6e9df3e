// One SMTP session per call (nodemailer, no pooling: verify and test messages are rare, and a pooled connection
// would outlive a configuration change). Every session is bounded twice: nodemailer's per-phase time-outs, and a
// deadline for the whole session so that a server dripping one byte per time-out still cannot hold the caller.
import nodemailer from 'nodemailer';
import {
  REPLY_TIMEOUT_FACTOR,
  smtpTransportOptions,
  tlsModeOf,
  type SmtpEndpoint,
  type TlsMode,
} from './smtp-endpoint.js';
import { classifySmtpError, type SmtpFailure } from './smtp-failure.js';

export interface SmtpLimits {
  /** Each phase: connecting, the greeting, the TLS upgrade; every other reply may take twice as long. */
  timeoutMs: number;
  /** The whole session. */
  deadlineMs: number;
}

export type SmtpResult<T> = ({ ok: true } & T) | ({ ok: false } & SmtpFailure);

export interface SmtpVerified {
  tls: TlsMode;
  authenticated: boolean;
}

export interface SmtpMessage {
  from: string;
  to: string;
  /** Envelope recipients only: nodemailer adds them to RCPT TO and leaves the Bcc header out of the message. */
  bcc: readonly string[];
  subject: string;
  text: string;
  headers: Record<string, string>;
}

export interface SmtpSent {
  tls: TlsMode;
  messageId: string;
  /** The envelope the server took (RCPT TO), BCC recipients included. */
  accepted: string[];
  rejected: string[];
}

class DeadlineExceeded extends Error {
  readonly code = 'ETIMEDOUT';
}

export async function verifySmtp(
  endpoint: SmtpEndpoint,
  limits: SmtpLimits,
): Promise<SmtpResult<SmtpVerified>> {
  const transport = nodemailer.createTransport(smtpTransportOptions(endpoint, limits.timeoutMs));
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceeded('Session deadline exceeded')), limits.deadlineMs);
  });
  const verified = transport.verify();
  // If the deadline wins, the session still ends on its own per-phase time-outs; its outcome is then unwanted.
  verified.catch(() => undefined);
  try {
    await Promise.race([verified, deadline]);
    return { ok: true, tls: tlsModeOf(endpoint), authenticated: endpoint.authRequired };
  } catch (error) {
    return { ok: false, ...classifySmtpError(error, errorContext(endpoint, limits, error)) };
  } finally {
    clearTimeout(timer);
    transport.close();
  }
}

export async function sendSmtp(
  endpoint: SmtpEndpoint,
  message: SmtpMessage,
  limits: SmtpLimits,
): Promise<SmtpResult<SmtpSent>> {
  const transport = nodemailer.createTransport(smtpTransportOptions(endpoint, limits.timeoutMs));
  // SMTPTransport honours the signal for the whole session and closes the connection when it fires.
  const signal = AbortSignal.timeout(limits.deadlineMs);
  try {
    const info = await transport.sendMail({
      from: message.from,
      to: message.to,
      bcc: [...message.bcc],
      subject: message.subject,
      text: message.text,
      headers: message.headers,
      signal,
    });
    return {
      ok: true,
      tls: tlsModeOf(endpoint),
      messageId: info.messageId,
      accepted: info.accepted.map(String),
      rejected: info.rejected.map(String),
    };
  } catch (error) {
    return { ok: false, ...classifySmtpError(error, errorContext(endpoint, limits, error)) };
  } finally {
    transport.close();
  }
}

function errorContext(endpoint: SmtpEndpoint, limits: SmtpLimits, error: unknown) {
  const password = endpoint.password ?? '';
  return {
    host: endpoint.host,
    port: endpoint.port,
    username: endpoint.username,
    // A per-phase time-out names its own limit; the session deadline names the longer one.
    timeoutMs: error instanceof DeadlineExceeded || isAbort(error) ? limits.deadlineMs : limits.timeoutMs,
    replyTimeoutMs: limits.timeoutMs * REPLY_TIMEOUT_FACTOR,
    secrets: password === '' ? [] : [password, `\u0000${endpoint.username}\u0000${password}`],
  };
}

function isAbort(error: unknown): boolean {
  return error !== null && typeof error === 'object' && 'code' in error && error.code === 'EABORT';
}
