// The replication model (docs/replication.md): servers with nodes; change sets numbered per (collection, origin node); each
// node's applied watermark per (collection, origin), which only moves forward; the history of apply times (so
// "when did node X apply change set N" has an exact answer) and the apply errors agents reported.
// Rows are written with conditional upserts (replication.store.ts); these entities give the schema and the reads.
// The tables keyed by (collection, origin, …) are WITHOUT ROWID on SQLite: the primary key is then the table's
// clustered order, so the diagnosis's per-node lookups read one B-tree instead of an index plus the table.
// (PostgreSQL ignores the option.)
import { Column, Entity, Index, PrimaryColumn, type ValueTransformer } from 'typeorm';
import { InstantColumn, UuidPrimaryColumn } from '../../database/portable-columns.js';

/** Server and node ids, collection and origin names: what agents send, up to this length. */
export const REPLICATION_NAME_LENGTH = 200;

/** PostgreSQL returns bigint as text; change-set numbers stay below 2^53. */
const bigintNumber: ValueTransformer = {
  to: (value: unknown) => value,
  from: (value: unknown) => (value === null || value === undefined ? value : Number(value)),
};

@Entity({ name: 'replication_servers' })
export class ReplicationServer {
  @PrimaryColumn({ type: 'varchar', length: REPLICATION_NAME_LENGTH })
  id!: string;

  @Column({ type: 'varchar', length: REPLICATION_NAME_LENGTH })
  name!: string;

  @InstantColumn({ name: 'registered_at' })
  registeredAt!: Date;

  @InstantColumn({ name: 'decommissioned_at', nullable: true })
  decommissionedAt!: Date | null;
}

@Entity({ name: 'replication_nodes' })
@Index('IX_replication_nodes_server_id', ['serverId'])
export class ReplicationNode {
  @PrimaryColumn({ type: 'varchar', length: REPLICATION_NAME_LENGTH })
  id!: string;

  @Column({ name: 'server_id', type: 'varchar', length: REPLICATION_NAME_LENGTH })
  serverId!: string;

  @Column({ type: 'varchar', length: REPLICATION_NAME_LENGTH })
  name!: string;

  @InstantColumn({ name: 'registered_at' })
  registeredAt!: Date;

  /** Last sign of life (heartbeat At or report AppliedAt), capped at the time it was received. */
  @InstantColumn({ name: 'last_seen_at', nullable: true })
  lastSeenAt!: Date | null;

  @InstantColumn({ name: 'last_heartbeat_at', nullable: true })
  lastHeartbeatAt!: Date | null;

  @Column({ name: 'agent_version', type: 'varchar', length: 100, nullable: true })
  agentVersion!: string | null;

  @InstantColumn({ name: 'decommissioned_at', nullable: true })
  decommissionedAt!: Date | null;
}

@Entity({ name: 'replication_change_sets', withoutRowid: true })
export class ReplicationChangeSet {
  @PrimaryColumn({ type: 'varchar', length: REPLICATION_NAME_LENGTH })
  collection!: string;

  @PrimaryColumn({ type: 'varchar', length: REPLICATION_NAME_LENGTH })
  origin!: string;

  @PrimaryColumn({ type: 'bigint', transformer: bigintNumber })
  number!: number;

  @InstantColumn({ name: 'created_at' })
  createdAt!: Date;
}

@Entity({ name: 'replication_watermarks', withoutRowid: true })
@Index('IX_replication_watermarks_collection_origin', ['collection', 'origin', 'applied'])
export class ReplicationWatermark {
  @PrimaryColumn({ name: 'node_id', type: 'varchar', length: REPLICATION_NAME_LENGTH })
  nodeId!: string;

  @PrimaryColumn({ type: 'varchar', length: REPLICATION_NAME_LENGTH })
  collection!: string;

  @PrimaryColumn({ type: 'varchar', length: REPLICATION_NAME_LENGTH })
  origin!: string;

  @Column({ type: 'bigint', transformer: bigintNumber })
  applied!: number;

  @InstantColumn({ name: 'applied_at' })
  appliedAt!: Date;
}

/** One row per watermark a node reported, with the earliest time reported for it. */
@Entity({ name: 'replication_applies', withoutRowid: true })
@Index('IX_replication_applies_collection_origin_applied', ['collection', 'origin', 'applied'])
export class ReplicationApply {
  @PrimaryColumn({ type: 'varchar', length: REPLICATION_NAME_LENGTH })
  collection!: string;

  @PrimaryColumn({ type: 'varchar', length: REPLICATION_NAME_LENGTH })
  origin!: string;

  @PrimaryColumn({ name: 'node_id', type: 'varchar', length: REPLICATION_NAME_LENGTH })
  nodeId!: string;

  @PrimaryColumn({ type: 'bigint', transformer: bigintNumber })
  applied!: number;

  @InstantColumn({ name: 'applied_at' })
  appliedAt!: Date;
}

@Entity({ name: 'replication_errors' })
@Index(
  'UQ_replication_errors_occurrence',
  ['nodeId', 'collection', 'origin', 'changeSet', 'code', 'occurredAt'],
  { unique: true },
)
@Index('IX_replication_errors_collection_origin', ['collection', 'origin', 'changeSet'])
export class ReplicationReportedError {
  @UuidPrimaryColumn()
  id!: string;

  @Column({ name: 'node_id', type: 'varchar', length: REPLICATION_NAME_LENGTH })
  nodeId!: string;

  @Column({ type: 'varchar', length: REPLICATION_NAME_LENGTH })
  collection!: string;

  @Column({ type: 'varchar', length: REPLICATION_NAME_LENGTH })
  origin!: string;

  /** 0 when the failure is not tied to a change set (0 rather than NULL, so the unique index deduplicates it). */
  @Column({ name: 'change_set', type: 'bigint', transformer: bigintNumber })
  changeSet!: number;

  @Column({ type: 'varchar', length: 100 })
  code!: string;

  @Column({ type: 'varchar', length: 2000 })
  message!: string;

  @Column({ type: 'text', nullable: true })
  data!: string | null;

  @InstantColumn({ name: 'occurred_at' })
  occurredAt!: Date;

  @InstantColumn({ name: 'received_at' })
  receivedAt!: Date;
}

export const REPLICATION_ENTITIES = [
  ReplicationServer,
  ReplicationNode,
  ReplicationChangeSet,
  ReplicationWatermark,
  ReplicationApply,
  ReplicationReportedError,
];
