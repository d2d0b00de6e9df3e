// Unit specs live beside the code they test (src/**/*.spec.ts). ESM mode: see docs/testing.md.
import { baseConfig } from './jest.base.js';

export default {
  ...baseConfig,
  roots: ['<rootDir>/src'],
  testMatch: ['**/*.spec.ts'],
};
