// The Group resource as every Groups answer carries it (RFC 7643 §4.2): members as {value, $ref, display, type}.
import type { ScimGroupEntity } from './entities/scim-group.entity.js';
import { CORE_GROUP_SCHEMA_ID } from './schema/group-schema.js';
import { etagOf } from './scim-etag.js';
import { userLocation } from './scim-user.representation.js';

export interface ScimGroupMemberView {
  value: string;
  $ref: string;
  display: string | null;
  type: 'User';
}

export interface ScimGroupView {
  schemas: [typeof CORE_GROUP_SCHEMA_ID];
  id: string;
  externalId?: string;
  displayName: string;
  /** Absent when the answer leaves members out (excludedAttributes=members): they are then not even read. */
  members?: ScimGroupMemberView[];
  meta: {
    resourceType: 'Group';
    created: string;
    lastModified: string;
    location: string;
    version: string;
  };
}

export function groupLocation(baseUrl: string, id: string): string {
  return `${baseUrl}/Groups/${id}`;
}

export function toGroupView(
  entity: Readonly<ScimGroupEntity>,
  members: ReadonlyArray<{ userId: string; display: string | null }> | undefined,
  baseUrl: string,
): ScimGroupView {
  return {
    schemas: [CORE_GROUP_SCHEMA_ID],
    id: entity.id,
    ...(entity.externalId !== null ? { externalId: entity.externalId } : {}),
    displayName: entity.displayName,
    ...(members !== undefined
      ? {
          members: members.map((member) => ({
            value: member.userId,
            $ref: userLocation(baseUrl, member.userId),
            display: member.display,
            type: 'User' as const,
          })),
        }
      : {}),
    meta: {
      resourceType: 'Group',
      created: entity.createdAt.toISOString(),
      lastModified: entity.lastModified.toISOString(),
      location: groupLocation(baseUrl, entity.id),
      version: etagOf(entity.version),
    },
  };
}
