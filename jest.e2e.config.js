// e2e specs boot the real app on a real database (SQLite file, or PostgreSQL when DATABASE_URL says so).
import fs from 'node:fs';
import { baseConfig } from './jest.base.js';

/**
 * Specs that may share the machine with another jest worker (`npm run test:e2e` runs them with 2 workers, the rest
 * in band afterwards): each has its own database (test/support/test-database.ts), OS-chosen ports and temp folders,
 * and asserts no duration, spawns no process (service, CLI, the OpenAPI checker) and kills nothing. Everything not
 * listed (a new spec too) runs in band: time bounds, fault injection, benches-as-tests, spawned processes, and the
 * iCalendar import specs (the import's work budget is wall time: a busy core turns a 201 into a 400)
 * (docs/testing.md).
 */
export const SHAREABLE_SPECS = [
  'audit',
  'counter-deltas',
  'dashboard',
  'docs',
  'env-key-identity',
  'input-nul',
  'long-path-params',
  'mail-egress',
  'migration-runs',
  'openapi-examples',
  'openapi-generated',
  'openapi-requests',
  'router-errors',
  'schedules',
  'scim',
  'scim/scim-contract',
  'scim/scim-filter-sql',
  'scim/scim-user-count',
  'scim/scim-user-emails-migration',
  'scim/scim-user-sort',
  'scope-matrix',
  'tenancy',
];

const missing = SHAREABLE_SPECS.filter(
  (name) => !fs.existsSync(new URL(`test/${name}.e2e-spec.ts`, import.meta.url)),
);
if (missing.length > 0)
  throw new Error(`SHAREABLE_SPECS names specs that do not exist: ${missing.join(', ')}`);
const shareableGlobs = SHAREABLE_SPECS.map((name) => `**/test/${name}.e2e-spec.ts`);
const shareablePatterns = SHAREABLE_SPECS.map((name) => `/test/${name}\\.e2e-spec\\.ts$`);

// E2E_GROUP=shared: only the listed specs; E2E_GROUP=in-band: all others; unset: every spec.
const group = process.env.E2E_GROUP;
if (group !== undefined && group !== 'shared' && group !== 'in-band') {
  throw new Error(`E2E_GROUP must be "shared" or "in-band", not "${group}"`);
}

export default {
  ...baseConfig,
  roots: ['<rootDir>/test'],
  testMatch: group === 'shared' ? shareableGlobs : ['**/*.e2e-spec.ts'],
  ...(group === 'in-band' ? { testPathIgnorePatterns: ['/node_modules/', ...shareablePatterns] } : {}),
  testTimeout: 60_000,
};
