// SCIM User bodies for the e2e specs: one per test, unique userName, overrides on top.
import { randomUUID } from 'node:crypto';
import { CORE_USER } from './scim-client.js';

let sequence = 0;

export function scimUserBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  sequence += 1;
  const tag = `${String(sequence)}-${randomUUID().slice(0, 8)}`;
  return {
    schemas: [CORE_USER],
    userName: `user.${tag}@example.com`,
    externalId: `ext-${tag}`,
    name: { givenName: 'Test', familyName: `User${String(sequence)}` },
    displayName: `Test User ${String(sequence)}`,
    active: true,
    emails: [{ type: 'work', value: `user.${tag}@example.com`, primary: true }],
    ...overrides,
  };
}
