import { Column, Entity, Index } from 'typeorm';
import { InstantColumn, JsonColumn, UuidPrimaryColumn } from '../../database/portable-columns.js';
import type { SmartAppConfig } from '../smartapp/automation-plan.js';

/**
 * One installation of the SmartApp in one tenant (`{domain}` of the webhook path). The tokens are ciphertexts of
 * the encryption service (AES-256-GCM) and never leave the service.
 */
@Entity({ name: 'webhook_installed_apps' })
@Index('UQ_webhook_installed_apps_domain_app', ['domain', 'installedAppId'], { unique: true })
export class WebhookInstalledApp {
  @UuidPrimaryColumn()
  id!: string;

  @Column({ type: 'varchar', length: 253 })
  domain!: string;

  @Column({ name: 'installed_app_id', type: 'varchar', length: 100 })
  installedAppId!: string;

  @Column({ name: 'app_id', type: 'varchar', length: 100, nullable: true })
  appId!: string | null;

  @Column({ name: 'location_id', type: 'varchar', length: 100, nullable: true })
  locationId!: string | null;

  @JsonColumn()
  config!: SmartAppConfig;

  @JsonColumn()
  permissions!: string[];

  @Column({ name: 'auth_token', type: 'text', nullable: true })
  authToken!: string | null;

  /** When SmartThings stops accepting the auth token (5 minutes after it was issued, unless refreshed). */
  @InstantColumn({ name: 'auth_token_expires_at', nullable: true })
  authTokenExpiresAt!: Date | null;

  @Column({ name: 'refresh_token', type: 'text', nullable: true })
  refreshToken!: string | null;

  @InstantColumn({ name: 'installed_at' })
  installedAt!: Date;

  @InstantColumn({ name: 'updated_at' })
  updatedAt!: Date;
}
