// Lint rules, above all the dependency directions of DESIGN §2.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** Globals that tie code to one runtime; the protocol layers use none of them. */
const RUNTIME_GLOBALS = [
  'self',
  'window',
  'document',
  'navigator',
  'location',
  'caches',
  'clients',
].map((name) => ({ name, message: 'src/openai and src/bridge are pure: pass what they need in.' }));

/** `no-restricted-imports` that allows only the given module specifiers (as regexes). */
function onlyImports(allowed, message) {
  return {
    'no-restricted-imports': [
      'error',
      { patterns: [{ regex: `^(?!(${allowed.join('|')}))`, message }] },
    ],
  };
}

export default tseslint.config(
  {
    ignores: [
      'dist',
      'dist-*',
      'node_modules',
      'test-results',
      'playwright-report',
      'tests/e2e/.cache',
      'bench/results',
      'build',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { ...globals.browser, ...globals.node },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      // Only one file may import WebLLM (DESIGN §2).
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: '@mlc-ai/web-llm',
              message: 'Only src/engine-host/webllm-engine.ts imports WebLLM.',
            },
          ],
        },
      ],
    },
  },
  {
    // WebLLM runs in one file of the engine worker; the catalogue is read from it at build time,
    // and tests and benchmarks use it as a fixture and a baseline.
    files: [
      'src/engine-host/webllm-engine.ts',
      'scripts/catalog-plugin.ts',
      'tests/**',
      'bench/**',
    ],
    rules: { 'no-restricted-imports': 'off' },
  },
  {
    files: ['src/openai/**'],
    rules: {
      ...onlyImports(
        ['\\./', 'valibot$'],
        'src/openai imports nothing of ours outside itself (DESIGN §2).',
      ),
      'no-restricted-globals': ['error', ...RUNTIME_GLOBALS],
    },
  },
  {
    files: ['src/bridge/**'],
    rules: {
      ...onlyImports(['\\./', '\\.\\./openai/'], 'src/bridge imports only src/openai (DESIGN §2).'),
      'no-restricted-globals': ['error', ...RUNTIME_GLOBALS],
    },
  },
  {
    files: ['sw/**'],
    rules: onlyImports(
      // idb: the owner's settings live in the service worker's IndexedDB.
      [
        '\\./',
        '\\.\\./src/openai/',
        '\\.\\./src/bridge/',
        'workbox-',
        'idb$',
        'virtual:hearth-catalog$',
      ],
      'The service worker imports only src/openai, src/bridge, Workbox and idb (DESIGN §2).',
    ),
  },
  {
    // The relay runs in Node as it is (no build): Node's modules, ws, and its own files.
    files: ['relay/**'],
    rules: onlyImports(
      ['\\./', 'node:', 'ws$'],
      'The relay imports only Node, ws and its own modules: it runs without a build.',
    ),
  },
  {
    // hearth-llm's command runs from the installed package as it is, with no dependencies of its
    // own: Node's modules, its own files, and the relay it starts.
    files: ['bin/**'],
    rules: onlyImports(
      ['\\./', '\\.\\./relay/cli\\.js$', 'node:'],
      'bin/ imports only Node, its own modules and the relay: it runs without a build.',
    ),
  },
  {
    files: ['src/ui/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: '@mlc-ai/web-llm', message: 'The UI talks to the engine only over HTTP.' },
          ],
          patterns: [
            {
              group: ['**/engine-host/**', '**/bridge/**'],
              message: 'The UI talks to the engine only over HTTP (DESIGN §2).',
            },
          ],
        },
      ],
    },
  },
);
