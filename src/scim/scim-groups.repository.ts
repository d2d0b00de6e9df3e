// The queries of SCIM Groups: paged lists (filter → SQL through group-filter-sql.ts, page in index order and a
// separate COUNT), members read in bulk for a page of groups (and groups for a page of users), and a PATCH plan
// applied as a few set-based statements in one transaction that bumps the group's version only when something
// changed, and only while the version is still the one the caller read.
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, type EntityManager, type Repository } from 'typeorm';
import { namedQuery } from '../database/pg-named-query.js';
import { writeAuditEvent, type AuditEntry } from '../audit/audit-trail.js';
import { inTransaction, type TransactionalRecord } from '../database/transaction.js';
import { ScimGroupEntity, ScimGroupMemberEntity } from './entities/scim-group.entity.js';
import { ScimUserEntity } from './entities/scim-user.entity.js';
import { groupFilterToSql } from './group-filter-sql.js';
import type { GroupPatchPlan } from './patch/group-patch.js';
import type { SqlDialect } from './filter-sql/sql-text.js';
import { isUniqueViolation } from '../database/constraint-errors.js';
import { ScimUsersRepository, touchMembersOf, touchUsers } from './scim-users.repository.js';
import { ScimError } from './scim.errors.js';

const ALIAS = 'scim_group';
/** Rows per statement: 2 parameters each, far below SQLite's 32,766 and PostgreSQL's 65,535. */
const CHUNK = 500;

export interface MemberRow {
  groupId: string;
  userId: string;
  display: string | null;
}

export interface GroupRow {
  groupId: string;
  userId: string;
  displayName: string;
}

export interface GroupPage {
  totalResults: number;
  groups: ScimGroupEntity[];
}

export type GroupSortKey = 'id' | 'displayName' | 'externalId' | 'created' | 'lastModified';

export interface GroupSort {
  key: GroupSortKey;
  descending: boolean;
}

export type GroupChanges = Partial<Pick<ScimGroupEntity, 'displayName' | 'displayNameLower' | 'externalId'>>;

const SORT_COLUMNS: Record<GroupSortKey, string> = {
  id: 'id',
  displayName: 'displayNameLower',
  externalId: 'externalId',
  created: 'createdAt',
  lastModified: 'lastModified',
};

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < items.length; start += CHUNK) out.push(items.slice(start, start + CHUNK));
  return out;
}

@Injectable()
export class ScimGroupsRepository {
  constructor(
    @InjectRepository(ScimGroupEntity) private readonly groups: Repository<ScimGroupEntity>,
    @InjectRepository(ScimGroupMemberEntity) private readonly members: Repository<ScimGroupMemberEntity>,
  ) {}

  private get dialect(): SqlDialect {
    return this.groups.manager.connection.options.type === 'postgres' ? 'postgres' : 'sqlite';
  }

  private displayExpression(alias: string): string {
    return this.dialect === 'postgres'
      ? `COALESCE("${alias}"."attributes" ->> 'displayName', "${alias}"."user_name")`
      : `COALESCE(json_extract("${alias}"."attributes", '$.displayName'), "${alias}"."user_name")`;
  }

  async findById(id: string): Promise<ScimGroupEntity | null> {
    const normalized = ScimUsersRepository.normalizeId(id);
    return normalized === undefined ? null : this.groups.findOneBy({ id: normalized });
  }

  /** The ids among `ids` that name no user (non-UUIDs included). */
  async unknownUsers(ids: readonly string[]): Promise<string[]> {
    const candidates = [...new Set(ids)];
    const valid = candidates.filter((id) => ScimUsersRepository.normalizeId(id) !== undefined);
    const found = new Set<string>();
    for (const chunk of chunks(valid)) {
      const rows = await this.groups.manager
        .getRepository(ScimUserEntity)
        .find({ select: { id: true }, where: { id: In(chunk) } });
      for (const row of rows) found.add(row.id);
    }
    return candidates.filter((id) => !found.has(id));
  }

  /** Throws ScimError.groupUniqueness when another group has the displayName in any letter case. */
  async insert(
    group: ScimGroupEntity,
    memberIds: readonly string[],
    audit: AuditEntry,
    idempotency?: TransactionalRecord<void>,
  ): Promise<void> {
    try {
      await inTransaction(
        this.groups.manager.connection,
        async (manager) => {
          await manager.insert(ScimGroupEntity, group);
          await this.insertMembers(manager, group.id, memberIds);
          await touchUsers(manager, memberIds, group.lastModified);
          await writeAuditEvent(manager, audit);
        },
        { record: idempotency },
      );
    } catch (error) {
      if (isUniqueViolation(error)) throw ScimError.groupUniqueness(group.displayName);
      throw error;
    }
  }

  private async insertMembers(
    manager: EntityManager,
    groupId: string,
    userIds: readonly string[],
  ): Promise<void> {
    for (const chunk of chunks(userIds)) {
      await manager
        .createQueryBuilder()
        .insert()
        .into(ScimGroupMemberEntity)
        .values(chunk.map((userId) => ({ groupId, userId })))
        .orIgnore()
        .execute();
    }
  }

  private async existingMembers(manager: EntityManager, groupId: string, userIds: readonly string[]) {
    const existing = new Set<string>();
    for (const chunk of chunks(userIds)) {
      const rows = await manager.find(ScimGroupMemberEntity, {
        select: { userId: true },
        where: { groupId, userId: In(chunk) },
      });
      for (const row of rows) existing.add(row.userId);
    }
    return existing;
  }

  /**
   * One group write in one transaction: the group's row is locked first (PostgreSQL `FOR UPDATE`; SQLite runs one
   * write transaction at a time), so concurrent writes to one group queue instead of failing on a stale version.
   * `decide` sees the locked current group (it may throw, e.g. a 412 for If-Match) and returns the attribute
   * changes; then the plan's member changes apply, and when anything changed the group's version goes up by one, as
   * do those of the users whose `groups` changed (every member's when the displayName changed). Undefined when no
   * group has the id. A member whose user was deleted meanwhile fails with the foreign key (see the service).
   */
  async write(
    id: string,
    plan: Pick<GroupPatchPlan, 'resetMembers' | 'add' | 'remove'>,
    decide: (current: ScimGroupEntity) => GroupChanges,
    audit: AuditEntry,
  ): Promise<ScimGroupEntity | undefined> {
    const groupId = ScimUsersRepository.normalizeId(id);
    if (groupId === undefined) return undefined;
    let changes: GroupChanges = {};
    try {
      return await inTransaction(this.groups.manager.connection, async (manager) => {
        const current = await manager.findOne(ScimGroupEntity, {
          where: { id: groupId },
          ...(this.dialect === 'postgres' ? { lock: { mode: 'pessimistic_write' as const } } : {}),
        });
        if (current === null) return undefined;
        changes = decide(current);
        const touched: string[] = [];
        const gone: string[] = [];
        if (plan.resetMembers) {
          const present = await manager.find(ScimGroupMemberEntity, {
            select: { userId: true },
            where: { groupId },
          });
          const presentIds = new Set(present.map((row) => row.userId));
          const stale = [...presentIds].filter((userId) => !plan.add.has(userId));
          const fresh = [...plan.add].filter((userId) => !presentIds.has(userId));
          for (const chunk of chunks(stale)) {
            await manager.delete(ScimGroupMemberEntity, { groupId, userId: In(chunk) });
          }
          await this.insertMembers(manager, groupId, fresh);
          touched.push(...stale, ...fresh);
          gone.push(...stale);
        } else {
          const removed = await this.existingMembers(manager, groupId, [...plan.remove]);
          for (const chunk of chunks([...removed])) {
            await manager.delete(ScimGroupMemberEntity, { groupId, userId: In(chunk) });
          }
          const existing = await this.existingMembers(manager, groupId, [...plan.add]);
          const fresh = [...plan.add].filter((userId) => !existing.has(userId));
          await this.insertMembers(manager, groupId, fresh);
          touched.push(...removed, ...fresh);
          gone.push(...removed);
        }
        if (Object.keys(changes).length === 0 && touched.length === 0) return current;
        const next = Object.assign(new ScimGroupEntity(), current, changes, {
          version: current.version + 1,
          lastModified: new Date(),
        });
        await manager.update(
          ScimGroupEntity,
          { id: groupId },
          { ...changes, version: next.version, lastModified: next.lastModified },
        );
        if (changes.displayName === undefined) {
          await touchUsers(manager, touched, next.lastModified);
        } else {
          // A new displayName is every member's `groups[].display`: the members now, and those just removed.
          await touchMembersOf(manager, groupId, next.lastModified);
          await touchUsers(manager, gone, next.lastModified);
        }
        const members = { membersChanged: touched.length };
        await writeAuditEvent(manager, {
          ...audit,
          resourceId: groupId,
          detail: { ...audit.detail, ...members },
        });
        return next;
      });
    } catch (error) {
      if (isUniqueViolation(error) && changes.displayName !== undefined) {
        throw ScimError.groupUniqueness(changes.displayName);
      }
      throw error;
    }
  }

  async delete(id: string, audit: AuditEntry, expectedVersion?: number): Promise<boolean> {
    const normalized = ScimUsersRepository.normalizeId(id);
    if (normalized === undefined) return false;
    return inTransaction(this.groups.manager.connection, async (manager) => {
      const group = await manager.findOne(ScimGroupEntity, {
        where:
          expectedVersion === undefined ? { id: normalized } : { id: normalized, version: expectedVersion },
        ...(this.dialect === 'postgres' ? { lock: { mode: 'pessimistic_write' as const } } : {}),
      });
      if (group === null) return false;
      // Its members lose it from their `groups`.
      await touchMembersOf(manager, normalized, new Date());
      await manager.delete(ScimGroupEntity, { id: normalized });
      // The foreign key cascades too; this does not depend on SQLite's foreign_keys pragma.
      await manager.delete(ScimGroupMemberEntity, { groupId: normalized });
      await writeAuditEvent(manager, { ...audit, resourceId: normalized });
      return true;
    });
  }

  async search(
    filter: string | undefined,
    offset: number,
    limit: number,
    sort: GroupSort | undefined,
  ): Promise<GroupPage> {
    const condition = filter === undefined ? undefined : groupFilterToSql(filter, this.dialect, ALIAS);
    const query = () => {
      const builder = this.groups.createQueryBuilder(ALIAS);
      if (condition !== undefined) builder.where(condition.sql, { ...condition.parameters });
      return builder;
    };
    const totalResults = await query().getCount();
    if (limit <= 0 || offset >= totalResults) return { totalResults, groups: [] };
    const builder = query();
    if (sort !== undefined) {
      const direction = sort.descending ? 'DESC' : 'ASC';
      // RFC 7644 §3.4.2.3: resources without a value sort last ascending, first descending (also btree order).
      builder.orderBy(
        `${ALIAS}.${SORT_COLUMNS[sort.key]}`,
        direction,
        sort.descending ? 'NULLS FIRST' : 'NULLS LAST',
      );
      builder.addOrderBy(`${ALIAS}.id`, direction);
    } else {
      builder.orderBy(`${ALIAS}.createdAt`, 'ASC').addOrderBy(`${ALIAS}.id`, 'ASC');
    }
    const groups = await builder.offset(offset).limit(limit).getMany();
    return { totalResults, groups };
  }

  /** Members of the given groups, with each user's displayName (or userName), oldest membership order-free. */
  /** `manager`: read inside that transaction (a create's answer, rendered before it commits). */
  async membersOf(groupIds: readonly string[], manager?: EntityManager): Promise<MemberRow[]> {
    const members = manager?.getRepository(ScimGroupMemberEntity) ?? this.members;
    const rows: MemberRow[] = [];
    for (const chunk of chunks(groupIds)) {
      const raw = await members
        .createQueryBuilder('m')
        .innerJoin(ScimUserEntity, 'u', 'u.id = m.user_id')
        .select('m.group_id', 'groupId')
        .addSelect('m.user_id', 'userId')
        .addSelect(this.displayExpression('u'), 'display')
        .where({ groupId: In(chunk) })
        .orderBy('m.user_id', 'ASC')
        .getRawMany<MemberRow>();
      rows.push(...raw);
    }
    return rows;
  }

  /**
   * The groups the given users are direct members of (the Users' read-only `groups` attribute), by display name.
   * One statement with the ids as one array parameter (a page of 100 users): the query builder's `In(…)` expands
   * 100 parameters and costs more to build than the query takes to run.
   */
  async groupsOf(userIds: readonly string[]): Promise<GroupRow[]> {
    if (userIds.length === 0) return [];
    const select =
      'SELECT m.group_id AS "groupId", m.user_id AS "userId", g.display_name AS "displayName" ' +
      'FROM scim_group_members m JOIN scim_groups g ON g.id = m.group_id WHERE m.user_id ';
    // PostgreSQL: a named statement (parsed once per connection; it is part of every list page).
    return this.dialect === 'postgres'
      ? namedQuery<GroupRow>(
          this.members.manager.connection,
          'scim_groups_of_users',
          `${select}= ANY($1::uuid[]) ORDER BY g.display_name`,
          [userIds],
        )
      : this.members.query(`${select}IN (SELECT value FROM json_each(?)) ORDER BY g.display_name`, [
          JSON.stringify(userIds),
        ]);
  }
}
