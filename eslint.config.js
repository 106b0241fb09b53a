import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Dependency direction (DESIGN §2): domain <- api <- services <- main, cli; renderer imports domain and
// the API contract only. The authority is the allowlist in .dependency-cruiser.cjs (`npm run lint`), which
// also sees `import type`, dynamic `import()`, `require()` and `process.getBuiltinModule()`. The
// no-restricted-imports rules below repeat the common mistakes so the editor shows them while typing;
// the globals and syntax rules cover what a static import graph cannot see (`process`, computed `import()`).
const nodeBuiltins = [
  'node:*',
  'fs',
  'fs/*',
  'path',
  'os',
  'child_process',
  'worker_threads',
  'net',
  'http',
  'https',
  'crypto',
  'zlib',
  'url',
  'stream',
  'events',
  'buffer',
  'util',
  'module',
  'process',
  'perf_hooks',
  'readline',
];
// Packages that need Node (native addons, sockets, files): services only.
const serverPackages = [
  'better-sqlite3',
  'serialport',
  '@serialport/*',
  'ws',
  'mujoco-js',
  'onnxruntime-node',
  '@foxglove/*',
  '@mcap/*',
  'protobufjs',
  'protobufjs/*',
  'yaml',
  'tsx',
  'tsx/*',
];
const uiPackages = ['react', 'react-dom', 'react/*', 'react-dom/*', '@react-three/*', 'three', 'three/*', 'zustand'];
const electron = ['electron', 'electron/*'];

/** Pure and sandboxed code: no Node globals, no import() whose target the layer check cannot read. */
const noNodeGlobals = {
  'no-restricted-globals': [
    'error',
    ...['process', 'require', 'module', 'Buffer', '__dirname', '__filename', 'global'].map((name) => ({
      name,
      message: `${name} is Node's; this folder runs without Node (src/domain is pure, the renderer is sandboxed).`,
    })),
  ],
  'no-restricted-properties': [
    'error',
    { object: 'globalThis', property: 'process', message: "process is Node's; this folder runs without Node." },
    { object: 'globalThis', property: 'require', message: "require is Node's; this folder runs without Node." },
  ],
  'no-restricted-syntax': [
    'error',
    {
      selector: "ImportExpression[source.type!='Literal']",
      message: 'import() with a computed name hides the dependency from the layer check: name the module.',
    },
  ],
};

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
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
  },
  {
    files: ['src/domain/**/*.ts'],
    rules: {
      ...noNodeGlobals,
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: nodeBuiltins, message: 'src/domain is pure: no I/O or node built-ins.' },
            { group: [...electron, ...uiPackages], message: 'src/domain must not import electron or the UI.' },
            { group: serverPackages, message: 'src/domain is pure: server-side packages belong in src/services.' },
            {
              group: ['**/api/**', '**/services/**', '**/cli/**', '**/main/**', '**/renderer/**'],
              message: 'src/domain depends on nothing outside src/domain.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/api/**/*.ts'],
    rules: {
      ...noNodeGlobals,
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: nodeBuiltins, message: 'src/api is shared with the sandboxed renderer: no node built-ins.' },
            { group: [...electron, ...uiPackages, ...serverPackages], message: 'src/api imports zod only.' },
            {
              group: ['**/services/**', '**/cli/**', '**/main/**', '**/renderer/**'],
              message: 'src/api imports src/domain only.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/cli/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/renderer/**', '**/main/**', ...uiPackages, ...electron],
              message: 'services and cli do not depend on the UI or Electron.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/services/**/*.{ts,mjs}'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/renderer/**', '**/main/**', ...uiPackages, ...electron],
              message: 'services and cli do not depend on the UI or Electron.',
            },
            { group: ['**/cli/**'], message: 'src/services does not depend on src/cli: the cli uses the services.' },
          ],
        },
      ],
    },
  },
  {
    files: ['main/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/renderer/**', ...uiPackages], message: 'main talks to the renderer over IPC only.' },
            { group: ['**/cli/**'], message: 'main uses src/services, not the cli.' },
          ],
        },
      ],
    },
  },
  {
    files: ['renderer/**/*.{ts,tsx}'],
    rules: {
      ...noNodeGlobals,
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: nodeBuiltins, message: 'The renderer runs sandboxed: no node built-ins.' },
            { group: [...electron, ...serverPackages], message: 'The renderer runs sandboxed: no Node packages.' },
            {
              group: ['**/src/services/**', '**/src/cli/**', '**/main/**'],
              message: 'The renderer imports src/domain and the API contract only.',
            },
          ],
        },
      ],
    },
  },
);
