// `npm test`: the browsers found (or installed), then two lanes side by side (lanes.mjs): in one,
// Chromium's main browser suites; in the other, the type checks, lint and format check, then
// Firefox's browser suites and Chromium's small projects. Then each lane, once free, takes the
// next step of the tail (the fuzz suite's browser run, the unit tests in two runs), so that the
// lanes end together on a machine slower at browsers or at Node alike. The browser suites spend
// much of their time waiting (a stall limit, a held download, a host tab going), which the other
// lane fills: docs/development.md#suite-time.
import { spawnSync } from 'node:child_process';
import { browserRun, runLanes } from './lanes.mjs';

const found = spawnSync('node', ['scripts/browsers.mjs', '--install'], { stdio: 'inherit' });
if (found.status !== 0) process.exit(found.status ?? 1);

const npx = (/** @type {string} */ name, /** @type {string[]} */ command) => ({
  name,
  command: ['npx', ...command],
});
/** TypeScript 7's checker (package.json's `typescript-7`): its `tsc` shares the name with 5.9's. */
const tsc = (/** @type {string} */ name, /** @type {string} */ project) => ({
  name,
  command: ['node', 'node_modules/typescript-7/bin/tsc', '-p', project, '--noEmit'],
});
/** The Markdown depth tests: half the unit tests' time, in one file (a run of their own). */
const MARKDOWN_DEPTH = 'tests/unit/app/chat/markdown/markdown-depth.test.ts';
await runLanes(
  [
    [browserRun(['root'])],
    [
      tsc('types: the app', 'tsconfig.json'),
      tsc('types: the service worker', 'sw/tsconfig.json'),
      npx('lint', ['eslint', '.']),
      npx('format', ['prettier', '--check', '.']),
      browserRun(['firefox', 'firefox-no-jspi', 'no-webgpu', 'subpath', 'isolation']),
    ],
  ],
  {
    // Whichever lane is free first takes the next; the longest first. The fuzz suite in a run of
    // its own costs its lane about 8 s more than inside Chromium's main run (Playwright, a
    // browser, the app's first install); the unit tests in two runs, about 2 s more than in one.
    tail: [
      browserRun(['root'], { files: ['fuzz'] }),
      npx('unit tests', ['vitest', 'run', '--exclude', MARKDOWN_DEPTH]),
      npx('unit tests: Markdown depth', ['vitest', 'run', MARKDOWN_DEPTH]),
    ],
  },
);
