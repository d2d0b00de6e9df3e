// Reads the trail newest first, by keyset on the id: each page is `id < cursor` on an index ending in `id`
// (one per filter, migrations/1763780001500-AuditEvents.ts), so any page costs O(page), however deep. Events not
// yet folded (audit-fold.ts) are in `audit_events_tail`, which has only its primary key: the same page is read
// there by scanning it newest first, at most the events of the last fold interval or so. Both tables are read in
// one statement (one snapshot), so a fold under way neither hides an event nor shows it twice.
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata.js';
import { AUDIT_EVENTS, AUDIT_TAIL } from './audit-trail.js';
import type { AuditEventDto } from './dto/audit-event.dto.js';
import { AuditEvent } from './entities/audit-event.entity.js';

export interface AuditFilter {
  actor?: string;
  action?: string;
  resourceType?: string;
  resourceId?: string;
  since?: Date;
  until?: Date;
}

export interface AuditPage {
  events: AuditEventDto[];
  nextCursor: string | null;
}

/** Each filter's condition (on the indexes of audit_events); parameters are named after the filter. */
const CONDITIONS: ReadonlyArray<[filter: keyof AuditFilter, condition: string]> = [
  ['actor', '(actor_id = :actor OR actor_name = :actor)'],
  ['action', 'action = :action'],
  ['resourceType', 'resource_type = :resourceType'],
  ['resourceId', 'resource_id = :resourceId'],
  ['since', 'occurred_at >= :since'],
  ['until', 'occurred_at < :until'],
];

@Injectable()
export class AuditEventsReader {
  private readonly columns: readonly ColumnMetadata[];

  constructor(private readonly dataSource: DataSource) {
    this.columns = dataSource.getMetadata(AuditEvent).columns;
  }

  async page(filter: AuditFilter, pageSize: number, cursor?: string): Promise<AuditPage> {
    const conditions = CONDITIONS.filter(([name]) => filter[name] !== undefined).map(([, sql]) => sql);
    if (cursor !== undefined) conditions.push(`id < ${Number(cursor)}`);
    const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
    const limit = pageSize + 1;
    const list = this.columns.map((column) => column.databaseName).join(', ');
    const part = (table: string) =>
      `SELECT * FROM (SELECT ${list} FROM ${table} ${where} ORDER BY id DESC LIMIT ${limit}) ${table}_page`;
    const [sql, parameters] = this.dataSource.driver.escapeQueryWithParameters(
      `${part(AUDIT_EVENTS)} UNION ALL ${part(AUDIT_TAIL)} ORDER BY id DESC LIMIT ${limit}`,
      { ...filter },
    );
    const rows = (await this.dataSource.query<Array<Record<string, unknown>>>(sql, parameters)).map((raw) =>
      this.hydrate(raw),
    );
    const more = rows.length > pageSize;
    const page = more ? rows.slice(0, pageSize) : rows;
    return { events: page.map(toDto), nextCursor: more ? String(page[page.length - 1].id) : null };
  }

  /** A raw row as the entity: each column through the driver, as a repository read would convert it. */
  private hydrate(raw: Record<string, unknown>): AuditEvent {
    const event = new AuditEvent();
    for (const column of this.columns) {
      column.setEntityValue(
        event,
        this.dataSource.driver.prepareHydratedValue(raw[column.databaseName], column) as unknown,
      );
    }
    return event;
  }
}

function toDto(event: AuditEvent): AuditEventDto {
  return {
    Id: String(event.id),
    OccurredAt: event.occurredAt.toISOString(),
    ActorType: event.actorType,
    ActorId: event.actorId,
    ActorName: event.actorName,
    ActorIssuer: event.actorIssuer,
    Action: event.action,
    ResourceType: event.resourceType,
    ResourceId: event.resourceId,
    Outcome: event.outcome,
    CorrelationId: event.correlationId,
    ClientAddress: event.clientAddress,
    Detail: event.detail === null ? null : (JSON.parse(event.detail) as Record<string, unknown>),
  };
}
