// Lint rules, above all the dependency directions of docs/architecture.md's code map.
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
].map((name) => ({
  name,
  message:
    'src/protocol, src/models, src/servers, src/api and src/bridge are pure: pass what they need in.',
}));

/** What the chat app may not import: it talks to the engine only over HTTP (docs/architecture.md). */
const APP_IMPORTS = {
  paths: [{ name: '@mlc-ai/web-llm', message: 'The UI talks to the engine only over HTTP.' }],
  patterns: [
    {
      group: ['**/engine-host/**', '**/engines/**', '**/bridge/**'],
      message: 'The UI talks to the engine only over HTTP (docs/architecture.md).',
    },
  ],
};
/**
 * The API's route table, which the relay shares with the API and ships as it is
 * (relay/protocol.js `API_ROUTES`): a leaf of plain JavaScript that imports nothing.
 */
const RELAY_ROUTES = '(\\.\\./)+relay/protocol\\.js$';

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
      // Only one file may import WebLLM (docs/architecture.md).
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: '@mlc-ai/web-llm',
              message: 'Only src/engines/webllm/webllm-engine.ts imports WebLLM.',
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
      'src/engines/webllm/webllm-engine.ts',
      'scripts/catalog-plugin.ts',
      'tests/**',
      'bench/**',
    ],
    rules: { 'no-restricted-imports': 'off' },
  },
  // The API's four folders, pure, in one direction (no cycle between them): protocol ← models ←
  // api, protocol ← servers ← api. Inside protocol and models, the subfolder imports its parent,
  // never the other way round.
  {
    files: ['src/protocol/*.ts'],
    rules: {
      ...onlyImports(
        ['\\./(?!host/)', 'valibot$'],
        'src/protocol imports nothing of ours outside itself, nor its host/ subfolder (docs/architecture.md).',
      ),
      'no-restricted-globals': ['error', ...RUNTIME_GLOBALS],
    },
  },
  {
    files: ['src/protocol/host/**'],
    rules: {
      ...onlyImports(
        ['\\./', '\\.\\./[a-z-]+$', 'valibot$'],
        'src/protocol/host imports only itself and src/protocol (docs/architecture.md).',
      ),
      'no-restricted-globals': ['error', ...RUNTIME_GLOBALS],
    },
  },
  {
    files: ['src/models/*.ts'],
    rules: {
      ...onlyImports(
        ['\\./(?!added/)', '\\.\\./protocol/', 'valibot$'],
        'src/models imports only itself and src/protocol, not its added/ subfolder (docs/architecture.md).',
      ),
      'no-restricted-globals': ['error', ...RUNTIME_GLOBALS],
    },
  },
  {
    files: ['src/models/added/**'],
    rules: {
      ...onlyImports(
        ['\\./', '\\.\\./[a-z-]+$', '\\.\\./\\.\\./protocol/', 'valibot$'],
        'src/models/added imports only itself, src/models and src/protocol (docs/architecture.md).',
      ),
      'no-restricted-globals': ['error', ...RUNTIME_GLOBALS],
    },
  },
  {
    files: ['src/documents/**'],
    rules: {
      ...onlyImports(
        ['\\./', '\\.\\./protocol/', 'valibot$', 'minisearch$', 'htmlparser2$'],
        'src/documents imports only itself, src/protocol, minisearch and htmlparser2 (docs/architecture.md).',
      ),
      'no-restricted-globals': ['error', ...RUNTIME_GLOBALS],
    },
  },
  {
    files: ['src/servers/**'],
    rules: {
      ...onlyImports(
        ['\\./', '\\.\\./protocol/', 'valibot$', RELAY_ROUTES],
        'src/servers imports only itself, src/protocol and the route table (docs/architecture.md).',
      ),
      'no-restricted-globals': ['error', ...RUNTIME_GLOBALS],
    },
  },
  {
    files: ['src/api/**'],
    rules: {
      ...onlyImports(
        [
          '\\./',
          '\\.\\./(protocol|models|servers|documents)/',
          'valibot$',
          'image-size/types/',
          RELAY_ROUTES,
        ],
        'src/api imports only itself, src/protocol, src/models, src/servers, src/documents and the route table (docs/architecture.md), and image-size’s header readers.',
      ),
      'no-restricted-globals': ['error', ...RUNTIME_GLOBALS],
    },
  },
  // A folder of the API's (src/api/responses): the same rules, one level down.
  {
    files: ['src/api/*/**'],
    rules: {
      ...onlyImports(
        [
          '\\./',
          '\\.\\./[a-z-]+(/[a-z-]+)?$',
          '\\.\\./\\.\\./(protocol|models|servers|documents)/',
          'valibot$',
        ],
        'src/api imports only itself, src/protocol, src/models, src/servers, src/documents and the route table (docs/architecture.md).',
      ),
      'no-restricted-globals': ['error', ...RUNTIME_GLOBALS],
    },
  },
  // The engines: one folder each behind src/engines/engine.ts. They import the API's folders, not
  // the engine host that runs them; the one exception is the WebLLM engine's device losses, kept
  // in the engine worker's IndexedDB (src/engine-host/device-losses.ts).
  {
    files: ['src/engines/*.ts'],
    rules: onlyImports(
      ['\\./(?!(echo|webllm|llama)/)', '\\.\\./(protocol|models|api)/'],
      'src/engines imports only itself (not one engine), src/protocol, src/models and src/api (docs/architecture.md).',
    ),
  },
  {
    files: ['src/engines/*/**'],
    rules: onlyImports(
      [
        '\\./',
        '\\.\\./[a-z-]+$',
        '\\.\\./\\.\\./(protocol|models|api)/',
        '\\.\\./\\.\\./engine-host/device-losses$',
        '@wllama/',
      ],
      'An engine imports only its folder, src/engines, src/protocol, src/models and src/api (docs/architecture.md).',
    ),
  },
  {
    files: ['src/engines/webllm/webllm-engine.ts'],
    rules: onlyImports(
      [
        '\\./',
        '\\.\\./[a-z-]+$',
        '\\.\\./\\.\\./(protocol|models|api)/',
        '\\.\\./\\.\\./engine-host/device-losses$',
        '@mlc-ai/web-llm$',
      ],
      'The WebLLM engine imports only WebLLM, its folder, src/engines, src/protocol, src/models and src/api.',
    ),
  },
  {
    files: ['src/bridge/**'],
    rules: {
      ...onlyImports(
        ['\\./', '\\.\\./protocol/'],
        'src/bridge imports only src/protocol (docs/architecture.md).',
      ),
      'no-restricted-globals': ['error', ...RUNTIME_GLOBALS],
    },
  },
  {
    files: ['sw/**'],
    rules: onlyImports(
      // idb: the owner's settings live in the service worker's IndexedDB.
      [
        '\\./',
        '(\\.\\./)+src/(protocol|models|servers|api|documents)/',
        '(\\.\\./)+src/bridge/',
        'workbox-',
        'idb$',
        'virtual:hearth-catalog$',
      ],
      'The service worker imports only src/protocol, src/models, src/servers, src/api, src/documents, src/bridge, Workbox and idb (docs/architecture.md).',
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
    // `hearth-llm/vite` runs in Node from the installed package as tsc compiles it (no bundle),
    // in sites that may have no Vite but the one that calls it: Node's modules, and Vite's types.
    files: ['src/vite-plugin/**'],
    rules: onlyImports(
      ['node:', 'vite$'],
      'src/vite-plugin imports only Node and (for types) Vite: it runs from the package unbundled.',
    ),
  },
  {
    files: ['src/app/**'],
    rules: { 'no-restricted-imports': ['error', APP_IMPORTS] },
  },
  {
    // The shell's state and work serve <hearth-app> alone: the areas know nothing of the shell.
    files: ['src/app/**'],
    ignores: ['src/app/hearth-app.ts', 'src/app/shell/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          ...APP_IMPORTS,
          patterns: [
            ...APP_IMPORTS.patterns,
            {
              group: ['**/shell/**'],
              message: 'Only src/app/hearth-app.ts imports the shell (src/app/shell/).',
            },
          ],
        },
      ],
    },
  },
);
