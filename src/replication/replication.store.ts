// Reads and writes of the replication model. Every write is an idempotent, atomic upsert, so a
// retried, repeated or out-of-order agent call changes nothing it should not, and concurrent reports from many
// nodes lose nothing: watermarks move only forward (`WHERE excluded.applied > …`), apply times keep the earliest
// report, errors are deduplicated by a unique index, a node's last sign of life only moves forward.
// The diagnosis reads a fixed number of queries whatever the number of servers and nodes (see loadFacts).
import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { ErrorOccurrence, NodeFacts, ServerFacts } from './state/change-set-state.js';
import type { GaugeNode, GaugePair, GaugeWatermark } from './state/replication-gauges.js';
import {
  readInstant,
  readNumber,
  ReplicationSql,
  type SqlParam,
  type SqlStatement,
} from './replication-sql.js';

export const NOTIFY_CHANNEL = 'platform_replication';

export interface ChangeSetCreatedInput {
  collection: string;
  origin: string;
  changeSet: number;
  createdAt: Date;
}

export interface ReportedError {
  code: string;
  message: string;
  changeSet: number | null;
  data: string | null;
}

export interface ReportInput {
  server: string;
  node: string;
  collection: string;
  origin: string;
  applied: number;
  appliedAt: Date;
  errors: readonly ReportedError[];
}

export interface HeartbeatInput {
  server: string;
  node: string;
  at: Date;
  agentVersion: string | null;
}

export interface OriginFacts {
  /** Highest number announced with changeSetCreated. */
  announced: number | null;
  /** Highest watermark any node reported. */
  reported: number | null;
}

export interface StateFacts {
  servers: ServerFacts[];
  changeSetCreatedAt: Date | null;
}

/** Errors read per diagnosis at most (20 occurrences per distinct error and node are kept by the query). */
const MAX_ERROR_ROWS = 5000;

@Injectable()
export class ReplicationStore {
  readonly sql: ReplicationSql;

  constructor(@Inject(DataSource) dataSource: DataSource) {
    this.sql = new ReplicationSql(dataSource);
  }

  /** True when this call recorded the change set (false: it was already known). */
  async recordChangeSet(input: ChangeSetCreatedInput, notifyPayload: string): Promise<boolean> {
    const [inserted] = await this.sql.transaction([
      {
        sql: `INSERT INTO replication_change_sets (collection, origin, number, created_at) VALUES (?, ?, ?, ?)
              ON CONFLICT (collection, origin, number) DO NOTHING`,
        params: [input.collection, input.origin, input.changeSet, this.sql.instant(input.createdAt)],
      },
      ...this.notify(notifyPayload),
    ]);
    return inserted > 0;
  }

  /** True when the node's watermark moved forward. */
  async recordReport(input: ReportInput, receivedAt: Date, notifyPayload: string): Promise<boolean> {
    const statements: SqlStatement[] = [
      ...this.register(input.server, input.node, minDate(input.appliedAt, receivedAt), receivedAt),
    ];
    const watermarkStatement = statements.length;
    statements.push({
      sql: `INSERT INTO replication_watermarks (node_id, collection, origin, applied, applied_at) VALUES (?, ?, ?, ?, ?)
              ON CONFLICT (node_id, collection, origin) DO UPDATE
                SET applied = excluded.applied, applied_at = excluded.applied_at
                WHERE excluded.applied > replication_watermarks.applied`,
      params: [input.node, input.collection, input.origin, input.applied, this.sql.instant(input.appliedAt)],
    });
    if (input.applied > 0) {
      statements.push({
        sql: `INSERT INTO replication_applies (collection, origin, node_id, applied, applied_at) VALUES (?, ?, ?, ?, ?)
              ON CONFLICT (collection, origin, node_id, applied) DO UPDATE
                SET applied_at = excluded.applied_at
                WHERE excluded.applied_at < replication_applies.applied_at`,
        params: [
          input.collection,
          input.origin,
          input.node,
          input.applied,
          this.sql.instant(input.appliedAt),
        ],
      });
    }
    if (input.errors.length > 0) {
      const rows = input.errors.map((error): SqlParam[] => [
        randomUUID(),
        input.node,
        input.collection,
        input.origin,
        error.changeSet ?? 0,
        error.code,
        error.message,
        error.data,
        this.sql.instant(input.appliedAt),
        this.sql.instant(receivedAt),
      ]);
      statements.push({
        sql: `INSERT INTO replication_errors
                (id, node_id, collection, origin, change_set, code, message, data, occurred_at, received_at)
              VALUES ${rows.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}
              ON CONFLICT (node_id, collection, origin, change_set, code, occurred_at) DO NOTHING`,
        params: rows.flat(),
      });
    }
    statements.push(...this.notify(notifyPayload));
    const changed = await this.sql.transaction(statements);
    return changed[watermarkStatement] > 0;
  }

  async recordHeartbeat(input: HeartbeatInput, receivedAt: Date): Promise<void> {
    const at = this.sql.instant(minDate(input.at, receivedAt));
    await this.sql.transaction([
      ...this.register(input.server, input.node, minDate(input.at, receivedAt), receivedAt),
      {
        sql: `UPDATE replication_nodes
                 SET last_heartbeat_at = ?, agent_version = COALESCE(?, agent_version)
               WHERE id = ? AND (last_heartbeat_at IS NULL OR last_heartbeat_at < ?)`,
        params: [at, input.agentVersion, input.node, at],
      },
    ]);
  }

  /**
   * Registers the server and node on first contact and moves the node's last sign of life forward. A node that
   * reports from another server has moved there (its newest report decides, so a late retry cannot move it back).
   */
  private register(server: string, node: string, seenAt: Date, receivedAt: Date): SqlStatement[] {
    const seen = this.sql.instant(seenAt);
    const now = this.sql.instant(receivedAt);
    return [
      {
        // NOT EXISTS first: an INSERT that meets a conflicting row still waits for the transaction that wrote it,
        // which would serialise every concurrent report of a server's nodes on PostgreSQL. Only a server's very
        // first reports race, and ON CONFLICT settles those.
        sql: `INSERT INTO replication_servers (id, name, registered_at)
              SELECT ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM replication_servers WHERE id = ?)
              ON CONFLICT (id) DO NOTHING`,
        params: [server, server, now, server],
      },
      {
        sql: `INSERT INTO replication_nodes (id, server_id, name, registered_at, last_seen_at) VALUES (?, ?, ?, ?, ?)
              ON CONFLICT (id) DO UPDATE SET
                server_id = CASE WHEN replication_nodes.last_seen_at IS NULL
                                   OR excluded.last_seen_at >= replication_nodes.last_seen_at
                                 THEN excluded.server_id ELSE replication_nodes.server_id END,
                last_seen_at = CASE WHEN replication_nodes.last_seen_at IS NULL
                                   OR excluded.last_seen_at > replication_nodes.last_seen_at
                                 THEN excluded.last_seen_at ELSE replication_nodes.last_seen_at END`,
        params: [node, server, node, now, seen],
      },
    ];
  }

  /** PostgreSQL: other instances hear about the write when it commits (pg_notify is transactional). */
  notify(payload: string): SqlStatement[] {
    return this.sql.dialect === 'postgres'
      ? [{ sql: 'SELECT pg_notify(?, ?)', params: [NOTIFY_CHANNEL, payload] }]
      : [];
  }

  async loadOrigin(collection: string, origin: string): Promise<OriginFacts> {
    const [row] = await this.sql.all<{ announced: unknown; reported: unknown }>(
      `SELECT (SELECT MAX(number) FROM replication_change_sets WHERE collection = ? AND origin = ?) AS announced,
              (SELECT MAX(applied) FROM replication_watermarks WHERE collection = ? AND origin = ?) AS reported`,
      [collection, origin, collection, origin],
    );
    return { announced: readNumber(row?.announced), reported: readNumber(row?.reported) };
  }

  /**
   * Everything the diagnosis of one change set needs, in three queries whatever the number of servers and nodes:
   * live servers with their live nodes, watermarks, apply time of the change set and creation time of the next
   * change set each node lacks; the change set's own creation time; the open errors (20 newest per error).
   */
  async loadFacts(collection: string, origin: string, changeSet: number): Promise<StateFacts> {
    // The apply time of the change set is a correlated lookup in the apply history's primary key (collection,
    // origin, node, applied): one index seek per node that has it, cheaper than grouping the whole history.
    const at = (expression: string, alias: string): string => this.sql.readableInstant(expression, alias);
    const nodeRows = await this.sql.all<NodeRow>(
      `SELECT s.id AS server_id, s.name AS server_name, n.id AS node_id, n.name AS node_name,
              ${at('n.registered_at', 'registered_at')}, ${at('n.last_seen_at', 'last_seen_at')},
              w.applied, ${at('w.applied_at', 'applied_at')}, ${at('nx.created_at', 'next_created_at')},
              ${at(
                `CASE WHEN w.applied >= ? THEN
                   (SELECT MIN(a.applied_at) FROM replication_applies a
                     WHERE a.collection = w.collection AND a.origin = w.origin AND a.node_id = w.node_id
                       AND a.applied >= ?)
                 END`,
                'first_applied_at',
              )}
         FROM replication_servers s
         LEFT JOIN replication_nodes n ON n.server_id = s.id AND n.decommissioned_at IS NULL
         LEFT JOIN replication_watermarks w ON w.node_id = n.id AND w.collection = ? AND w.origin = ?
         LEFT JOIN replication_change_sets nx
                ON nx.collection = w.collection AND nx.origin = w.origin AND nx.number = w.applied + 1
        WHERE s.decommissioned_at IS NULL`,
      [changeSet, changeSet, collection, origin],
    );
    const [created] = await this.sql.all<{ created_at: unknown }>(
      `SELECT ${at('created_at', 'created_at')} FROM replication_change_sets
        WHERE collection = ? AND origin = ? AND number = ?`,
      [collection, origin, changeSet],
    );
    const errorRows = await this.sql.all<ErrorRow>(
      `SELECT node_id, code, message, change_set, data, ${at('occurred_at', 'occurred_at')} FROM (
         SELECT e.node_id, e.code, e.message, e.change_set, e.data, e.occurred_at,
                ROW_NUMBER() OVER (PARTITION BY e.node_id, e.code, e.message, e.change_set
                                   ORDER BY e.occurred_at DESC) AS occurrence
           FROM replication_errors e
           LEFT JOIN replication_watermarks w
                  ON w.node_id = e.node_id AND w.collection = e.collection AND w.origin = e.origin
          WHERE e.collection = ? AND e.origin = ? AND e.change_set <= ? AND COALESCE(w.applied, 0) < ?
            AND (e.change_set > COALESCE(w.applied, 0)
                 OR (e.change_set = 0 AND (w.applied_at IS NULL OR e.occurred_at > w.applied_at)))
       ) ranked
       WHERE occurrence <= 20
       ORDER BY occurred_at DESC
       LIMIT ${MAX_ERROR_ROWS}`,
      [collection, origin, changeSet, changeSet],
    );
    return {
      servers: groupFacts(nodeRows, errorRows),
      changeSetCreatedAt: readInstant(created?.created_at),
    };
  }

  /** The figures behind the Prometheus gauges, in three queries over all collections. */
  async loadGaugeInputs(): Promise<{ pairs: GaugePair[]; nodes: GaugeNode[]; watermarks: GaugeWatermark[] }> {
    const pairs = await this.sql.all<{
      collection: string;
      origin: string;
      announced: unknown;
      reported: unknown;
    }>(
      `SELECT collection, origin, MAX(announced) AS announced, MAX(reported) AS reported FROM (
         SELECT collection, origin, MAX(number) AS announced, NULL AS reported
           FROM replication_change_sets GROUP BY collection, origin
         UNION ALL
         SELECT collection, origin, NULL AS announced, MAX(applied) AS reported
           FROM replication_watermarks GROUP BY collection, origin
       ) p GROUP BY collection, origin`,
    );
    const nodes = await this.sql.all<{ id: string; server_id: string; last_seen_at: unknown }>(
      `SELECT n.id, n.server_id, n.last_seen_at FROM replication_nodes n
         JOIN replication_servers s ON s.id = n.server_id
        WHERE n.decommissioned_at IS NULL AND s.decommissioned_at IS NULL`,
    );
    const watermarks = await this.sql.all<{
      collection: string;
      origin: string;
      node_id: string;
      applied: unknown;
      next_created_at: unknown;
    }>(
      `SELECT w.collection, w.origin, w.node_id, w.applied, nx.created_at AS next_created_at
         FROM replication_watermarks w
         JOIN replication_nodes n ON n.id = w.node_id AND n.decommissioned_at IS NULL
         JOIN replication_servers s ON s.id = n.server_id AND s.decommissioned_at IS NULL
         LEFT JOIN replication_change_sets nx
                ON nx.collection = w.collection AND nx.origin = w.origin AND nx.number = w.applied + 1`,
    );
    return {
      pairs: pairs.map((row) => ({
        collection: row.collection,
        origin: row.origin,
        announced: readNumber(row.announced),
        reported: readNumber(row.reported),
      })),
      nodes: nodes.map((row) => ({
        id: row.id,
        serverId: row.server_id,
        lastSeenAt: readInstant(row.last_seen_at),
      })),
      watermarks: watermarks.map((row) => ({
        collection: row.collection,
        origin: row.origin,
        nodeId: row.node_id,
        applied: readNumber(row.applied) ?? 0,
        nextChangeSetCreatedAt: readInstant(row.next_created_at),
      })),
    };
  }
}

interface NodeRow {
  server_id: string;
  server_name: string;
  node_id: string | null;
  node_name: string | null;
  registered_at: unknown;
  last_seen_at: unknown;
  applied: unknown;
  applied_at: unknown;
  next_created_at: unknown;
  first_applied_at: unknown;
}

interface ErrorRow {
  node_id: string;
  code: string;
  message: string;
  change_set: unknown;
  data: string | null;
  occurred_at: unknown;
}

function groupFacts(nodeRows: readonly NodeRow[], errorRows: readonly ErrorRow[]): ServerFacts[] {
  const errorsByNode = new Map<string, ErrorOccurrence[]>();
  for (const row of errorRows) {
    const occurredAt = readInstant(row.occurred_at);
    if (occurredAt === null) continue;
    const changeSet = readNumber(row.change_set) ?? 0;
    const list = errorsByNode.get(row.node_id) ?? [];
    list.push({
      code: row.code,
      message: row.message,
      changeSet: changeSet === 0 ? null : changeSet,
      data: row.data,
      occurredAt,
    });
    errorsByNode.set(row.node_id, list);
  }
  const servers = new Map<string, { id: string; name: string; nodes: NodeFacts[] }>();
  for (const row of nodeRows) {
    let server = servers.get(row.server_id);
    if (!server) {
      server = { id: row.server_id, name: row.server_name, nodes: [] };
      servers.set(row.server_id, server);
    }
    if (row.node_id === null) continue;
    const applied = readNumber(row.applied);
    const appliedAt = readInstant(row.applied_at);
    server.nodes.push({
      id: row.node_id,
      name: row.node_name ?? row.node_id,
      registeredAt: readInstant(row.registered_at) ?? new Date(0),
      watermark: applied === null || appliedAt === null ? null : { applied, appliedAt },
      changeSetAppliedAt: readInstant(row.first_applied_at),
      nextChangeSetCreatedAt: readInstant(row.next_created_at),
      lastSeenAt: readInstant(row.last_seen_at),
      errors: errorsByNode.get(row.node_id) ?? [],
    });
  }
  return [...servers.values()];
}

function minDate(a: Date, b: Date): Date {
  return a.getTime() <= b.getTime() ? a : b;
}
