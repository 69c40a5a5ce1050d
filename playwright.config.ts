import { defineConfig } from '@playwright/test';
import { browserHelp, CHROMIUM_ARGS, findBrowser } from './scripts/browsers.mjs';
import {
  E2E_BUILD,
  e2ePorts,
  e2eServers,
  STALL_MS,
  SUBPATH,
} from './scripts/suite/e2e-servers.mjs';

// Chromium's headless shell where the system has it: the same engine, about a sixth less CPU.
const chromium = await findBrowser('chromium', { headless: true });
if (!chromium) throw new Error(browserHelp('chromium'));
const executablePath = chromium.path;
const firefox = await findBrowser('firefox');
if (!firefox) throw new Error(browserHelp('firefox'));

/**
 * The suites that run in Firefox too: the API and the SDK, tabs and failover, faults (abort, the
 * queue), the relay, the chat, offline, GGUF models on llama.cpp (downloads, chat, embeddings),
 * and the clients and UI of servers the user adds. A test in them that needs what only Chromium
 * has (CDP) skips itself there with its reason (helpers.ts). Left to Chromium, to keep a fresh
 * clone's CI short (about 15 minutes on two cores, with the browsers in lanes side by side; the
 * aim is 15): the servers contract suite (servers.spec.ts), the conversation list
 * (ui-conversations and its export: the same Lit and IndexedDB code; Firefox keeps conversations
 * across a reload in offline.spec) and adding models (add-model: the service worker's code;
 * Firefox stores and runs GGUFs in gguf-downloads, llama and embeddings).
 */
const FIREFOX_SUITES =
  /\/(wire|sdk|hosts|first-visit|faults|relay|ui-chat|ui-chat-options|ui-images|ui-documents|ui-keyboard|ui-servers|ui-download-offline|offline|llama|llama-vision|gguf-downloads|fixture-gguf|embeddings|sdk-embeddings|servers-clients|responses|files|documents|site|site-models|site-upgrades|site-relay|newcomer)\.spec\.ts$/;

/**
 * Ports of their own, so that the tests never talk to an app left running by `npm start`; the
 * app's servers on them (scripts/suite/e2e-servers.mjs).
 */
const { port: PORT, subpathPort: SUBPATH_PORT } = e2ePorts();
/**
 * What this run's report and results are named by: its port, and where a lane makes several runs
 * on one port (scripts/suite/lanes.mjs), their number in it (`E2E_RUN`), as Playwright empties
 * its results folder when a run starts.
 */
const RUN = process.env.E2E_RUN ? `${PORT}-${process.env.E2E_RUN}` : String(PORT);
/**
 * Files of `root` and `firefox` this run leaves out (`E2E_LEAVE`, a regular expression): `npm
 * test`'s lanes run them in runs of their own, in whichever lane is free first (lanes.mjs).
 */
const LEFT = process.env.E2E_LEAVE ? [new RegExp(process.env.E2E_LEAVE)] : [];
/** The test build's stall limit and build id, for the tests that need them. */
export { E2E_BUILD, STALL_MS };

/** The shared flags, plus a WebGPU adapter (SwiftShader, on the CPU, where there is no GPU). */
export const chromiumArgs = [...CHROMIUM_ARGS, '--enable-unsafe-webgpu'];

/** Stock Firefox over WebDriver BiDi (Playwright's own Firefox over its own protocol, where that
 * is the one found), with `prefs` set. */
const firefoxUse = (prefs: Record<string, boolean | number> = {}) => ({
  baseURL: `http://127.0.0.1:${PORT}/`,
  browserName: 'firefox' as const,
  ...(firefox.source !== 'playwright' && { channel: 'moz-firefox' }),
  launchOptions: {
    executablePath: firefox.path,
    firefoxUserPrefs: { ...FIREFOX_PREFS, ...prefs },
  },
});
/**
 * No back-forward cache: a page kept there still counts as a client of the service worker, so
 * the warm context's reset (tests/e2e/warm-context.ts) would wait out Firefox's 30 s idle limit
 * before the worker it unregistered let go of IndexedDB.
 */
const FIREFOX_PREFS = { 'browser.sessionhistory.max_total_viewers': 0 };
/** Firefox without JSPI (as before Firefox 153 ESR, and as Safari is). */
const NO_JSPI = { 'javascript.options.wasm_js_promise_integration': false };

export default defineConfig({
  testDir: 'tests/e2e',
  timeout: 60_000,
  expect: { timeout: 10_000 },
  fullyParallel: false,
  workers: 1,
  // One retry: on a loaded two-core machine a test's timing can go wrong once in hundreds of runs
  // without a defect, and CI runs some 520. A test that passes only when retried is named at
  // the end of `npm test` as flaky (scripts/suite/reports.mjs), to be mended, not forgotten.
  retries: 1,
  // The JSON report says where the suite's time goes (scripts/suite/suite-times.mjs reads it).
  reporter: [['list'], ['json', { outputFile: `test-results/report-${RUN}.json` }]],
  // Builds, servers and results apart per port: runs on other ports can go on side by side.
  outputDir: `test-results/${RUN}`,
  globalSetup: './tests/e2e/global-setup.ts',
  use: {
    browserName: 'chromium',
    headless: true,
    launchOptions: { executablePath, args: chromiumArgs },
  },
  projects: [
    {
      name: 'root',
      testIgnore: [/(subpath|no-webgpu|first-run|llama-compat|isolation)\.spec\.ts$/, ...LEFT],
      use: { baseURL: `http://127.0.0.1:${PORT}/` },
    },
    {
      // The root project's isolation suite on its own, so that `npm test` can run it in the other
      // lane and even the lanes out (scripts/suite/lanes.mjs).
      name: 'isolation',
      testMatch: /isolation\.spec\.ts$/,
      use: { baseURL: `http://127.0.0.1:${PORT}/` },
    },
    {
      // The same app in a Chromium with no WebGPU adapter at all.
      name: 'no-webgpu',
      testMatch: /(no-webgpu|first-run)\.spec\.ts$/,
      use: {
        baseURL: `http://127.0.0.1:${PORT}/`,
        launchOptions: { executablePath, args: CHROMIUM_ARGS },
      },
    },
    {
      // Firefox on Linux has no WebGPU: GGUF models run on the CPU there.
      name: 'firefox',
      testMatch: FIREFOX_SUITES,
      testIgnore: LEFT,
      use: firefoxUse(),
    },
    {
      // Without JSPI: llama.cpp's compatibility build, chosen by feature detection.
      name: 'firefox-no-jspi',
      testMatch: /llama-compat\.spec\.ts$/,
      use: firefoxUse(NO_JSPI),
    },
    // `npm run test:stress` only (HEARTH_STRESS=1): long runs that look for rare hangs.
    ...(process.env.HEARTH_STRESS
      ? [
          {
            name: 'stress-firefox',
            testMatch: /\.stress\.ts$/,
            use: firefoxUse(),
          },
          {
            name: 'stress-firefox-no-jspi',
            testMatch: /\.stress\.ts$/,
            use: firefoxUse(NO_JSPI),
          },
          {
            name: 'stress-chromium',
            testMatch: /\.stress\.ts$/,
            use: { baseURL: `http://127.0.0.1:${PORT}/` },
          },
        ]
      : []),
    {
      name: 'subpath',
      testMatch: /subpath\.spec\.ts$/,
      use: { baseURL: `http://127.0.0.1:${SUBPATH_PORT}${SUBPATH}` },
    },
  ],
  // The sub-path build's server only where E2E_SUBPATH is not 0 (lanes.mjs drops it from runs
  // without its project). Where the lane started them (E2E_SERVERS_UP=1), Playwright finds them
  // up; otherwise it starts its own, as a server left over from another run could serve a stale
  // build.
  webServer: e2eServers().map((server) => ({
    ...server,
    reuseExistingServer: process.env.E2E_SERVERS_UP === '1',
    timeout: 120_000,
    stdout: 'ignore' as const,
  })),
});
