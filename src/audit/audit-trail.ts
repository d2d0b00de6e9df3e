// The audit trail: who changed what, and who was refused. A change is recorded with
// `AuditTrail.record(manager, by, change)` inside the change's own transaction, so the event and the change are
// stored together or not at all. It goes into the unindexed tail (one B-tree entry); AuditFold indexes it later. Refusals (401/403) have no transaction to join: they are queued here and written
// in batches (one multi-row INSERT a second), at most REFUSALS_PER_FLUSH a second per instance; beyond that they are
// counted and written as one `request.refusals-dropped` event, so a flood of bad keys costs the database a bounded
// number of statements and this process bounded memory. A crash loses at most the last second's refusals.
import { Inject, Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { DataSource, type EntityManager } from 'typeorm';
import { ROOT_LOGGER } from '../core/tokens.js';
import { auditSourceOf, systemSource, type AuditSource } from './audit-source.js';
import { AuditEvent } from './entities/audit-event.entity.js';

export type AuditOutcome = 'success' | 'denied';
/** Small, flat and never secret: names, counts, codes. Values whose key names a secret are dropped anyway. */
export type AuditDetail = Record<string, string | number | boolean | null | readonly string[]>;

export interface AuditChange {
  /** `<resource>.<verb>`, e.g. `schedule.create`, `scim.user.patch`, `api-key.revoke`. */
  action: string;
  resourceType: string;
  resourceId?: string | null;
  outcome?: AuditOutcome;
  detail?: AuditDetail;
}

/** A change and who made it: what `AuditTrail.record` writes. */
export interface AuditEntry extends AuditChange {
  by: AuditSource;
}

export const REFUSALS_PER_FLUSH = 500;
const REFUSAL_FLUSH_MS = 1_000;
/** Rows per INSERT: 13 columns × 100 stays far below SQLite's bound-parameter limit. */
const INSERT_CHUNK = 100;
const SECRET_KEY = /pass|secret|token|authoriz|credential|cookie/i;
const MAX_DETAIL_TEXT = 200;

/** Where events are written: the unindexed tail, which AuditFold moves into `audit_events` (audit-fold.ts). */
export const AUDIT_TAIL = 'audit_events_tail';
/** The indexed table the reader's filters use. */
export const AUDIT_EVENTS = 'audit_events';

/**
 * Writes one event with `manager`, i.e. in its transaction. For callers outside Nest (migration runner, CLI).
 * `table` is AUDIT_EVENTS only for the migration runner, before the migration that creates the tail.
 */
export async function writeAuditEvent(
  manager: EntityManager,
  entry: AuditEntry,
  table: string = AUDIT_TAIL,
): Promise<void> {
  await insertRows(manager, [rowOf(entry)], table);
}

@Injectable()
export class AuditTrail implements BeforeApplicationShutdown {
  private pending: Array<Partial<AuditEvent>> = [];
  private dropped = 0;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly dataSource: DataSource,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
  ) {}

  /** Records `entry` in the transaction `manager` belongs to. */
  record(manager: EntityManager, entry: AuditEntry): Promise<void> {
    return writeAuditEvent(manager, entry);
  }

  /** Records several changes of one transaction in multi-row INSERTs (an iCalendar import's schedules). */
  recordAll(manager: EntityManager, entries: readonly AuditEntry[]): Promise<void> {
    const at = new Date();
    return insertRows(
      manager,
      entries.map((entry) => rowOf(entry, at)),
    );
  }

  /** Queues a 401/403 answered to `request` on `route` (method and route pattern, never the query string). */
  refused(request: FastifyRequest, status: 401 | 403, route: string): void {
    if (this.pending.length >= REFUSALS_PER_FLUSH) {
      this.dropped += 1;
    } else {
      const action = status === 401 ? 'request.unauthenticated' : 'request.forbidden';
      this.pending.push(
        rowOf({
          by: auditSourceOf(request),
          action,
          resourceType: 'Route',
          resourceId: route,
          outcome: 'denied',
        }),
      );
    }
    this.timer ??= setTimeout(() => void this.flushRefusals(), REFUSAL_FLUSH_MS).unref();
  }

  /** Writes the queued refusals now (also before the audit route reads, so a caller sees its own). */
  flushRefusals(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const rows = this.pending;
    this.pending = [];
    if (this.dropped > 0) {
      rows.push(
        rowOf({
          by: systemSource('audit'),
          action: 'request.refusals-dropped',
          resourceType: 'Route',
          outcome: 'denied',
          detail: { count: this.dropped, perSecondLimit: REFUSALS_PER_FLUSH },
        }),
      );
      this.dropped = 0;
    }
    if (rows.length === 0) return this.flushing;
    this.flushing = this.flushing.then(() =>
      insertRows(this.dataSource.manager, rows).catch((error: unknown) => {
        this.logger.warn({ err: error, refusals: rows.length }, 'audit: refusals could not be recorded');
      }),
    );
    return this.flushing;
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.flushRefusals();
  }
}

/**
 * A SCIM PatchOp's operations as `<op> <path>` (values left out: they may hold a password), at most 20. Reads both
 * the documented `{Operations:[{Path, Value}]}` (no `op` = replace) and the standard lower-case form.
 */
export function patchOperationsOf(body: unknown): string[] {
  const record = body as Record<string, unknown> | null;
  if (record === null || typeof record !== 'object') return [];
  const key = Object.keys(record).find((name) => name.toLowerCase() === 'operations');
  const operations = key === undefined ? undefined : record[key];
  if (!Array.isArray(operations)) return [];
  return operations.slice(0, 20).map((operation: unknown) => {
    const fields = new Map(
      Object.entries((operation ?? {}) as Record<string, unknown>).map(([name, value]) => [
        name.toLowerCase(),
        value,
      ]),
    );
    const op = typeof fields.get('op') === 'string' ? (fields.get('op') as string).toLowerCase() : 'replace';
    const path = typeof fields.get('path') === 'string' ? (fields.get('path') as string) : '(no path)';
    return `${op} ${path}`.slice(0, MAX_DETAIL_TEXT);
  });
}

function rowOf(entry: AuditEntry, at = new Date()): Partial<AuditEvent> {
  const { by, ...change } = entry;
  return {
    occurredAt: at,
    actorType: by.actor.type,
    actorId: clip(by.actor.id, 300),
    actorName: clip(by.actor.name, 200),
    actorIssuer: clip(by.actor.issuer, 500),
    action: change.action,
    resourceType: change.resourceType,
    resourceId: clip(change.resourceId ?? null, 300),
    outcome: change.outcome ?? 'success',
    correlationId: clip(by.correlationId, 128),
    clientAddress: clip(by.clientAddress, 64),
    detail: change.detail === undefined ? null : JSON.stringify(safeDetail(change.detail)),
  };
}

/** Defence in depth: a detail key that names a secret is dropped, long text is cut. */
function safeDetail(detail: AuditDetail): AuditDetail {
  const safe: AuditDetail = {};
  for (const [key, value] of Object.entries(detail)) {
    if (SECRET_KEY.test(key)) continue;
    safe[key] =
      typeof value === 'string'
        ? value.slice(0, MAX_DETAIL_TEXT)
        : Array.isArray(value)
          ? value.slice(0, 20).map((item) => String(item).slice(0, MAX_DETAIL_TEXT))
          : value;
  }
  return safe;
}

function clip(value: string | null, length: number): string | null {
  return value === null ? null : value.slice(0, length);
}

/** Columns written per event, in `rowOf`'s order (the id is the database's). */
const COLUMNS: ReadonlyArray<[column: string, property: keyof AuditEvent]> = [
  ['occurred_at', 'occurredAt'],
  ['actor_type', 'actorType'],
  ['actor_id', 'actorId'],
  ['actor_name', 'actorName'],
  ['actor_issuer', 'actorIssuer'],
  ['action', 'action'],
  ['resource_type', 'resourceType'],
  ['resource_id', 'resourceId'],
  ['outcome', 'outcome'],
  ['correlation_id', 'correlationId'],
  ['client_address', 'clientAddress'],
  ['detail', 'detail'],
];
const COLUMN_LIST = COLUMNS.map(([column]) => column).join(', ');

/**
 * One parameterised multi-row INSERT per INSERT_CHUNK events. Written as SQL rather than through the query
 * builder: every audited write pays for this statement, and building it from entity metadata cost more than the
 * INSERT itself (bench/audit-overhead.mjs). The instant goes through the driver, so it is stored exactly as the
 * entity's column stores it (and as the reader's Since/Until compare it).
 */
async function insertRows(
  manager: EntityManager,
  rows: Array<Partial<AuditEvent>>,
  table: string = AUDIT_TAIL,
): Promise<void> {
  const driver = manager.connection.driver;
  const postgres = manager.connection.options.type === 'postgres';
  const occurredAt = manager.connection.getMetadata(AuditEvent).findColumnWithPropertyName('occurredAt');
  for (let start = 0; start < rows.length; start += INSERT_CHUNK) {
    const chunk = rows.slice(start, start + INSERT_CHUNK);
    const parameters: unknown[] = [];
    const tuples = chunk.map((row) => {
      const marks = COLUMNS.map(([, property]) => {
        const value = row[property] ?? null;
        parameters.push(
          property === 'occurredAt' && occurredAt !== undefined
            ? driver.preparePersistentValue(value, occurredAt)
            : value,
        );
        return postgres ? `$${parameters.length}` : '?';
      });
      return `(${marks.join(', ')})`;
    });
    await manager.query(`INSERT INTO ${table} (${COLUMN_LIST}) VALUES ${tuples.join(', ')}`, parameters);
  }
}
