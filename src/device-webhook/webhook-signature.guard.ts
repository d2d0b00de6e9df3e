// Authentication of the device webhook: the HTTP signature SmartThings puts on every lifecycle but
// PING, checked over the raw body bytes and the exact path posted (draft-cavage-http-signatures-12, see
// ./signature). The route is @Public() (no API key); this guard is its only gate.
import fs from 'node:fs';
import {
  Inject,
  Injectable,
  type CanActivate,
  type ExecutionContext,
  type OnModuleInit,
  type RawBodyRequest,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { APP_CONFIG, type AppConfig } from '../config/config.js';
import { ROOT_LOGGER } from '../core/core.module.js';
import { PlatformError, PlatformErrorCode } from '../errors/api-error.js';
import type { WithRequestContext } from '../logging/request-context.js';
import { RESOLVED_WEBHOOK_OPTIONS, type DeviceWebhookOptions } from './device-webhook.options.js';
import {
  createKeyResolver,
  KeyConfigurationError,
  verifySignedRequest,
  type KeyResolver,
  type SignatureVerification,
} from './signature/index.js';
import { lifecycleOf } from './smartapp/lifecycle.js';
import { DeviceWebhookService } from './device-webhook.service.js';

/** Reads SMARTTHINGS_PUBLIC_KEY(_FILE) once; an inline PEM may carry its line breaks as literal `\n`. */
export function configuredPublicKeyPem(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value.startsWith('file:')) {
    const file = value.slice('file:'.length);
    try {
      return fs.readFileSync(file, 'utf8');
    } catch (error) {
      throw new KeyConfigurationError(
        `SMARTTHINGS_PUBLIC_KEY_FILE: ${file} cannot be read: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
  return value.replace(/\\n/g, '\n');
}

@Injectable()
export class WebhookSignatureVerifier implements OnModuleInit {
  /** Built in onModuleInit: a failure there (bad key) lets the start-up close what it opened. */
  private resolveKey: KeyResolver = () => Promise.resolve(undefined);
  private readonly logger: Logger;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(RESOLVED_WEBHOOK_OPTIONS) private readonly options: DeviceWebhookOptions,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.logger = logger.child({ area: 'webhook' });
  }

  onModuleInit(): void {
    // A bad key stops the start (one line naming the variable) instead of failing every request.
    const { publicKey, keyUrl } = this.config.smartthings;
    const variable = publicKey?.startsWith('file:')
      ? 'SMARTTHINGS_PUBLIC_KEY_FILE'
      : 'SMARTTHINGS_PUBLIC_KEY';
    try {
      this.resolveKey = createKeyResolver({
        publicKeyPem: configuredPublicKeyPem(publicKey),
        keyUrlBase: keyUrl,
        fetchTimeoutMs: this.options.keyFetchTimeoutMs,
        onFetchError: (keyId, error) =>
          this.logger.warn(
            { keyId, reason: error instanceof Error ? error.message : String(error) },
            'SmartThings signing certificate could not be fetched',
          ),
      });
    } catch (error) {
      if (!(error instanceof KeyConfigurationError) || error.message.startsWith(variable)) throw error;
      throw new KeyConfigurationError(`${variable}: ${error.message}`);
    }
    if (!this.config.smartthings.verifySignatures) {
      this.logger.warn(
        'SMARTTHINGS_DISABLE_SIGNATURE_VERIFICATION_UNSAFE is set: the device webhook accepts UNSIGNED requests. ' +
          'Anyone who can reach it can install apps and switch lights. Development only.',
      );
    }
  }

  get enabled(): boolean {
    return this.config.smartthings.verifySignatures;
  }

  verify(request: RawBodyRequest<FastifyRequest>): Promise<SignatureVerification> {
    return verifySignedRequest({
      method: request.method,
      path: request.url,
      headers: request.headers,
      rawBody: request.rawBody ?? Buffer.alloc(0),
      now: this.options.now(),
      // The sender's address, for the per-source budget of key fetches (behind a proxy: see TRUST_PROXY).
      resolveKey: (keyId) => this.resolveKey(keyId, request.ip),
    });
  }
}

/** What the guard leaves on a request whose signature it verified (for the replay check). */
export interface SignedWebhookRequest extends FastifyRequest {
  verifiedSignature?: { keyId: string; signature: Buffer };
}

@Injectable()
export class WebhookSignatureGuard implements CanActivate {
  constructor(
    private readonly verifier: WebhookSignatureVerifier,
    private readonly webhook: DeviceWebhookService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<RawBodyRequest<FastifyRequest> & WithRequestContext>();
    const log = request.context!.logFor('webhook');
    const lifecycle = lifecycleOf(request.body);
    // PING proves only that the URL answers; SmartThings does not sign it.
    if (lifecycle === 'PING' || !this.verifier.enabled) return true;
    const params = request.params as Record<string, string | undefined>;
    if (request.rawBody === undefined) {
      this.reject(
        log,
        params.domain,
        lifecycle,
        'missing-signature',
        'body was not sent as application/json',
      );
    }
    const result = await this.verifier.verify(request);
    if (!result.ok) this.reject(log, params.domain, lifecycle, result.reason, result.detail, result.keyId);
    (request as SignedWebhookRequest).verifiedSignature = {
      keyId: result.keyId,
      signature: result.signature,
    };
    return true;
  }

  private reject(
    log: Logger,
    domain: string | undefined,
    lifecycle: string | undefined,
    reason: string,
    detail: string,
    keyId?: string,
  ): never {
    this.webhook.countRejected(lifecycle);
    // Never the headers or the body: they carry the signature and the installed app's tokens.
    log.warn(
      { domain: domain ?? null, lifecycle: lifecycle ?? null, reason, detail, keyId: keyId ?? null },
      'device webhook request rejected: invalid HTTP signature',
    );
    throw new PlatformError(
      PlatformErrorCode.Unauthorized,
      'The request does not carry a valid SmartThings HTTP signature.',
    );
  }
}
