// `npm test`: the browsers found (or installed), then two lanes side by side: Chromium's browser
// suites in one; the type check, lint, format check and unit tests, then Firefox's browser
// suites, in the other. The browser suites spend much of their time waiting (a stall limit, a
// held download, a host tab going), which the other lane fills: docs/development.md#suite-time.
import { spawnSync } from 'node:child_process';
import { CHROMIUM_LANE, FIREFOX_LANE, playwrightStep, runLanes } from './lanes.mjs';

const found = spawnSync('node', ['scripts/browsers.mjs', '--install'], { stdio: 'inherit' });
if (found.status !== 0) process.exit(found.status ?? 1);

const npx = (/** @type {string} */ name, /** @type {string[]} */ command) => ({
  name,
  command: ['npx', ...command],
});
await runLanes([
  [playwrightStep(CHROMIUM_LANE)],
  [
    npx('types: the app', ['tsc', '-p', 'tsconfig.json', '--noEmit']),
    npx('types: the service worker', ['tsc', '-p', 'sw/tsconfig.json', '--noEmit']),
    npx('lint', ['eslint', '.']),
    npx('format', ['prettier', '--check', '.']),
    npx('unit tests', ['vitest', 'run']),
    playwrightStep(FIREFOX_LANE),
  ],
]);
