// e2e specs boot the real app on a real database (SQLite file, or PostgreSQL when DATABASE_URL says so).
import { baseConfig } from './jest.base.js';

export default {
  ...baseConfig,
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.e2e-spec.ts'],
  testTimeout: 60_000,
};
