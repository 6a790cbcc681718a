import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';
import { importDirection } from './lint/import-direction.ts';

export default tseslint.config(
  { ignores: ['node_modules/**', '.serverless/**', '.esbuild/**', 'dist/**', '.build/**', 'coverage/**', 'lib/**/*.generated.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': ['error', { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' }],
    },
  },
  {
    // Tool configuration files are loaded by their tools through a default export.
    files: ['*.config.ts', '*.config.js'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    // Only lib/config.ts reads the environment; the rest gets configuration injected.
    files: ['lib/**/*.ts'],
    ignores: ['lib/config.ts'],
    rules: {
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Read configuration in lib/config.ts.' }],
    },
  },
  {
    // The one direction of imports docs/architecture.md draws, and no production code reaching into test/.
    files: ['lib/**/*.ts', 'functions/**/*.ts', 'scripts/**/*.ts', 'demo/**/*.ts'],
    plugins: { local: { rules: { 'import-direction': importDirection } } },
    rules: { 'local/import-direction': 'error' },
  },
  // Layout is Prettier's (npm run format); ESLint keeps to what it finds wrong.
  prettier,
);
