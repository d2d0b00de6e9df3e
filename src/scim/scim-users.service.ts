// The SCIM User resource (RFC 7644 §3.3–§3.7, docs/scim.md): create, read, list, replace, patch and delete on top of
// the pure engine (normalizeUserInput, applyUserPatch) and the repository. Writes use the version the request read:
// with If-Match a changed user is 412, without it the read-modify-write is retried, so two PATCHes racing on one
// user never lose an update.
import { mapRecord, type TransactionalRecord } from '../database/transaction.js';
import { randomUUID } from 'node:crypto';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import { ScimUserEntity } from './entities/scim-user.entity.js';
import { normalizeUserInput } from './patch/normalize-user-input.js';
import { jsonEqual, MAX_MULTI_VALUES } from './patch/scim-value-coercion.js';
import { applyUserPatchSliced } from './patch/scim-patch.js';
import { parsePatchRequest } from './patch/scim-patch-request.js';
import type { ScimUser } from './schema/user-schema.js';
import { etagOf, matchesEntityTag } from './scim-etag.js';
import { parseListFilter } from './scim-list-filter.js';
import { checkNoNul, rethrowEngineError, ScimError, ScimErrorCode } from './scim.errors.js';
import { groupLocation } from './scim-group.representation.js';
import { ScimGroupsRepository } from './scim-groups.repository.js';
import {
  toCanonicalUser,
  toStoredParts,
  toUserView,
  type ScimUserGroupView,
  type ScimUserView,
} from './scim-user.representation.js';
import { ScimUsersRepository } from './scim-users.repository.js';
import type { AuditSource } from '../audit/audit-source.js';
import { patchOperationsOf, type AuditDetail, type AuditEntry } from '../audit/audit-trail.js';
import type { UserSort } from './scim-user-sort.js';

export const LIST_RESPONSE_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
/** Page size when the request gives no `count`, and the largest page served (ServiceProviderConfig maxResults). */
export const DEFAULT_COUNT = 100;
export const MAX_RESULTS = 1000;
/** Pages with more users than this give the event loop a turn between reading and rendering. */
const YIELD_AFTER_USERS = 100;
/** Column sizes (entities/scim-user.entity.ts). */
export const MAX_USER_NAME = 256;
export const MAX_EXTERNAL_ID = 256;
/** Read-modify-write rounds before a PATCH/PUT without If-Match gives up on a user that keeps changing. */
const WRITE_ATTEMPTS = 10;

export interface ScimListResponse {
  schemas: [typeof LIST_RESPONSE_SCHEMA];
  totalResults: number;
  startIndex: number;
  itemsPerPage: number;
  Resources: ScimUserView[];
}

export interface ListQuery {
  filter?: string;
  /** 1-based, already clamped to ≥ 1. */
  startIndex: number;
  /** Already clamped to 0…MAX_RESULTS. */
  count: number;
  sort?: UserSort;
}

/** The request's `If-Match` header (RFC 7232 §3.1, SCIM compares weakly: RFC 7644 §3.14). */
export type IfMatch = string | undefined;

/** Array elements across all operation values of one user PATCH (bounded work per request). */
export const MAX_PATCH_VALUES = 2_000;

/** Counts the array elements in a PATCH body's values before any is applied (each add compares with the rest). */
function checkPatchValueCount(body: unknown): void {
  let operations;
  try {
    operations = parsePatchRequest(body);
  } catch (error) {
    rethrowEngineError(error);
  }
  let total = 0;
  const visit = (value: unknown, depth: number): void => {
    if (depth > 4 || total > MAX_PATCH_VALUES) return;
    if (Array.isArray(value)) {
      total += value.length;
      for (const item of value) visit(item, depth + 1);
    } else if (typeof value === 'object' && value !== null) {
      for (const member of Object.values(value)) visit(member, depth + 1);
    }
  };
  for (const operation of operations) visit(operation.value, 0);
  if (total > MAX_PATCH_VALUES) {
    throw ScimError.badRequest(
      ScimErrorCode.InvalidValue,
      `The PATCH carries more than ${String(MAX_PATCH_VALUES)} values in all; send fewer per request`,
    );
  }
}

/** How a group lists the user as a member (`members[].display`): its displayName, else its userName. */
function memberDisplay(userName: string, attributes: Readonly<Record<string, unknown>>): string {
  return typeof attributes.displayName === 'string' ? attributes.displayName : userName;
}

@Injectable()
export class ScimUsersService {
  constructor(
    private readonly repository: ScimUsersRepository,
    private readonly groups: ScimGroupsRepository,
  ) {}

  /** The response form of stored users with their read-only `groups` (one query for all of them). */
  private async views(entities: readonly ScimUserEntity[], baseUrl: string): Promise<ScimUserView[]> {
    if (entities.length === 0) return [];
    const byUser = new Map<string, ScimUserGroupView[]>();
    for (const row of await this.groups.groupsOf(entities.map((entity) => entity.id))) {
      let groups = byUser.get(row.userId);
      if (groups === undefined) byUser.set(row.userId, (groups = []));
      groups.push({
        value: row.groupId,
        $ref: groupLocation(baseUrl, row.groupId),
        display: row.displayName,
        type: 'direct',
      });
    }
    return entities.map((entity) => toUserView(entity, baseUrl, byUser.get(entity.id)));
  }

  private async view(entity: ScimUserEntity, baseUrl: string): Promise<ScimUserView> {
    const [view] = await this.views([entity], baseUrl);
    return view;
  }

  /** `idempotency`: the request's Idempotency-Key record, stored with its answer in the user's transaction. */
  async create(
    body: unknown,
    baseUrl: string,
    by: AuditSource,
    idempotency?: TransactionalRecord<ScimUserView>,
  ): Promise<ScimUserView> {
    const user = this.normalize(body);
    // A new user is active unless the client says otherwise (Okta and Entra always say; a bare client may not).
    if (user.active === undefined) user.active = true;
    const now = new Date();
    const parts = toStoredParts(user);
    const entity = Object.assign(new ScimUserEntity(), {
      id: randomUUID(),
      ...parts,
      userNameLower: parts.userName.toLowerCase(),
      version: 1,
      createdAt: now,
      lastModified: now,
    });
    await this.repository.insert(
      entity,
      userChange(by, 'create', entity.id, entity.userName),
      mapRecord(idempotency, () => toUserView(entity, baseUrl)),
    );
    return toUserView(entity, baseUrl);
  }

  async get(id: string, baseUrl: string): Promise<ScimUserView> {
    return this.view(await this.load(id), baseUrl);
  }

  /** The current version of a user, for conditional GETs. */
  async version(id: string): Promise<number> {
    return (await this.load(id)).version;
  }

  async list(query: ListQuery, baseUrl: string): Promise<ScimListResponse> {
    const filter =
      query.filter !== undefined && query.filter.trim() !== '' ? parseListFilter(query.filter) : undefined;
    let page;
    try {
      page = await this.repository.search(filter, query.startIndex - 1, query.count, query.sort);
    } catch (error) {
      rethrowEngineError(error);
    }
    // A big page (up to 1,000 users) was one synchronous stretch to read on SQLite; its rendering (groups, meta,
    // attributes) is another: the event loop gets a turn in between.
    if (page.users.length > YIELD_AFTER_USERS) await yieldToEventLoop();
    return {
      schemas: [LIST_RESPONSE_SCHEMA],
      totalResults: page.totalResults,
      startIndex: query.startIndex,
      itemsPerPage: page.users.length,
      Resources: await this.views(page.users, baseUrl),
    };
  }

  /** PUT (RFC 7644 §3.5.1): the body replaces every writable attribute; read-only input is ignored. */
  async replace(
    id: string,
    body: unknown,
    ifMatch: IfMatch,
    baseUrl: string,
    by: AuditSource,
  ): Promise<ScimUserView> {
    const replacement = this.normalize(body);
    return this.update(id, ifMatch, baseUrl, { by, verb: 'replace' }, (current) => {
      const next: ScimUser = { ...replacement };
      // `active` is never cleared by leaving it out: that would silently disable or enable the user.
      if (next.active === undefined && current.active !== undefined) next.active = current.active;
      return next;
    });
  }

  /** PATCH (RFC 7644 §3.5.2, operation 3): all operations apply, or none. */
  async patch(
    id: string,
    body: unknown,
    ifMatch: IfMatch,
    baseUrl: string,
    by: AuditSource,
  ): Promise<ScimUserView> {
    checkPatchValueCount(body);
    const operations = patchOperationsOf(body);
    // In slices: 1,000 operations with value filters take about a second, which must not hold the event loop.
    return this.update(id, ifMatch, baseUrl, { by, verb: 'patch', operations }, async (current) => {
      let patched: ScimUser;
      try {
        patched = await applyUserPatchSliced(current, body);
      } catch (error) {
        rethrowEngineError(error);
      }
      return patched;
    });
  }

  async delete(id: string, ifMatch: IfMatch, by: AuditSource): Promise<void> {
    const audit = userChange(by, 'delete', id);
    if (ifMatch === undefined) {
      if (!(await this.repository.delete(id, audit))) throw ScimError.notFound(id);
      return;
    }
    const current = await this.load(id);
    if (!matchesEntityTag(ifMatch, current.version))
      throw ScimError.preconditionFailed(etagOf(current.version));
    if (!(await this.repository.delete(current.id, audit, current.version))) {
      const now = await this.load(id);
      throw ScimError.preconditionFailed(etagOf(now.version));
    }
  }

  private async load(id: string): Promise<ScimUserEntity> {
    const entity = await this.repository.findById(id);
    if (entity === null) throw ScimError.notFound(id);
    return entity;
  }

  private normalize(body: unknown): ScimUser {
    let user: ScimUser;
    try {
      user = normalizeUserInput(body);
    } catch (error) {
      rethrowEngineError(error);
    }
    this.checkSizes(user);
    return user;
  }

  private checkSizes(user: ScimUser): void {
    checkNoNul(user, 'User');
    for (const [name, value] of Object.entries(user)) {
      if (Array.isArray(value) && name !== 'schemas' && value.length > MAX_MULTI_VALUES) {
        throw ScimError.badRequest(
          ScimErrorCode.InvalidValue,
          `${name} has ${String(value.length)} values; at most ${String(MAX_MULTI_VALUES)}`,
        );
      }
    }
    if (typeof user.userName !== 'string' || user.userName.trim() === '') {
      throw ScimError.badRequest(ScimErrorCode.InvalidValue, 'userName is required and cannot be empty');
    }
    if (user.userName.length > MAX_USER_NAME || user.userName.toLowerCase().length > MAX_USER_NAME) {
      throw ScimError.badRequest(
        ScimErrorCode.InvalidValue,
        `userName is longer than ${String(MAX_USER_NAME)} characters`,
      );
    }
    if (user.externalId !== undefined && user.externalId.length > MAX_EXTERNAL_ID) {
      throw ScimError.badRequest(
        ScimErrorCode.InvalidValue,
        `externalId is longer than ${String(MAX_EXTERNAL_ID)} characters`,
      );
    }
  }

  /**
   * Read, change, write-if-unchanged. `change` gets the canonical user (with id, meta and schemas, so echoed
   * read-only values are recognised as no-ops) and returns the new one. A result equal to the current user writes
   * nothing and keeps the version (and ETag).
   */
  private async update(
    id: string,
    ifMatch: IfMatch,
    baseUrl: string,
    audit: { by: AuditSource; verb: 'replace' | 'patch'; operations?: string[] },
    change: (current: ScimUser) => ScimUser | Promise<ScimUser>,
  ): Promise<ScimUserView> {
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const current = await this.load(id);
      if (ifMatch !== undefined && !matchesEntityTag(ifMatch, current.version)) {
        throw ScimError.preconditionFailed(etagOf(current.version));
      }
      const next = await change(toCanonicalUser(current, baseUrl));
      this.checkSizes(next);
      const parts = toStoredParts(next);
      const unchanged =
        parts.userName === current.userName &&
        parts.externalId === current.externalId &&
        jsonEqual(parts.attributes, current.attributes);
      if (unchanged) return this.view(current, baseUrl);
      const changes = {
        ...parts,
        userNameLower: parts.userName.toLowerCase(),
        lastModified: new Date(),
      };
      const memberDisplayChanged =
        memberDisplay(parts.userName, parts.attributes) !==
        memberDisplay(current.userName, current.attributes);
      const entry = userChange(audit.by, audit.verb, current.id, parts.userName, audit.operations);
      if (
        await this.repository.updateIfVersion(
          current.id,
          current.version,
          changes,
          memberDisplayChanged,
          entry,
        )
      ) {
        return this.view(
          Object.assign(new ScimUserEntity(), current, changes, { version: current.version + 1 }),
          baseUrl,
        );
      }
      // The user changed (or went) since it was read: with If-Match that is the client's 412 (or 404)…
      if (ifMatch !== undefined) {
        const now = await this.load(id);
        throw ScimError.preconditionFailed(etagOf(now.version));
      }
      // …without it, apply the request again to the newer version, after a short random pause so that
      // writers racing on one user spread out instead of colliding again.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * (attempt + 1)));
    }
    throw ScimError.concurrentModification(id);
  }
}

/** The audit entry of a user write: the userName (not secret) and, for a PATCH, its operations without values. */
function userChange(
  by: AuditSource,
  verb: 'create' | 'replace' | 'patch' | 'delete',
  id: string,
  userName?: string,
  operations?: string[],
): AuditEntry {
  const detail: AuditDetail = {};
  if (userName !== undefined) detail.userName = userName;
  if (operations !== undefined) detail.operations = operations;
  return { by, action: `scim.user.${verb}`, resourceType: 'ScimUser', resourceId: id, detail };
}
