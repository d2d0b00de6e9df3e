// Shared jest settings. NestJS 12 is ESM-only, so jest runs in ESM mode (NODE_OPTIONS=--experimental-vm-modules).
export const baseConfig = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  setupFiles: ['<rootDir>/test/setup-env.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: '<rootDir>/tsconfig.json' }],
    // content-disposition and cookie are ESM-only but require()d by CommonJS deps (@fastify/static, light-my-request).
    '^.+/node_modules/(content-disposition|cookie)/.+\\.js$': [
      'ts-jest',
      { useESM: false, tsconfig: { allowJs: true, module: 'commonjs', esModuleInterop: true } },
    ],
  },
  transformIgnorePatterns: ['/node_modules/(?!(content-disposition|cookie)/)'],
  rootDir: '.',
};
