// `npm test`: the browsers found (or installed), then two lanes side by side: Chromium's main
// browser suites in one; the type check, lint, format check and unit tests, then Firefox's browser
// suites and Chromium's small projects, in the other (lanes.mjs says why). The browser suites
// spend much of their time waiting (a stall limit, a held download, a host tab going), which the
// other lane fills: docs/development.md#suite-time.
import { spawnSync } from 'node:child_process';
import { CHROMIUM_LANE, FIREFOX_LANE, playwrightStep, runLanes } from './lanes.mjs';

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
await runLanes([
  [playwrightStep(CHROMIUM_LANE)],
  [
    tsc('types: the app', 'tsconfig.json'),
    tsc('types: the service worker', 'sw/tsconfig.json'),
    npx('lint', ['eslint', '.']),
    npx('format', ['prettier', '--check', '.']),
    npx('unit tests', ['vitest', 'run']),
    playwrightStep(FIREFOX_LANE),
  ],
]);
