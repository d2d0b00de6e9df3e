import { randomUUID } from 'node:crypto';
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { EntityManager, Repository } from 'typeorm';
import type { AuditSource } from '../audit/audit-source.js';
import { AuditTrail } from '../audit/audit-trail.js';
import { isUniqueViolation } from '../database/constraint-errors.js';
import { inTransaction } from '../database/transaction.js';
import { tenantOf } from '../common/dto/context.dto.js';
import { APP_CONFIG, type AppConfig } from '../config/config.js';
import { EgressError } from '../egress/egress.errors.js';
import { EgressService } from '../egress/egress.service.js';
import { EncryptionService } from '../crypto/encryption.service.js';
import { SecretStoreRegistry } from '../crypto/secret-store.registry.js';
import { PlatformError } from '../errors/api-error.js';
import type { RequestContext } from '../logging/request-context.js';
import type { SmtpConfigurationView } from './dto/mail-responses.dto.js';
import type { EnsureSmtpConfigurationRequest, SmtpIdentityRequest } from './dto/smtp-configuration.dto.js';
import { SmtpConfiguration } from './entities/smtp-configuration.entity.js';
import { MailError, MailOutcomeCode } from './mail.errors.js';
import type { SmtpEndpoint } from './smtp/smtp-endpoint.js';
import { normalizeSmtpHost } from './smtp/smtp-host.js';
import { readSecretInput, type SecretInput } from './smtp/smtp-secret-input.js';
import {
  describeConfiguration,
  normalizeBcc,
  passwordRequired,
  smtpChange,
  type SmtpIdentity,
  toView,
} from './smtp-configuration-view.js';

export interface EnsureOutcome {
  code: MailOutcomeCode.Created | MailOutcomeCode.Updated | MailOutcomeCode.Unchanged;
  message: string;
}

type Settings = Pick<
  SmtpConfiguration,
  'ssl' | 'authRequired' | 'allowInvalidCertificate' | 'senderAddress' | 'priority' | 'enabled' | 'bcc'
>;

/** Field names as the client knows them, for "updated (Priority, Password)" messages. */
const FIELD_NAMES: Record<keyof Settings | 'passwordCiphertext' | 'internalPasswordCiphertext', string> = {
  ssl: 'Ssl',
  authRequired: 'AuthRequired',
  allowInvalidCertificate: 'AllowInvalidCertificate',
  senderAddress: 'SenderAddress',
  priority: 'Priority',
  enabled: 'Enabled',
  bcc: 'BCC',
  passwordCiphertext: 'Password',
  internalPasswordCiphertext: 'InternalPassword',
};

/** Another request may create or remove the same identity between our read and our write; retry that often. */
const MAX_ENSURE_ATTEMPTS = 3;

export class SecretUnavailableError extends Error {
  override name = 'SecretUnavailableError';
}

/** Stores, lists and removes SMTP configurations (docs/mail.md); owns their secrets at rest. */
@Injectable()
export class SmtpConfigurationsService implements OnModuleInit {
  constructor(
    @InjectRepository(SmtpConfiguration) private readonly configurations: Repository<SmtpConfiguration>,
    private readonly encryption: EncryptionService,
    private readonly secretStores: SecretStoreRegistry,
    private readonly egress: EgressService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly audit: AuditTrail,
  ) {}

  onModuleInit(): void {
    this.secretStores.register({
      name: 'mail.smtp_configurations',
      reencrypt: (rewrite, manager) => this.reencrypt(rewrite, manager),
    });
  }

  identityOf(request: SmtpIdentityRequest): SmtpIdentity {
    return {
      tenant: tenantOf(request.Context),
      host: normalizeSmtpHost(request.Host),
      port: request.Port,
      username: request.Username ?? '',
    };
  }

  /** Operation 4: create, or update the non-identity fields; concurrent identical calls all succeed. */
  async ensure(
    request: EnsureSmtpConfigurationRequest,
    ctx: RequestContext,
    by: AuditSource,
  ): Promise<EnsureOutcome> {
    const identity = this.identityOf(request);
    // A literal address (any numeric spelling) the egress policy refuses is refused before it is stored; a name is
    // judged when it is used, as it may resolve differently by then.
    const refusal = this.egress.literalRefusal(identity.host);
    if (refusal !== null) throw EgressError.hostNotAllowed('Host', refusal);
    for (let attempt = 1; ; attempt++) {
      const existing = await this.configurations.findOneBy({ ...identity });
      if (existing === null) {
        await this.checkCap(identity.tenant);
        try {
          const row = this.newRow(identity, request);
          await this.inTransaction(async (manager) => {
            await manager.insert(SmtpConfiguration, row);
            await this.audit.record(manager, smtpChange(by, 'create', row.id, identity));
          });
        } catch (error) {
          // The unique index decided a race: someone created it first, so this call becomes an update.
          if (isUniqueViolation(error) && attempt < MAX_ENSURE_ATTEMPTS) continue;
          throw error;
        }
        ctx.logFor('mail').info({ ...identity }, 'SMTP configuration created');
        return { code: MailOutcomeCode.Created, message: `${describeConfiguration(identity)} created.` };
      }
      const patch = this.changes(existing, request);
      const changed = Object.keys(patch) as Array<keyof typeof FIELD_NAMES>;
      if (changed.length === 0) {
        return {
          code: MailOutcomeCode.Unchanged,
          message: `${describeConfiguration(identity)} is unchanged.`,
        };
      }
      const names = changed.map((key) => FIELD_NAMES[key]);
      const affected = await this.inTransaction(async (manager) => {
        const result = await manager.update(
          SmtpConfiguration,
          { id: existing.id },
          { ...patch, updatedAt: new Date() },
        );
        if (result.affected !== 0)
          await this.audit.record(manager, smtpChange(by, 'update', existing.id, identity, names));
        return result.affected;
      });
      // Removed between our read and our write: start over, which creates it again.
      if (affected === 0 && attempt < MAX_ENSURE_ATTEMPTS) continue;
      ctx.logFor('mail').info({ ...identity, changed: names }, 'SMTP configuration updated');
      return {
        code: MailOutcomeCode.Updated,
        message: `${describeConfiguration(identity)} updated (${names.join(', ')}).`,
      };
    }
  }

  async list(domain: string | null | undefined): Promise<SmtpConfigurationView[]> {
    const tenant = tenantOf({ Domain: domain });
    const rows = await this.configurations.find({
      where: { tenant },
      order: { priority: 'ASC', host: 'ASC', port: 'ASC', username: 'ASC' },
    });
    return rows.map(toView);
  }

  async remove(request: SmtpIdentityRequest, ctx: RequestContext, by: AuditSource): Promise<string> {
    const identity = this.identityOf(request);
    await this.inTransaction(async (manager) => {
      const existing = await manager.findOneBy(SmtpConfiguration, { ...identity });
      const result =
        existing === null ? undefined : await manager.delete(SmtpConfiguration, { id: existing.id });
      if (!existing || !result?.affected) throw MailError.notFound(identity);
      await this.audit.record(manager, smtpChange(by, 'remove', existing.id, identity));
    });
    ctx.logFor('mail').info({ ...identity }, 'SMTP configuration removed');
    return `${describeConfiguration(identity)} removed.`;
  }

  async find(identity: SmtpIdentity): Promise<SmtpConfiguration | null> {
    return this.configurations.findOneBy({ ...identity });
  }

  /** The tenant's enabled configurations in fail-over order. */
  async enabledFor(tenant: string): Promise<SmtpConfiguration[]> {
    return this.configurations.find({
      where: { tenant, enabled: true },
      order: { priority: 'ASC', host: 'ASC', port: 'ASC', username: 'ASC' },
    });
  }

  /** The connection settings with the password decrypted, only for the moment of a session. */
  endpointOf(row: SmtpConfiguration): SmtpEndpoint {
    let password: string | null = null;
    if (row.passwordCiphertext !== null) {
      try {
        password = this.encryption.decrypt(row.passwordCiphertext);
      } catch (error) {
        throw new SecretUnavailableError(
          `The stored password of ${describeConfiguration(row)} cannot be decrypted (${(error as Error).message}).`,
        );
      }
    }
    return {
      host: row.host,
      port: row.port,
      ssl: row.ssl,
      authRequired: row.authRequired,
      allowInvalidCertificate: row.allowInvalidCertificate,
      username: row.username,
      password,
    };
  }

  private newRow(identity: SmtpIdentity, request: EnsureSmtpConfigurationRequest): SmtpConfiguration {
    const password = readSecretInput(request.Password);
    const internal = readSecretInput(request.InternalPassword);
    const authRequired = request.AuthRequired ?? false;
    if (authRequired && password.kind !== 'set') throw passwordRequired('a new configuration');
    const now = new Date();
    return Object.assign(new SmtpConfiguration(), {
      id: randomUUID(),
      ...identity,
      ssl: request.Ssl ?? false,
      authRequired,
      allowInvalidCertificate: request.AllowInvalidCertificate ?? false,
      passwordCiphertext: password.kind === 'set' ? this.encryption.encrypt(password.value) : null,
      internalPasswordCiphertext: internal.kind === 'set' ? this.encryption.encrypt(internal.value) : null,
      senderAddress: request.SenderAddress.trim(),
      priority: request.Priority ?? 0,
      enabled: request.Enabled ?? true,
      bcc: normalizeBcc(request.BCC),
      createdAt: now,
      updatedAt: now,
    });
  }

  /** Only what differs; absent optional fields keep their stored values. */
  /**
   * At most SMTP_MAX_CONFIGURATIONS_PER_TENANT configurations per tenant: fail-over tries each in turn, so an
   * unbounded list would let one sendTestMessage probe any number of ports. (Two concurrent creations may both
   * pass the count; the cap bounds work, one over it is harmless.)
   */
  private async checkCap(tenant: string): Promise<void> {
    const max = this.config.mail.maxConfigurationsPerTenant;
    const count = await this.configurations.countBy({ tenant });
    if (count < max) return;
    throw PlatformError.validation([
      {
        Field: 'Host',
        Message:
          `Tenant "${tenant}" already has ${count} SMTP configurations, the maximum ` +
          `(SMTP_MAX_CONFIGURATIONS_PER_TENANT=${max}); remove one before adding another`,
      },
    ]);
  }

  private changes(
    existing: SmtpConfiguration,
    request: EnsureSmtpConfigurationRequest,
  ): Partial<SmtpConfiguration> {
    const wanted: Settings = {
      ssl: request.Ssl ?? existing.ssl,
      authRequired: request.AuthRequired ?? existing.authRequired,
      allowInvalidCertificate: request.AllowInvalidCertificate ?? existing.allowInvalidCertificate,
      senderAddress: request.SenderAddress.trim(),
      priority: request.Priority ?? existing.priority,
      enabled: request.Enabled ?? existing.enabled,
      bcc: request.BCC === undefined ? existing.bcc : normalizeBcc(request.BCC),
    };
    const patch: Partial<SmtpConfiguration> = {};
    for (const key of Object.keys(wanted) as Array<keyof Settings>) {
      if (JSON.stringify(wanted[key]) !== JSON.stringify(existing[key])) {
        Object.assign(patch, { [key]: wanted[key] });
      }
    }
    // A change that weakens transport security (TLS off, certificate checks off) must not carry the stored
    // secrets to where they could be read: they are dropped unless this request supplies them again. (Host and
    // Port are part of the identity, so changing them makes a new configuration that never had the old secrets.)
    const downgrade =
      (existing.ssl && !wanted.ssl) || (!existing.allowInvalidCertificate && wanted.allowInvalidCertificate);
    const keepOrDrop = (input: SecretInput): SecretInput =>
      downgrade && input.kind === 'keep' ? { kind: 'clear' } : input;
    const password = this.secretChange(
      existing.passwordCiphertext,
      keepOrDrop(readSecretInput(request.Password)),
    );
    if (password !== undefined) patch.passwordCiphertext = password;
    const internal = this.secretChange(
      existing.internalPasswordCiphertext,
      keepOrDrop(readSecretInput(request.InternalPassword)),
    );
    if (internal !== undefined) patch.internalPasswordCiphertext = internal;

    const hasPassword = password === undefined ? existing.passwordCiphertext !== null : password !== null;
    if (wanted.authRequired && !hasPassword)
      throw passwordRequired(
        downgrade && existing.passwordCiphertext !== null
          ? 'a change that weakens transport security (Ssl off or AllowInvalidCertificate on drops the stored ' +
              'password; send it again with the change)'
          : 'this configuration (none is stored)',
      );
    return patch;
  }

  /** undefined: no change; null: remove; a string: the new ciphertext. */
  private secretChange(stored: string | null, input: SecretInput): string | null | undefined {
    switch (input.kind) {
      case 'keep':
        return undefined;
      case 'clear':
        return stored === null ? undefined : null;
      case 'set':
        // Re-sending the same secret is "Unchanged", not a fresh ciphertext (and an Updated) on every call.
        return stored !== null && this.decryptsTo(stored, input.value)
          ? undefined
          : this.encryption.encrypt(input.value);
    }
  }

  private decryptsTo(ciphertext: string, plaintext: string): boolean {
    try {
      return this.encryption.decrypt(ciphertext) === plaintext;
    } catch {
      return false;
    }
  }

  private inTransaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return inTransaction(this.configurations.manager.connection, work);
  }

  /** SecretStore for `encryption:rotate-key`: every stored secret, in the rotation's transaction. */
  private async reencrypt(rewrite: (ciphertext: string) => string, manager: EntityManager): Promise<number> {
    const rows = await manager.find(SmtpConfiguration, {
      select: { id: true, passwordCiphertext: true, internalPasswordCiphertext: true },
    });
    let count = 0;
    for (const row of rows) {
      const patch: Partial<SmtpConfiguration> = {};
      if (row.passwordCiphertext !== null) patch.passwordCiphertext = rewrite(row.passwordCiphertext);
      if (row.internalPasswordCiphertext !== null)
        patch.internalPasswordCiphertext = rewrite(row.internalPasswordCiphertext);
      const rewritten = Object.keys(patch).length;
      if (rewritten === 0) continue;
      await manager.update(SmtpConfiguration, { id: row.id }, patch);
      count += rewritten;
    }
    return count;
  }
}
