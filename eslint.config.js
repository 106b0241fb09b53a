import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Dependency direction (DESIGN §2): domain <- services <- main, cli; renderer imports domain and
// the API contract only. Enforced here, not by memory.
const nodeBuiltins = ['node:*', 'fs', 'path', 'os', 'child_process', 'worker_threads', 'net', 'http', 'crypto', 'zlib', 'url', 'stream', 'events', 'buffer', 'util'];

export default tseslint.config(
  { ignores: ['node_modules/**', 'out/**', 'dist/**', 'test-results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['src/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: nodeBuiltins, message: 'src/domain is pure: no I/O or node built-ins.' },
            { group: ['electron', 'electron/*'], message: 'src/domain must not import electron.' },
            { group: ['react', 'react-dom', 'react/*', 'react-dom/*', '@react-three/*'], message: 'src/domain must not import react.' },
            { group: ['three', 'three/*'], message: 'src/domain must not import three.' },
            { group: ['**/services/**', '**/cli/**', '**/main/**', '**/renderer/**', 'mujoco-js', 'ws'], message: 'src/domain depends on nothing outside src/domain.' },
          ],
        },
      ],
    },
  },
  {
    files: ['src/services/**/*.ts', 'src/cli/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/renderer/**', '**/main/**', 'react', 'react-dom', 'three', 'electron'], message: 'services and cli do not depend on the UI or Electron.' }] }],
    },
  },
  {
    files: ['renderer/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: nodeBuiltins, message: 'The renderer runs sandboxed: no node built-ins.' }, { group: ['**/src/services/**', '**/src/cli/**', '**/main/**', 'electron', 'mujoco-js', 'ws'], message: 'The renderer imports src/domain and the API contract only.' }] }],
    },
  },
);
