import { Column, Entity, Index } from 'typeorm';
import { IdentityPrimaryColumn, InstantColumn } from '../../database/portable-columns.js';

/** One change or refusal (src/audit/audit-trail.ts): the columns both audit tables have. */
abstract class AuditEventColumns {
  /** A number on SQLite, text on PostgreSQL (bigint). */
  @IdentityPrimaryColumn()
  id!: number | string;

  @InstantColumn({ name: 'occurred_at' })
  occurredAt!: Date;

  @Column({ name: 'actor_type', type: 'varchar', length: 16 })
  actorType!: string;

  @Column({ name: 'actor_id', type: 'varchar', length: 300, nullable: true })
  actorId!: string | null;

  @Column({ name: 'actor_name', type: 'varchar', length: 200, nullable: true })
  actorName!: string | null;

  @Column({ name: 'actor_issuer', type: 'varchar', length: 500, nullable: true })
  actorIssuer!: string | null;

  @Column({ type: 'varchar', length: 64 })
  action!: string;

  @Column({ name: 'resource_type', type: 'varchar', length: 64 })
  resourceType!: string;

  @Column({ name: 'resource_id', type: 'varchar', length: 300, nullable: true })
  resourceId!: string | null;

  @Column({ type: 'varchar', length: 16 })
  outcome!: string;

  @Column({ name: 'correlation_id', type: 'varchar', length: 128, nullable: true })
  correlationId!: string | null;

  @Column({ name: 'client_address', type: 'varchar', length: 64, nullable: true })
  clientAddress!: string | null;

  /** Small non-secret JSON (audit-trail.ts keeps it to strings, numbers and booleans). */
  @Column({ type: 'text', nullable: true })
  detail!: string | null;
}

/** The trail as the reader's filters use it; append-only (migrations/1763780001500-AuditEvents.ts). */
@Entity({ name: 'audit_events' })
@Index('IX_audit_events_occurred_at', ['occurredAt', 'id'])
@Index('IX_audit_events_actor_id', ['actorId', 'id'])
@Index('IX_audit_events_actor_name', ['actorName', 'id'])
@Index('IX_audit_events_action', ['action', 'id'])
@Index('IX_audit_events_resource_type', ['resourceType', 'id'])
@Index('IX_audit_events_resource_id', ['resourceId', 'id'])
export class AuditEvent extends AuditEventColumns {}

/** Events not yet folded into audit_events: its primary key only (migrations/1763780001800-AuditEventsTail.ts). */
@Entity({ name: 'audit_events_tail' })
export class AuditTailEvent extends AuditEventColumns {}
