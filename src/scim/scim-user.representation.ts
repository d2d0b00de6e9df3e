// Between the stored row and the two forms of a User: the canonical RFC 7643 form the PATCH engine reads and
// writes (roles as value/display), and the response form of the interface document ("User (SCIM representation)":
// every documented field present, null when empty, roles as Id/DisplayName). Attributes the document does not
// list but RFC 7643 defines (nickName, title, userType, phoneNumbers, addresses, the enterprise extension) are
// stored and returned only when they have a value, so Okta and Entra read back what they wrote.
import {
  CORE_USER_SCHEMA_ID,
  ENTERPRISE_USER_SCHEMA_ID,
  type ScimAddress,
  type ScimEnterpriseUser,
  type ScimMultiValue,
  type ScimName,
  type ScimUser,
} from './schema/user-schema.js';
import type { ScimStoredAttributes, ScimUserEntity } from './entities/scim-user.entity.js';
import { etagOf } from './scim-etag.js';

export interface ScimMetaView {
  resourceType: 'User';
  created: string;
  lastModified: string;
  location: string;
  version: string;
}

export interface ScimNameView {
  formatted: string | null;
  familyName: string | null;
  givenName: string | null;
  middleName: string | null;
  honorificPrefix: string | null;
  honorificSuffix: string | null;
}

export interface ScimEmailView {
  type: string | null;
  nullable: string | null;
  value: string | null;
  display: string | null;
  primary: boolean;
}

/** The interface document's Id/DisplayName, and RFC 7643's value/display/type/primary (type, primary as sent). */
export interface ScimRoleView {
  Id: string | null;
  DisplayName: string | null;
  value: string | null;
  display: string | null;
  type?: string;
  primary?: boolean;
}

export interface ScimUserGroupView {
  value: string;
  $ref: string;
  display: string;
  type: 'direct';
}

/** The response body of every User operation (operation 3's documented shape first). */
export interface ScimUserView {
  schemas: string[];
  id: string;
  externalId: string | null;
  applicationExternalId: string | null;
  meta: ScimMetaView;
  status: string | null;
  userName: string;
  name: ScimNameView | null;
  displayName: string | null;
  preferredLanguage: string | null;
  locale: string | null;
  timezone: string | null;
  active: boolean | null;
  emails: ScimEmailView[] | null;
  nfc: string | null;
  roles: ScimRoleView[] | null;
  /** Read-only (RFC 7643 §4.1.2): the groups the user is a direct member of; absent when none. */
  groups?: ScimUserGroupView[];
  nickName?: string;
  title?: string;
  userType?: string;
  phoneNumbers?: ScimMultiValue[];
  addresses?: ScimAddress[];
  [ENTERPRISE_USER_SCHEMA_ID]?: ScimEnterpriseUser;
}

export function userLocation(baseUrl: string, id: string): string {
  return `${baseUrl}/Users/${id}`;
}

/** The members of a ScimUser that live in the row's own columns or are computed, not in `attributes`. */
const COLUMN_MEMBERS = new Set(['schemas', 'id', 'meta', 'userName', 'externalId']);

/** Splits a canonical user into the row's columns and its JSON document. */
export function toStoredParts(user: Readonly<ScimUser>): {
  userName: string;
  externalId: string | null;
  attributes: ScimStoredAttributes;
} {
  // Sound: a ScimUser holds only JSON values (it was parsed from a request body by the engine).
  const attributes = Object.fromEntries(
    Object.entries(user).filter(([key, value]) => !COLUMN_MEMBERS.has(key) && value !== undefined),
  ) as ScimStoredAttributes;
  return { userName: user.userName, externalId: user.externalId ?? null, attributes };
}

function schemasOf(attributes: Readonly<Record<string, unknown>>): string[] {
  return ENTERPRISE_USER_SCHEMA_ID in attributes
    ? [CORE_USER_SCHEMA_ID, ENTERPRISE_USER_SCHEMA_ID]
    : [CORE_USER_SCHEMA_ID];
}

function metaOf(entity: Readonly<ScimUserEntity>, baseUrl: string): ScimMetaView {
  const created = entity.createdAt.toISOString();
  return {
    resourceType: 'User',
    created,
    // Most users were never changed: one ISO rendering serves both (200 per page of 100 users otherwise).
    lastModified:
      entity.lastModified.getTime() === entity.createdAt.getTime()
        ? created
        : entity.lastModified.toISOString(),
    location: userLocation(baseUrl, entity.id),
    version: etagOf(entity.version),
  };
}

/** The canonical form (what the PATCH engine works on), with id, meta and schemas as a client would see them. */
export function toCanonicalUser(entity: Readonly<ScimUserEntity>, baseUrl: string): ScimUser {
  const user = {
    schemas: schemasOf(entity.attributes),
    id: entity.id,
    ...(entity.externalId !== null ? { externalId: entity.externalId } : {}),
    meta: metaOf(entity, baseUrl),
    userName: entity.userName,
    ...structuredClone(entity.attributes),
  };
  // `attributes` was written from a ScimUser produced by the PATCH engine or normalizeUserInput.
  return user;
}

function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function nameView(name: ScimName | undefined): ScimNameView | null {
  if (name === undefined || Object.keys(name).length === 0) return null;
  return {
    formatted: text(name.formatted),
    familyName: text(name.familyName),
    givenName: text(name.givenName),
    middleName: text(name.middleName),
    honorificPrefix: text(name.honorificPrefix),
    honorificSuffix: text(name.honorificSuffix),
  };
}

function listOrNull<T, V>(items: readonly T[] | undefined, view: (item: T) => V): V[] | null {
  return items === undefined || items.length === 0 ? null : items.map(view);
}

/**
 * The response form of a stored user, with its `groups` (RFC 7643 §4.1.2, read-only) right after `roles` when it
 * has any. Built straight from the stored document, which it only reads: a page of 100 users renders without
 * copying 100 documents, and every view keeps one property order (so the answer serializes on a fast path).
 */
export function toUserView(
  entity: Readonly<ScimUserEntity>,
  baseUrl: string,
  groups?: readonly ScimUserGroupView[],
): ScimUserView {
  // `attributes` was written from a ScimUser produced by the PATCH engine or normalizeUserInput.
  const user = entity.attributes as Readonly<ScimUser>;
  const view: ScimUserView = {
    schemas: schemasOf(entity.attributes),
    id: entity.id,
    externalId: entity.externalId,
    applicationExternalId: text(user.applicationExternalId),
    meta: metaOf(entity, baseUrl),
    status: text(user.status),
    userName: entity.userName,
    name: nameView(user.name),
    displayName: text(user.displayName),
    preferredLanguage: text(user.preferredLanguage),
    locale: text(user.locale),
    timezone: text(user.timezone),
    active: typeof user.active === 'boolean' ? user.active : null,
    emails: listOrNull(user.emails, (email) => ({
      type: text(email.type),
      nullable: text(email.nullable),
      value: text(email.value),
      display: text(email.display),
      primary: email.primary === true,
    })),
    nfc: text(user.nfc),
    roles: listOrNull(user.roles, (role) => ({
      Id: text(role.value),
      DisplayName: text(role.display),
      value: text(role.value),
      display: text(role.display),
      ...(typeof role.type === 'string' ? { type: role.type } : {}),
      ...(typeof role.primary === 'boolean' ? { primary: role.primary } : {}),
    })),
  };
  if (groups !== undefined && groups.length > 0) view.groups = [...groups];
  if (user.nickName !== undefined) view.nickName = user.nickName;
  if (user.title !== undefined) view.title = user.title;
  if (user.userType !== undefined) view.userType = user.userType;
  if (user.phoneNumbers !== undefined && user.phoneNumbers.length > 0) view.phoneNumbers = user.phoneNumbers;
  if (user.addresses !== undefined && user.addresses.length > 0) view.addresses = user.addresses;
  const enterprise = user[ENTERPRISE_USER_SCHEMA_ID];
  if (enterprise !== undefined) view[ENTERPRISE_USER_SCHEMA_ID] = enterprise;
  return view;
}
