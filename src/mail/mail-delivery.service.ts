import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { tenantOf } from '../common/dto/context.dto.js';
import { APP_CONFIG, type AppConfig } from '../config/config.js';
import { EgressService } from '../egress/egress.service.js';
import type { RequestContext } from '../logging/request-context.js';
import type {
  DeliveryAttempt,
  SendTestMessageResponse,
  VerifySmtpConfigurationResponse,
} from './dto/mail-responses.dto.js';
import type { SendTestMessageRequest, SmtpIdentityRequest } from './dto/smtp-configuration.dto.js';
import type { SmtpConfiguration } from './entities/smtp-configuration.entity.js';
import { MailError, MailOutcomeCode } from './mail.errors.js';
import { sendSmtp, verifySmtp, type SmtpLimits } from './smtp/smtp-client.js';
import { tlsModeOf, type SmtpEndpoint, type TlsMode } from './smtp/smtp-endpoint.js';
import { classifySmtpError } from './smtp/smtp-failure.js';
import { describeConfiguration } from './smtp-configuration-view.js';
import { SecretUnavailableError, SmtpConfigurationsService } from './smtp-configurations.service.js';
import { Counter } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service.js';
import { traced } from '../tracing/tracing.js';

/** A whole session may take this many per-phase time-outs (connect, greeting, TLS, AUTH, MAIL/RCPT/DATA). */
const SESSION_TIMEOUTS = 4;
/** Kept back from the request time-out so a fail-over that runs out of time still answers, not the 503 guard. */
const ANSWER_RESERVE_MS = 1000;

const TLS_TEXT: Record<TlsMode, string> = {
  Implicit: 'implicit TLS',
  StartTls: 'STARTTLS',
  None: 'no TLS',
};

/** Talks to SMTP servers on behalf of a tenant: verify one configuration, send a test message with fail-over. */
@Injectable()
export class MailDeliveryService {
  /** Test messages by outcome code (Sent, NoSmtpConfiguration, DeliveryFailed, …): the dashboard's mail row. */
  private readonly sends: Counter<'code'>;

  constructor(
    private readonly configurations: SmtpConfigurationsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly egress: EgressService,
    metrics: MetricsService,
  ) {
    this.sends = new Counter({
      name: 'mail_test_messages_total',
      help: 'Operation sendTestMessage answers by outcome code',
      labelNames: ['code'],
      registers: [metrics.registry],
    });
    // Every series exists from the start (0), so rates and alerts see the first send.
    for (const code of [...Object.values(MailOutcomeCode), 'Error']) this.sends.inc({ code }, 0);
  }

  /**
   * The egress check at connect time (a name may resolve differently than when it was stored): the endpoint with
   * the checked address to connect to, or the failure to report without any connection attempt.
   */
  private async destination(
    endpoint: SmtpEndpoint,
    limits: SmtpLimits,
  ): Promise<{ endpoint: SmtpEndpoint } | { code: string; message: string; failOver: boolean }> {
    const destination = await this.egress.resolve(endpoint.host, limits.timeoutMs);
    if (destination.ok) return { endpoint: { ...endpoint, address: destination.address } };
    if (destination.refused)
      return { code: MailOutcomeCode.HostNotAllowed, message: destination.message, failOver: true };
    const code = errorCode(destination.error);
    const failure = classifySmtpError(
      { code: 'EDNS', originalCode: code },
      {
        host: endpoint.host,
        port: endpoint.port,
        username: endpoint.username,
        timeoutMs: limits.timeoutMs,
        replyTimeoutMs: limits.timeoutMs,
        secrets: [],
      },
    );
    return failure;
  }

  private limits(remainingMs = Number.POSITIVE_INFINITY): SmtpLimits {
    const timeoutMs = this.config.mail.smtpTimeoutMs;
    return {
      timeoutMs: Math.max(1, Math.min(timeoutMs, remainingMs)),
      deadlineMs: Math.max(1, Math.min(timeoutMs * SESSION_TIMEOUTS, remainingMs)),
    };
  }

  async verify(request: SmtpIdentityRequest, ctx: RequestContext): Promise<VerifySmtpConfigurationResponse> {
    const identity = this.configurations.identityOf(request);
    const row = await this.configurations.find(identity);
    if (row === null) throw MailError.notFound(identity, { Result: null });
    const started = performance.now();
    const base = {
      Host: row.host,
      Port: row.port,
      Username: row.username === '' ? null : row.username,
      Tls: tlsModeOf(row),
    };
    let endpoint;
    try {
      endpoint = this.configurations.endpointOf(row);
    } catch (error) {
      if (!(error instanceof SecretUnavailableError)) throw error;
      return {
        Succeeded: false,
        Message: error.message,
        Code: MailOutcomeCode.SecretUnavailable,
        Result: { ...base, Authenticated: false, DurationMs: 0 },
      };
    }
    const limits = this.limits();
    const checked = await this.destination(endpoint, limits);
    const result =
      'endpoint' in checked
        ? await traced(
            'SMTP verify',
            { 'server.address': endpoint.host, 'server.port': endpoint.port },
            () => verifySmtp(checked.endpoint, limits),
            'client',
          )
        : { ok: false as const, ...checked };
    const durationMs = Math.round(performance.now() - started);
    if (!result.ok) {
      ctx
        .logFor('mail')
        .warn({ ...identity, code: result.code, durationMs }, `SMTP verification failed: ${result.message}`);
      return {
        Succeeded: false,
        Message: result.message,
        Code: result.code,
        Result: { ...base, Authenticated: false, DurationMs: durationMs },
      };
    }
    const login = result.authenticated ? `, logged in as "${row.username}"` : ', no login';
    return {
      Succeeded: true,
      Message: `Connected to ${row.host}:${row.port} with ${TLS_TEXT[result.tls]}${login} (${durationMs} ms).`,
      Code: MailOutcomeCode.Verified,
      Result: { ...base, Authenticated: result.authenticated, DurationMs: durationMs },
    };
  }

  /** Tries the enabled configurations in priority order; the next one only after a failure it could fix. */
  async sendTestMessage(
    request: SendTestMessageRequest,
    ctx: RequestContext,
  ): Promise<SendTestMessageResponse> {
    try {
      const response = await this.deliverTestMessage(request, ctx);
      this.sends.inc({ code: String(response.Code ?? 'Sent') });
      return response;
    } catch (error) {
      this.sends.inc({ code: 'Error' });
      throw error;
    }
  }

  private async deliverTestMessage(
    request: SendTestMessageRequest,
    ctx: RequestContext,
  ): Promise<SendTestMessageResponse> {
    const log = ctx.logFor('mail');
    const tenant = tenantOf(request.Context);
    const rows = await this.configurations.enabledFor(tenant);
    const result = { Host: null, Port: null, Username: null, MessageId: null, Accepted: [], Attempts: [] };
    if (rows.length === 0) {
      return {
        Succeeded: false,
        Message: `Tenant "${tenant}" has no enabled SMTP configuration.`,
        Code: MailOutcomeCode.NoSmtpConfiguration,
        Result: result,
      };
    }
    const started = performance.now();
    const budgetMs =
      this.config.requestTimeoutMs > 0
        ? Math.max(this.config.requestTimeoutMs - ANSWER_RESERVE_MS, ANSWER_RESERVE_MS)
        : Number.POSITIVE_INFINITY;
    const attempts: DeliveryAttempt[] = [];
    for (const [index, row] of rows.entries()) {
      const remainingMs = budgetMs - (performance.now() - started);
      if (remainingMs <= 0) {
        attempts.push(...rows.slice(index).map((skipped) => notAttempted(skipped)));
        break;
      }
      const attempt = await this.attempt(tenant, row, request.To, this.limits(remainingMs), ctx, log);
      attempts.push(attempt.report);
      if (attempt.delivered) {
        log.info(
          { tenant, host: row.host, port: row.port, attempts: attempts.length },
          'SMTP test message sent',
        );
        const failedBefore = attempts.length - 1;
        return {
          Succeeded: true,
          Message:
            `Test message sent to ${request.To} through ${row.host}:${row.port}` +
            (failedBefore > 0 ? ` after ${failedBefore} failed configuration(s).` : '.'),
          Code: MailOutcomeCode.Sent,
          Result: {
            Host: row.host,
            Port: row.port,
            Username: attempt.report.Username,
            MessageId: attempt.delivered.messageId,
            Accepted: attempt.delivered.accepted,
            Attempts: attempts,
          },
        };
      }
      if (!attempt.failOver) break;
    }
    const codes = [
      ...new Set(attempts.filter((a) => a.Code !== String(MailOutcomeCode.NotAttempted)).map((a) => a.Code)),
    ];
    return {
      Succeeded: false,
      Message: `No SMTP configuration delivered the test message. ${attempts.map((a) => a.Message).join(' ')}`,
      Code: codes.length === 1 ? codes[0] : MailOutcomeCode.DeliveryFailed,
      Result: { ...result, Attempts: attempts },
    };
  }

  private async attempt(
    tenant: string,
    row: SmtpConfiguration,
    to: string,
    limits: SmtpLimits,
    ctx: RequestContext,
    log: Logger,
  ): Promise<{
    report: DeliveryAttempt;
    delivered?: { messageId: string; accepted: string[] };
    failOver: boolean;
  }> {
    const started = performance.now();
    const report = (succeeded: boolean, code: string, message: string): DeliveryAttempt => ({
      Host: row.host,
      Port: row.port,
      Username: row.username === '' ? null : row.username,
      Priority: row.priority,
      Succeeded: succeeded,
      Code: code,
      Message: message,
      DurationMs: Math.round(performance.now() - started),
    });
    let endpoint;
    try {
      endpoint = this.configurations.endpointOf(row);
    } catch (error) {
      if (!(error instanceof SecretUnavailableError)) throw error;
      log.warn({ tenant, host: row.host, port: row.port }, error.message);
      return { report: report(false, MailOutcomeCode.SecretUnavailable, error.message), failOver: true };
    }
    const checked = await this.destination(endpoint, limits);
    if (!('endpoint' in checked)) {
      log.warn({ tenant, host: row.host, port: row.port, code: checked.code }, checked.message);
      return { report: report(false, checked.code, checked.message), failOver: checked.failOver };
    }
    const result = await traced(
      'SMTP send',
      { 'server.address': endpoint.host, 'server.port': endpoint.port },
      () =>
        sendSmtp(
          checked.endpoint,
          {
            from: row.senderAddress,
            to,
            bcc: row.bcc,
            subject: 'Test message from platform-api',
            text:
              `This test message was sent by platform-api for tenant "${tenant}" through ${row.host}:${row.port} ` +
              `at ${new Date().toISOString()}. No action is needed.`,
            headers: { 'X-Correlation-Id': ctx.correlationId },
          },
          limits,
        ),
      'client',
    );
    if (result.ok) {
      return {
        report: report(
          true,
          MailOutcomeCode.Sent,
          `Sent through ${row.host}:${row.port} with ${TLS_TEXT[result.tls]}.`,
        ),
        delivered: { messageId: result.messageId, accepted: result.accepted },
        failOver: false,
      };
    }
    log.warn(
      { tenant, host: row.host, port: row.port, username: row.username, code: result.code },
      `SMTP delivery attempt failed: ${result.message}`,
    );
    return { report: report(false, result.code, result.message), failOver: result.failOver };
  }
}

function errorCode(error: unknown): string {
  return error !== null && typeof error === 'object' && 'code' in error && typeof error.code === 'string'
    ? error.code
    : '';
}

function notAttempted(row: SmtpConfiguration): DeliveryAttempt {
  return {
    Host: row.host,
    Port: row.port,
    Username: row.username === '' ? null : row.username,
    Priority: row.priority,
    Succeeded: false,
    Code: MailOutcomeCode.NotAttempted,
    Message: `${describeConfiguration(row)} was not tried: the request ran out of time.`,
    DurationMs: 0,
  };
}
