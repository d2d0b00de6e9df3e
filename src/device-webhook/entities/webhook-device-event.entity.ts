import { Column, Entity, Index } from 'typeorm';
import { InstantColumn, JsonColumn, UuidPrimaryColumn } from '../../database/portable-columns.js';

/** Any JSON value, as SmartThings sends attribute values (strings, numbers, objects, arrays). */
export type JsonValue = string | number | boolean | null | object;

export interface StoredDeviceEvent {
  SubscriptionName: string | null;
  EventId: string | null;
  LocationId: string | null;
  DeviceId: string | null;
  ComponentId: string | null;
  Capability: string | null;
  Attribute: string | null;
  Value: JsonValue;
  StateChange: boolean | null;
}

export interface StoredTimerEvent {
  EventId: string | null;
  Name: string;
  Type: string | null;
  Time: string | null;
}

export interface StoredEventPayload {
  DeviceEvent: StoredDeviceEvent | null;
  TimerEvent: StoredTimerEvent | null;
}

/**
 * An event SmartThings delivered to an installed app (EVENT lifecycle). The unique index is the deduplication:
 * SmartThings redelivers a lifecycle it got no timely answer for, and a replay must not run the automation twice.
 */
@Entity({ name: 'webhook_device_events' })
@Index('UQ_webhook_device_events_app_event', ['domain', 'installedAppId', 'eventId'], { unique: true })
@Index('IX_webhook_device_events_app_received', ['domain', 'installedAppId', 'receivedAt'])
export class WebhookDeviceEvent {
  @UuidPrimaryColumn()
  id!: string;

  @Column({ type: 'varchar', length: 253 })
  domain!: string;

  @Column({ name: 'installed_app_id', type: 'varchar', length: 100 })
  installedAppId!: string;

  @Column({ name: 'event_id', type: 'varchar', length: 200 })
  eventId!: string;

  @Column({ name: 'event_type', type: 'varchar', length: 50 })
  eventType!: string;

  @Column({ name: 'event_time', type: 'varchar', length: 64, nullable: true })
  eventTime!: string | null;

  @InstantColumn({ name: 'received_at' })
  receivedAt!: Date;

  @JsonColumn()
  payload!: StoredEventPayload;
}
