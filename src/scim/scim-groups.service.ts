// The SCIM Group resource (RFC 7643 §4.2, RFC 7644 §3.3–§3.7): create, read, list, replace, patch and delete, with
// members that must be users of this service (an unknown id is a 400 naming it, never a dangling member). Every
// write goes through one plan (group-patch.ts) applied by the repository in a transaction that bumps the version
// only when something changed; without If-Match a write that lost a race is applied again to the newer version.
import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { mapRecord, type TransactionalRecord } from '../database/transaction.js';
import { ScimGroupEntity } from './entities/scim-group.entity.js';
import {
  checkDisplayName,
  checkExternalId,
  memberIdsOf,
  planGroupPatch,
  type GroupPatchPlan,
} from './patch/group-patch.js';
import { isPlainObject } from './patch/scim-patch-request.js';
import {
  isAttributeReturned,
  projectResource,
  type AttributeProjection,
} from './schema/attribute-projection.js';
import { GROUP_RESOURCE_SCHEMA } from './schema/group-schema.js';
import { toGroupView, type ScimGroupView } from './scim-group.representation.js';
import { etagOf, matchesEntityTag } from './scim-etag.js';
import { ScimGroupsRepository, type GroupChanges, type GroupSort } from './scim-groups.repository.js';
import { isForeignKeyViolation, isTransientConflict } from '../database/constraint-errors.js';
import { quotedId, rethrowEngineError, ScimError, ScimErrorCode } from './scim.errors.js';
import { LIST_RESPONSE_SCHEMA, type IfMatch, type ListQuery } from './scim-users.service.js';
import type { AuditSource } from '../audit/audit-source.js';
import { patchOperationsOf, type AuditDetail, type AuditEntry } from '../audit/audit-trail.js';

const WRITE_ATTEMPTS = 10;
/** Unknown member ids quoted in an error message, at most. */
const QUOTED_IDS = 20;

export interface GroupListQuery extends Omit<ListQuery, 'sort'> {
  sort?: GroupSort;
}

export interface ScimGroupListResponse {
  schemas: [typeof LIST_RESPONSE_SCHEMA];
  totalResults: number;
  startIndex: number;
  itemsPerPage: number;
  Resources: Array<Partial<ScimGroupView>>;
}

interface GroupInput {
  displayName: string;
  externalId: string | null;
  members: string[];
}

const READ_ONLY_INPUT = new Set(['id', 'schemas', 'meta']);

/** A POST/PUT body: displayName required, externalId optional, members a list of {value}. */
function readGroupInput(body: unknown): GroupInput {
  if (!isPlainObject(body)) {
    throw ScimError.badRequest(ScimErrorCode.InvalidSyntax, 'A Group body must be a JSON object');
  }
  const input: GroupInput = { displayName: '', externalId: null, members: [] };
  let sawDisplayName = false;
  try {
    for (const [key, value] of Object.entries(body)) {
      switch (key.toLowerCase()) {
        case 'displayname':
          input.displayName = checkDisplayName(value);
          sawDisplayName = true;
          break;
        case 'externalid':
          input.externalId = checkExternalId(value);
          break;
        case 'members':
          input.members = value === null ? [] : memberIdsOf(value, 'members');
          break;
        default:
          if (!READ_ONLY_INPUT.has(key.toLowerCase())) {
            throw ScimError.badRequest(ScimErrorCode.InvalidValue, `"${key}" is not an attribute of a Group`);
          }
      }
    }
  } catch (error) {
    rethrowEngineError(error);
  }
  if (!sawDisplayName) {
    throw ScimError.badRequest(ScimErrorCode.InvalidValue, 'displayName is required');
  }
  input.members = [...new Set(input.members)];
  return input;
}

export interface CreatedGroup {
  entity: ScimGroupEntity;
  view: Partial<ScimGroupView>;
}

@Injectable()
export class ScimGroupsService {
  constructor(private readonly repository: ScimGroupsRepository) {}

  private async checkMembers(ids: Iterable<string>): Promise<void> {
    const unknown = await this.repository.unknownUsers([...ids]);
    if (unknown.length === 0) return;
    const quoted = unknown
      .slice(0, QUOTED_IDS)
      .map((id) => `"${id}"`)
      .join(', ');
    const more = unknown.length > QUOTED_IDS ? ` and ${String(unknown.length - QUOTED_IDS)} more` : '';
    throw ScimError.badRequest(
      ScimErrorCode.InvalidValue,
      `members: no user has the id ${quoted}${more}; members must be users of this service`,
    );
  }

  private async view(
    entity: ScimGroupEntity,
    baseUrl: string,
    projection: AttributeProjection,
    manager?: EntityManager,
  ): Promise<Partial<ScimGroupView>> {
    const withMembers = isAttributeReturned(projection, 'members');
    const members = withMembers ? await this.repository.membersOf([entity.id], manager) : undefined;
    return projectResource(toGroupView(entity, members, baseUrl), GROUP_RESOURCE_SCHEMA, projection);
  }

  private async load(id: string): Promise<ScimGroupEntity> {
    const entity = await this.repository.findById(id);
    if (entity === null) throw ScimError.resourceNotFound(`No group has the id "${quotedId(id)}".`);
    return entity;
  }

  /**
   * `idempotency`: the request's Idempotency-Key record, stored with its answer in the group's transaction (the
   * view, members' display names included, is then read inside it, once).
   */
  async create(
    body: unknown,
    baseUrl: string,
    projection: AttributeProjection,
    by: AuditSource,
    idempotency?: TransactionalRecord<CreatedGroup>,
  ): Promise<CreatedGroup> {
    const input = readGroupInput(body);
    await this.checkMembers(input.members);
    const now = new Date();
    const entity = Object.assign(new ScimGroupEntity(), {
      id: randomUUID(),
      displayName: input.displayName,
      displayNameLower: input.displayName.toLowerCase(),
      externalId: input.externalId,
      version: 1,
      createdAt: now,
      lastModified: now,
    });
    const audit = groupChange(by, 'create', entity.id, {
      displayName: entity.displayName,
      members: input.members.length,
    });
    let view: Partial<ScimGroupView> | undefined;
    await this.repository.insert(
      entity,
      input.members,
      audit,
      mapRecord(idempotency, async (_: void, manager) => {
        view = await this.view(entity, baseUrl, projection, manager);
        return { entity, view };
      }),
    );
    return { entity, view: view ?? (await this.view(entity, baseUrl, projection)) };
  }

  async get(id: string, baseUrl: string, projection: AttributeProjection) {
    const entity = await this.load(id);
    return { entity, view: await this.view(entity, baseUrl, projection) };
  }

  async version(id: string): Promise<number> {
    return (await this.load(id)).version;
  }

  async list(
    query: GroupListQuery,
    baseUrl: string,
    projection: AttributeProjection,
  ): Promise<ScimGroupListResponse> {
    const filter = query.filter !== undefined && query.filter.trim() !== '' ? query.filter : undefined;
    const page = await this.repository.search(filter, query.startIndex - 1, query.count, query.sort);
    const withMembers = isAttributeReturned(projection, 'members');
    const members = withMembers ? await this.repository.membersOf(page.groups.map((group) => group.id)) : [];
    const byGroup = new Map<string, typeof members>();
    for (const member of members) {
      const list = byGroup.get(member.groupId) ?? [];
      list.push(member);
      byGroup.set(member.groupId, list);
    }
    return {
      schemas: [LIST_RESPONSE_SCHEMA],
      totalResults: page.totalResults,
      startIndex: query.startIndex,
      itemsPerPage: page.groups.length,
      Resources: page.groups.map((group) =>
        projectResource(
          toGroupView(group, withMembers ? (byGroup.get(group.id) ?? []) : undefined, baseUrl),
          GROUP_RESOURCE_SCHEMA,
          projection,
        ),
      ),
    };
  }

  /** PUT: displayName, externalId and the whole member list are replaced. */
  async replace(
    id: string,
    body: unknown,
    ifMatch: IfMatch,
    baseUrl: string,
    projection: AttributeProjection,
    by: AuditSource,
  ) {
    const input = readGroupInput(body);
    await this.checkMembers(input.members);
    const plan: GroupPatchPlan = {
      displayName: input.displayName,
      externalId: input.externalId,
      resetMembers: true,
      add: new Set(input.members),
      remove: new Set(),
    };
    return this.write(id, plan, ifMatch, baseUrl, projection, groupChange(by, 'replace', id));
  }

  async patch(
    id: string,
    body: unknown,
    ifMatch: IfMatch,
    baseUrl: string,
    projection: AttributeProjection,
    by: AuditSource,
  ) {
    let plan: GroupPatchPlan;
    try {
      plan = planGroupPatch(body);
    } catch (error) {
      rethrowEngineError(error);
    }
    await this.checkMembers(plan.add);
    const audit = groupChange(by, 'patch', id, { operations: patchOperationsOf(body) });
    return this.write(id, plan, ifMatch, baseUrl, projection, audit);
  }

  /**
   * Applies a plan under the group's row lock (repository.write), so writers to one group queue rather than
   * conflict. Run again when PostgreSQL broke a deadlock or a serialization conflict by failing this transaction,
   * and when a member's user was deleted after the members were checked: the check then names it (400).
   */
  private async write(
    id: string,
    plan: GroupPatchPlan,
    ifMatch: IfMatch,
    baseUrl: string,
    projection: AttributeProjection,
    audit: AuditEntry,
  ): Promise<{ entity: ScimGroupEntity; view: Partial<ScimGroupView> }> {
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      let entity: ScimGroupEntity | undefined;
      try {
        entity = await this.repository.write(
          id,
          plan,
          (current) => {
            if (ifMatch !== undefined && !matchesEntityTag(ifMatch, current.version)) {
              throw ScimError.preconditionFailed(etagOf(current.version), 'group');
            }
            const changes: GroupChanges = {};
            if (plan.displayName !== undefined && plan.displayName !== current.displayName) {
              changes.displayName = plan.displayName;
              changes.displayNameLower = plan.displayName.toLowerCase();
            }
            if (plan.externalId !== undefined && plan.externalId !== current.externalId) {
              changes.externalId = plan.externalId;
            }
            return changes;
          },
          audit,
        );
      } catch (error) {
        if (isForeignKeyViolation(error)) await this.checkMembers(plan.add);
        else if (!isTransientConflict(error)) throw error;
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * (attempt + 1)));
        continue;
      }
      if (entity === undefined) throw ScimError.resourceNotFound(`No group has the id "${quotedId(id)}".`);
      return { entity, view: await this.view(entity, baseUrl, projection) };
    }
    throw ScimError.concurrentModification(id, 'group');
  }

  async delete(id: string, ifMatch: IfMatch, by: AuditSource): Promise<void> {
    const audit = groupChange(by, 'delete', id);
    if (ifMatch === undefined) {
      if (!(await this.repository.delete(id, audit)))
        throw ScimError.resourceNotFound(`No group has the id "${quotedId(id)}".`);
      return;
    }
    const current = await this.load(id);
    if (!matchesEntityTag(ifMatch, current.version))
      throw ScimError.preconditionFailed(etagOf(current.version), 'group');
    if (!(await this.repository.delete(current.id, audit, current.version))) {
      const now = await this.load(id);
      throw ScimError.preconditionFailed(etagOf(now.version), 'group');
    }
  }
}

function groupChange(
  by: AuditSource,
  verb: 'create' | 'replace' | 'patch' | 'delete',
  id: string,
  detail?: AuditDetail,
): AuditEntry {
  return { by, action: `scim.group.${verb}`, resourceType: 'ScimGroup', resourceId: id, detail };
}
