// Type-aware lint: zero warnings. Pure-logic folders may not import the framework or the ORM.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const PURE_FOLDERS = [
  'src/schedules/recurrence/**/*.ts',
  'src/schedules/ical/**/*.ts',
  'src/scim/filter/**/*.ts',
  'src/scim/patch/**/*.ts',
  'src/scim/schema/**/*.ts',
  'src/device-webhook/signature/**/*.ts',
  'src/device-webhook/smartapp/**/*.ts',
  'src/replication/state/**/*.ts',
  'src/mail/smtp/**/*.ts',
];

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'coverage/**',
      'data/**',
      'bench/**',
      // Build scripts (plain Node ESM, outside the TypeScript project).
      'scripts/**',
      // Child-process scripts run by e2e specs (plain Node ESM, outside the TypeScript project).
      'test/**/*.mjs',
      '*.config.js',
      'jest.base.js',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/require-await': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // Nest and TypeORM hand decorated classes around; empty marker classes and interfaces are idiomatic there.
      '@typescript-eslint/no-extraneous-class': 'off',
      // A framework through its package's public entry point only: a file inside it can move or change in any
      // release, and every upgrade would become this code's problem.
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@nestjs/*/*'],
              message:
                "Import from the package's public entry point (e.g. '@nestjs/core'), not a file inside it.",
            },
          ],
        },
      ],
      // Global pipes, guards and interceptors are APP_* providers: direct routes (src/http/direct-routes.ts) find
      // them there, and a guard added with app.useGlobalGuards() would be one they cannot see.
      'no-restricted-syntax': [
        'error',
        {
          selector: 'CallExpression[callee.property.name=/^useGlobal(Pipes|Guards|Interceptors)$/]',
          message:
            'Declare a global pipe, guard or interceptor as an APP_PIPE/APP_GUARD/APP_INTERCEPTOR provider.',
        },
      ],
    },
  },
  {
    files: PURE_FOLDERS,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@nestjs/*', '@nestjs/*/*', 'typeorm', 'typeorm/*'],
              message: 'Pure domain logic stays free of Nest and TypeORM.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.spec.ts', 'test/**/*.ts'],
    rules: {
      // jest matchers return any-typed values; specs parse JSON bodies.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
);
