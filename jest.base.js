// Shared jest settings. NestJS 12 is ESM-only, so jest runs in ESM mode (NODE_OPTIONS=--experimental-vm-modules).
import vm from 'node:vm';

// content-disposition and cookie are ESM-only but require()d by CommonJS deps (@fastify/static, light-my-request).
// On Node 24.9+ jest require()s ES modules natively (the test jest itself makes, vm's hasAsyncGraph); there a
// transform to CommonJS would be loaded as ESM and fail ("exports is not defined"). Older runtimes need it.
const jestRequiresEsm = typeof vm.SourceTextModule?.prototype.hasAsyncGraph === 'function';
const esmOnlyRequired = 'content-disposition|cookie';

export const baseConfig = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  setupFiles: ['<rootDir>/test/setup-env.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: '<rootDir>/tsconfig.json' }],
    ...(jestRequiresEsm
      ? {}
      : {
          [`^.+/node_modules/(${esmOnlyRequired})/.+\\.js$`]: [
            'ts-jest',
            { useESM: false, tsconfig: { allowJs: true, module: 'commonjs', esModuleInterop: true } },
          ],
        }),
  },
  transformIgnorePatterns: jestRequiresEsm ? ['/node_modules/'] : [`/node_modules/(?!(${esmOnlyRequired})/)`],
  rootDir: '.',
};
