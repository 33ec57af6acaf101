// @ts-check
import { existsSync } from 'node:fs';
import path from 'node:path';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// bench/lexical-candidates is its own package, typed against its own node_modules (`npm ci --prefix
// bench/lexical-candidates`, which `make bench-lexical-candidates` runs and the service's install
// does not): it is linted where those are installed and skipped where they are not.
const lexicalBenchInstalled = existsSync(
  path.join(import.meta.dirname, 'bench', 'lexical-candidates', 'node_modules'),
);

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'data/**',
      'coverage/**',
      'src/db/drizzle/**',
      ...(lexicalBenchInstalled ? [] : ['bench/lexical-candidates/**']),
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  ...tseslint.configs.stylisticTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-properties': [
        'error',
        {
          object: 'process',
          property: 'env',
          message: 'Read configuration through src/config.ts.',
        },
      ],
    },
  },
  {
    files: ['src/config.ts', 'test/**', 'bench/**', '**/*.test.ts', '*.config.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    // Tests read loosely typed JSON and use vitest's asymmetric matchers (typed any).
    files: ['test/**', '**/*.test.ts', 'bench/**'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unnecessary-type-parameters': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);
