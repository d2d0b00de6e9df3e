// The queries of the SCIM area: paged filtered lists (filter → SQL through scim-filter-sql.ts), and writes that
// only succeed on the version the caller read (optimistic concurrency, RFC 7644 §3.14), with userName uniqueness
// left to the unique index so that concurrent creates cannot both win.
import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, type EntityManager, type Repository, type SelectQueryBuilder } from 'typeorm';
import { isUniqueViolation } from '../database/constraint-errors.js';
import type { Logger } from 'pino';
import { ROOT_LOGGER } from '../core/core.module.js';
import { namedQuery } from '../database/pg-named-query.js';
import { writeAuditEvent, type AuditEntry } from '../audit/audit-trail.js';
import { inTransaction, type TransactionalRecord } from '../database/transaction.js';
import { ScimGroupEntity, ScimGroupMemberEntity } from './entities/scim-group.entity.js';
import { ScimUserEmailEntity } from './entities/scim-user-email.entity.js';
import { ScimUserEntity } from './entities/scim-user.entity.js';
import type { ScimFilter } from './filter/scim-filter.types.js';
import type { SqlDialect } from './filter-sql/sql-text.js';
import { filterToSql } from './scim-filter-sql.js';
import { ScimError } from './scim.errors.js';
import { documentSortExpression, type UserColumnSortKey, type UserSort } from './scim-user-sort.js';
import { userEmailRows } from './user-email-rows.js';
import { DIRECTORY_STEP, loadPositionKeys, PositionDirectory } from '../database/position-directory.js';
import { currentCounter, DeltaFolder, type CounterTables } from '../database/counter-deltas.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ALIAS = 'scim_user';
/** userName sorts case-insensitively (its caseExact is false): by the lower-cased column. */
const SORT_COLUMNS: Record<UserColumnSortKey, string> = {
  id: 'id',
  userName: 'userNameLower',
  externalId: 'externalId',
  created: 'createdAt',
  lastModified: 'lastModified',
};

export interface UserPage {
  totalResults: number;
  users: ScimUserEntity[];
}

export type UserChanges = Pick<
  ScimUserEntity,
  'userName' | 'userNameLower' | 'externalId' | 'attributes' | 'lastModified'
>;

/**
 * A membership change changes the `groups` of the users it touches, so their version (ETag) and lastModified move
 * too (RFC 7644 §3.14): a client holding an ETag must not be told 304 for a user whose groups changed.
 */
export async function touchUsers(
  manager: EntityManager,
  userIds: readonly string[],
  at: Date,
): Promise<void> {
  for (let start = 0; start < userIds.length; start += 500) {
    await bumpVersions(manager, ScimUserEntity, at)
      .where({ id: In(userIds.slice(start, start + 500)) })
      .execute();
  }
}

/** touchUsers for every member of a group (a rename changes each member's `groups[].display`). */
export async function touchMembersOf(manager: EntityManager, groupId: string, at: Date): Promise<void> {
  await bumpVersions(manager, ScimUserEntity, at)
    .where('id IN (SELECT m.user_id FROM scim_group_members m WHERE m.group_id = :groupId)', { groupId })
    .execute();
}

/** A user's `display` as its groups list it changed (displayName, else userName): their versions move. */
export async function touchGroupsOf(manager: EntityManager, userId: string, at: Date): Promise<void> {
  await bumpVersions(manager, ScimGroupEntity, at)
    .where('id IN (SELECT m.group_id FROM scim_group_members m WHERE m.user_id = :userId)', { userId })
    .execute();
}

/** An UPDATE moving the version and lastModified of users or groups (the rows are chosen by the caller). */
function bumpVersions(
  manager: EntityManager,
  entity: typeof ScimUserEntity | typeof ScimGroupEntity,
  at: Date,
) {
  return manager
    .createQueryBuilder()
    .update(entity)
    .set({ version: () => 'version + 1', lastModified: at });
}

/** From this offset on, a page of every user is read from its first key (see search). */
const KEYSET_FROM_OFFSET = 1_000;

/** A row of PAGE_OF_ALL(_FROM_KEY): the stats on every row, the user's columns null when the page is empty. */
interface UserPageRow {
  total: string;
  generation: string;
  id: string | null;
  user_name: string;
  user_name_lower: string;
  external_id: string | null;
  attributes: ScimUserEntity['attributes'];
  version: number;
  created_at: Date;
  last_modified: Date;
}

const USER_COLUMNS =
  'u.id, u.user_name, u.user_name_lower, u.external_id, u.attributes, u.version, u.created_at, u.last_modified';

/** scim_user_stats and its deltas (src/database/counter-deltas.ts, migration 1763780001600). */
const USER_COUNTER: CounterTables = {
  stats: 'scim_user_stats',
  deltas: 'scim_user_stats_deltas',
  columns: ['user_count', 'order_generation'],
};
/** The current user count and order generation, as a derived table (base row + deltas, one snapshot). */
const USER_STATS = currentCounter(USER_COUNTER);

/** PostgreSQL: the page at offset $1 of $2 users, with the total, in one snapshot (see pageOfAllOnPostgres). */
const PAGE_OF_ALL = `SELECT s.user_count::text AS total, s.order_generation::text AS generation, ${USER_COLUMNS}
  FROM ${USER_STATS} s
  LEFT JOIN LATERAL (SELECT * FROM scim_users ORDER BY created_at, id OFFSET $1 LIMIT $2) u ON true
 WHERE s.id = 1
 ORDER BY u.created_at, u.id`;

/**
 * The page $3 entries past the key ($1, $2), if the order generation is still $5 (the directory's); otherwise the
 * stats row alone (the condition on s is a one-time filter: the index is not read for a stale directory).
 */
const PAGE_OF_ALL_FROM_KEY = `SELECT s.user_count::text AS total, s.order_generation::text AS generation, ${USER_COLUMNS}
  FROM ${USER_STATS} s
  LEFT JOIN LATERAL (SELECT * FROM scim_users
                      WHERE s.order_generation::text = $5
                        AND (created_at, id) >= (CAST($1 AS timestamptz), CAST($2 AS uuid))
                      ORDER BY created_at, id OFFSET $3 LIMIT $4) u ON true
 WHERE s.id = 1
 ORDER BY u.created_at, u.id`;

function userOfRow(row: UserPageRow): ScimUserEntity {
  return Object.assign(new ScimUserEntity(), {
    id: row.id,
    userName: row.user_name,
    userNameLower: row.user_name_lower,
    externalId: row.external_id,
    attributes: row.attributes,
    version: row.version,
    createdAt: row.created_at,
    lastModified: row.last_modified,
  });
}

@Injectable()
export class ScimUsersRepository implements OnModuleInit, OnModuleDestroy {
  /** PostgreSQL only: on SQLite the walk to the middle of 100,000 users is ~1 ms, and a build would block the loop. */
  readonly positions: PositionDirectory | undefined;
  /** PostgreSQL only: folds scim_user_stats' deltas (SQLite's triggers update the base row itself). */
  readonly folder: DeltaFolder | undefined;

  constructor(
    @InjectRepository(ScimUserEntity) private readonly users: Repository<ScimUserEntity>,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.positions =
      this.dialect === 'postgres'
        ? new PositionDirectory(
            (step) => loadPositionKeys(this.users.manager.connection, 'scim_users', USER_STATS, step),
            (error) => logger.warn({ err: error }, 'SCIM: building the user position directory failed'),
          )
        : undefined;
    this.folder =
      this.dialect === 'postgres'
        ? new DeltaFolder(this.users.manager.connection, USER_COUNTER, (error) =>
            logger.warn({ err: error }, 'SCIM: folding the user count deltas failed'),
          )
        : undefined;
  }

  onModuleInit(): void {
    this.folder?.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.folder?.stop();
    await this.positions?.idle();
  }

  private get dialect(): SqlDialect {
    return this.users.manager.connection.options.type === 'postgres' ? 'postgres' : 'sqlite';
  }

  /** Ids are UUIDs; anything else cannot name a user (and would be a type error on PostgreSQL's uuid column). */
  static normalizeId(id: string): string | undefined {
    return UUID.test(id) ? id.toLowerCase() : undefined;
  }

  async findById(id: string): Promise<ScimUserEntity | null> {
    const normalized = ScimUsersRepository.normalizeId(id);
    return normalized === undefined ? null : this.users.findOneBy({ id: normalized });
  }

  /**
   * The user's rows in scim_user_emails, the index behind e-mail filters, written in the transaction that writes
   * the user (`replace`: the old rows go first).
   */
  private async writeEmails(
    manager: EntityManager,
    userId: string,
    attributes: ScimUserEntity['attributes'],
    replace: boolean,
  ): Promise<void> {
    if (replace) await manager.delete(ScimUserEmailEntity, { userId });
    const rows = userEmailRows(attributes);
    if (rows.length === 0) return;
    await manager.insert(
      ScimUserEmailEntity,
      rows.map((row) => Object.assign(new ScimUserEmailEntity(), { userId, ...row })),
    );
  }

  /** Throws ScimError.uniqueness when another user has the userName in any letter case. */
  async insert(
    user: ScimUserEntity,
    audit: AuditEntry,
    idempotency?: TransactionalRecord<void>,
  ): Promise<void> {
    try {
      await inTransaction(
        this.users.manager.connection,
        async (manager) => {
          await manager.insert(ScimUserEntity, user);
          await this.writeEmails(manager, user.id, user.attributes, false);
          await writeAuditEvent(manager, audit);
        },
        { record: idempotency },
      );
    } catch (error) {
      if (isUniqueViolation(error)) throw ScimError.uniqueness(user.userName);
      throw error;
    }
  }

  /**
   * Writes `changes` and increments the version, only while the row still has `expectedVersion`; with
   * `memberDisplayChanged`, also the version of every group the user is in (members carry the user's `display`).
   * Returns false when the row changed (or went) in between.
   */
  async updateIfVersion(
    id: string,
    expectedVersion: number,
    changes: UserChanges,
    memberDisplayChanged: boolean,
    audit: AuditEntry,
  ): Promise<boolean> {
    try {
      return await inTransaction(this.users.manager.connection, async (manager) => {
        if (memberDisplayChanged && this.dialect === 'postgres') {
          // Group rows before the user row, as every group write takes them, so the two never wait on each other.
          await manager.query(
            'SELECT id FROM scim_groups WHERE id IN (SELECT group_id FROM scim_group_members WHERE user_id = $1) ' +
              'ORDER BY id FOR UPDATE',
            [id],
          );
        }
        const result = await manager
          .createQueryBuilder()
          .update(ScimUserEntity)
          .set({ ...changes, version: expectedVersion + 1 })
          .where('id = :id AND version = :expectedVersion', { id, expectedVersion })
          .execute();
        if ((result.affected ?? 0) === 0) return false;
        await this.writeEmails(manager, id, changes.attributes, true);
        // The groups list this user as a member with `display`: their representation changed, so their version.
        if (memberDisplayChanged) await touchGroupsOf(manager, id, changes.lastModified);
        await writeAuditEvent(manager, audit);
        return true;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw ScimError.uniqueness(changes.userName);
      throw error;
    }
  }

  /**
   * Deletes the user (only at `expectedVersion` when given) and its memberships, bumping the version of every
   * group it was in (a membership change); false when nothing was deleted.
   */
  async delete(id: string, audit: AuditEntry, expectedVersion?: number): Promise<boolean> {
    const normalized = ScimUsersRepository.normalizeId(id);
    if (normalized === undefined) return false;
    return inTransaction(this.users.manager.connection, async (manager) => {
      // Read the memberships first: the foreign key's cascade removes them with the user.
      const memberships = await manager.find(ScimGroupMemberEntity, {
        select: { groupId: true },
        where: { userId: normalized },
      });
      if (memberships.length > 0 && this.dialect === 'postgres') {
        // Group rows before user rows, as every group write takes them, so the two never wait on each other.
        await manager.query('SELECT id FROM scim_groups WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE', [
          memberships.map((row) => row.groupId),
        ]);
      }
      const result = await manager.delete(
        ScimUserEntity,
        expectedVersion === undefined ? { id: normalized } : { id: normalized, version: expectedVersion },
      );
      if ((result.affected ?? 0) === 0) return false;
      // The foreign keys cascade; deleted explicitly too, so the rows go even where a connection has them off.
      await manager.delete(ScimUserEmailEntity, { userId: normalized });
      if (memberships.length > 0) {
        await bumpVersions(manager, ScimGroupEntity, new Date())
          .where({ id: In(memberships.map((row) => row.groupId)) })
          .execute();
        await manager.delete(ScimGroupMemberEntity, { userId: normalized });
      }
      await writeAuditEvent(manager, { ...audit, resourceId: normalized });
      return true;
    });
  }

  /**
   * One page of the users matching `filter` (all users without one), oldest first unless `sort` says otherwise,
   * and how many match in all. The page is read in index order (created_at, id) with LIMIT/OFFSET, and the total
   * by a separate COUNT: a window function over the page query (`COUNT(*) OVER ()`) made the database sort every
   * matching row for every page. The page goes first: a page that is not full and not empty ends the list, so it
   * also gives the exact total (offset + its length) and the COUNT is skipped. That is the common IdP request, a
   * lookup matching one user or none, and it halves the work of a selective filter that scans (`emails co`).
   * Without a filter the total is the trigger-maintained count of scim_user_stats.
   */
  async search(
    filter: ScimFilter | undefined,
    offset: number,
    limit: number,
    sort?: UserSort,
  ): Promise<UserPage> {
    const query = (page: boolean) => {
      const builder = this.users.createQueryBuilder(ALIAS);
      if (filter !== undefined) {
        const condition = filterToSql(filter, { dialect: this.dialect, alias: ALIAS, page });
        builder.where(condition.sql, { ...condition.parameters });
      }
      return builder;
    };
    const count = async (): Promise<number> => {
      if (filter === undefined) {
        // Every user: the trigger-maintained count (entities/scim-user-stats.entity.ts), not a scan.
        const stats = await this.stats();
        if (stats !== null) return stats.userCount;
      }
      return query(false).getCount();
    };
    if (limit <= 0) return { totalResults: await count(), users: [] };
    if (filter === undefined && sort === undefined && this.dialect === 'postgres') {
      const page = await this.pageOfAllOnPostgres(offset, limit);
      if (page !== undefined) return page;
    }
    const builder = query(true);
    if (sort === undefined) {
      builder.orderBy(`${ALIAS}.createdAt`, 'ASC').addOrderBy(`${ALIAS}.id`, 'ASC');
    } else {
      const direction = sort.descending ? 'DESC' : 'ASC';
      // RFC 7644 §3.4.2.3: resources without a value sort last ascending, first descending (also btree order).
      builder.orderBy(
        typeof sort.key === 'string'
          ? `${ALIAS}.${SORT_COLUMNS[sort.key]}`
          : documentSortExpression(sort.key, this.dialect, ALIAS),
        direction,
        sort.descending ? 'NULLS FIRST' : 'NULLS LAST',
      );
      // userName (lower-cased) and id are unique and never null: a tie-break would only keep their index unused.
      if (sort.key !== 'id' && sort.key !== 'userName') builder.addOrderBy(`${ALIAS}.id`, direction);
    }
    if (filter === undefined && sort === undefined && offset >= KEYSET_FROM_OFFSET) {
      const stats = await this.stats();
      if (stats !== null) return this.deepPageOfAll(builder, offset, limit, stats);
    }
    const users = await builder.offset(offset).limit(limit).getMany();
    if (users.length > 0 && users.length < limit) return { totalResults: offset + users.length, users };
    if (users.length === 0 && offset === 0) return { totalResults: 0, users };
    return { totalResults: await count(), users };
  }

  /**
   * PostgreSQL, a page of every user in list order: the page and its total (with the order generation) in one named
   * statement, so one round trip, parsed once per connection, and rows read without TypeORM's hydration (~0.3 ms
   * of a 100-user page). From DIRECTORY_STEP on, the page starts at the position directory's nearest key (so
   * fewer than DIRECTORY_STEP rows are skipped, each a heap fetch), and the same statement checks that the
   * directory is exact for the generation it reads (one snapshot); a stale one starts a rebuild, and a shallow
   * page is then read by OFFSET. Undefined when it cannot answer (a deep page without a current directory, no
   * stats row): search's general path answers then.
   */
  private async pageOfAllOnPostgres(offset: number, limit: number): Promise<UserPage | undefined> {
    const dataSource = this.users.manager.connection;
    const fromFirst = () =>
      namedQuery<UserPageRow>(dataSource, 'scim_users_page', PAGE_OF_ALL, [offset, limit]);
    const start = offset >= DIRECTORY_STEP ? this.positions?.current(offset) : undefined;
    let rows: UserPageRow[];
    if (start === undefined) {
      if (offset >= KEYSET_FROM_OFFSET) return undefined;
      rows = await fromFirst();
    } else {
      rows = await namedQuery<UserPageRow>(dataSource, 'scim_users_page_from_key', PAGE_OF_ALL_FROM_KEY, [
        start.key.created,
        start.key.id,
        start.skip,
        limit,
        start.generation,
      ]);
      const seen = rows[0]?.generation;
      if (seen !== undefined && seen !== start.generation) {
        this.positions?.startOf(offset, seen); // stale: starts a rebuild (one a second at most)
        if (offset >= KEYSET_FROM_OFFSET) return undefined;
        rows = await fromFirst(); // a shallow page: OFFSET is cheap
      }
    }
    const [first] = rows;
    if (first === undefined) return undefined;
    return {
      totalResults: Number(first.total),
      users: first.id === null ? [] : rows.map(userOfRow),
    };
  }

  /** The user count and order generation (one primary-key row; a raw query costs a fraction of findOneBy's). */
  private async stats(): Promise<{ userCount: number; orderGeneration: string } | null> {
    const [row] = await this.users.query<
      Array<{ userCount: number | string; orderGeneration: number | string }>
    >(
      `SELECT s.user_count AS "userCount", s.order_generation AS "orderGeneration" FROM ${USER_STATS} s WHERE s.id = 1`,
    );
    return row === undefined
      ? null
      : { userCount: Number(row.userCount), orderGeneration: String(row.orderGeneration) };
  }

  /**
   * A deep page of every user (no filter, no sort), read from its first key (created_at, id). On PostgreSQL with a
   * current position directory (src/database/position-directory.ts) that key is the directory's nearest one below the
   * offset, plus fewer than DIRECTORY_STEP index entries. Otherwise it comes from a subquery the index answers alone, walked
   * from whichever end is nearer. OFFSET over full rows read (on PostgreSQL, fetched from the heap) every row it
   * skipped: 11.6 / 24.3 ms for count=1 at the middle / end of 100,000 users on PostgreSQL (bench/scim-emails.mjs).
   * One statement, so the key is compared as stored (no round trip through a JS Date).
   */
  private async deepPageOfAll(
    builder: SelectQueryBuilder<ScimUserEntity>,
    offset: number,
    limit: number,
    stats: { userCount: number; orderGeneration: string },
  ): Promise<UserPage> {
    const totalResults = stats.userCount;
    if (offset >= totalResults) return { totalResults, users: [] };
    const start = this.positions?.startOf(offset, stats.orderGeneration);
    if (start !== undefined) {
      const users = await builder
        .where(
          `(${ALIAS}.createdAt, ${ALIAS}.id) >= (CAST(:keyCreated AS timestamptz), CAST(:keyId AS uuid))`,
          {
            keyCreated: start.key.created,
            keyId: start.key.id,
          },
        )
        .offset(start.skip)
        .limit(limit)
        .getMany();
      return { totalResults, users };
    }
    const fromEnd = totalResults - 1 - offset;
    const firstKey =
      fromEnd < offset
        ? 'SELECT created_at, id FROM scim_users ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET :keysetOffset'
        : 'SELECT created_at, id FROM scim_users ORDER BY created_at, id LIMIT 1 OFFSET :keysetOffset';
    const users = await builder
      .where(`(${ALIAS}.createdAt, ${ALIAS}.id) >= (${firstKey})`, {
        keysetOffset: Math.min(offset, fromEnd),
      })
      .limit(limit)
      .getMany();
    return { totalResults, users };
  }
}
