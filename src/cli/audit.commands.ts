import { Command, CommandRunner, Option } from 'nest-commander';
import { AuditEventsReader, type AuditFilter } from '../audit/audit-events.reader.js';

interface ListOptions extends AuditFilter {
  pageSize?: number;
  cursor?: string;
  json?: boolean;
}

@Command({
  name: 'audit:list',
  description:
    'List audit events newest first (the filters of GET /api/v1/audit-events); prints the cursor of the next page',
})
export class AuditListCommand extends CommandRunner {
  constructor(private readonly reader: AuditEventsReader) {
    super();
  }

  async run(_args: string[], options: ListOptions): Promise<void> {
    const { pageSize = 50, cursor, json = false, ...filter } = options;
    const { events, nextCursor } = await this.reader.page(filter, pageSize, cursor);
    if (json) {
      console.log(JSON.stringify({ Result: events, NextCursor: nextCursor }, null, 2));
      return;
    }
    if (events.length === 0) console.log('No audit events match.');
    for (const event of events) {
      const actor = [
        event.ActorType,
        event.ActorId,
        event.ActorName && `"${event.ActorName}"`,
        event.ActorIssuer,
      ]
        .filter((part) => part !== null && part !== '')
        .join(' ');
      const resource = `${event.ResourceType}${event.ResourceId === null ? '' : ` ${event.ResourceId}`}`;
      const from = [event.ClientAddress, event.CorrelationId].filter((part) => part !== null).join(' ');
      const detail = event.Detail === null ? '' : `  ${JSON.stringify(event.Detail)}`;
      console.log(
        `${event.Id}  ${event.OccurredAt}  ${event.Outcome.padEnd(7)} ${event.Action}  ${resource}  by ${actor}${from === '' ? '' : `  from ${from}`}${detail}`,
      );
    }
    if (nextCursor !== null) console.log(`More: --cursor ${nextCursor}`);
  }

  @Option({
    flags: '--actor <actor>',
    description: 'actor id or name (key id, env:<16 hex>, token sub, CLI command)',
  })
  parseActor(value: string): string {
    return value;
  }

  @Option({
    flags: '--action <action>',
    description: 'e.g. schedule.create, scim.user.patch, request.forbidden',
  })
  parseAction(value: string): string {
    return value;
  }

  @Option({
    flags: '--resource-type <type>',
    description: 'e.g. Schedule, ScimUser, SmtpConfiguration, ApiKey',
  })
  parseResourceType(value: string): string {
    return value;
  }

  @Option({ flags: '--resource-id <id>', description: 'the resource’s id' })
  parseResourceId(value: string): string {
    return value;
  }

  @Option({ flags: '--since <instant>', description: 'ISO 8601, inclusive' })
  parseSince(value: string): Date {
    return instant(value, '--since');
  }

  @Option({ flags: '--until <instant>', description: 'ISO 8601, exclusive' })
  parseUntil(value: string): Date {
    return instant(value, '--until');
  }

  @Option({ flags: '--page-size <n>', description: '1 to 500 (default 50)' })
  parsePageSize(value: string): number {
    const size = Number(value);
    if (!Number.isInteger(size) || size < 1 || size > 500) throw new Error('--page-size must be 1 to 500');
    return size;
  }

  @Option({ flags: '--cursor <cursor>', description: 'the "More: --cursor" value of the previous page' })
  parseCursor(value: string): string {
    if (!/^\d{1,15}$/.test(value)) throw new Error('--cursor must be a value printed by a previous page');
    return value;
  }

  @Option({ flags: '--json', description: 'print the page as JSON (the route’s Result and NextCursor)' })
  parseJson(): boolean {
    return true;
  }
}

function instant(value: string, flag: string): Date {
  const date = new Date(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(date.getTime()))
    throw new Error(`${flag} must be an ISO 8601 instant, e.g. 2026-11-01T00:00:00Z`);
  return date;
}
