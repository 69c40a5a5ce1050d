import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from '@playwright/test';
import { browserHelp, CHROMIUM_ARGS, findBrowser } from './scripts/browsers.mjs';

const chromium = await findBrowser('chromium');
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
  /\/(wire|sdk|hosts|first-visit|faults|relay|ui-chat|ui-chat-options|ui-images|ui-keyboard|ui-servers|ui-download-offline|offline|llama|llama-vision|gguf-downloads|fixture-gguf|embeddings|sdk-embeddings|servers-clients|site|site-relay|newcomer)\.spec\.ts$/;

/** Ports of their own, so that the tests never talk to an app left running by `npm start`. */
const PORT = Number(process.env.E2E_PORT ?? 4179);
const SUBPATH = '/hearth/';
/**
 * Where tests/e2e/model-server.ts serves the test build's self-hosted models. Not 4190: the Fetch
 * standard lists it among the "bad ports" (ManageSieve), and Firefox refuses every request to it.
 */
const MODEL_PORT = Number(process.env.E2E_MODEL_PORT ?? 4188);
/**
 * The same app built for a sub-path, as on a GitHub Pages project site: on the next port, or the
 * one after when the model server was put on the next one.
 */
const SUBPATH_PORT = PORT + 1 === MODEL_PORT ? PORT + 2 : PORT + 1;
/**
 * The test build's self-hosted catalogue (tests/e2e/fixtures/models.json), pointed at the model
 * server's port: runs on other ports can go on side by side.
 */
const MODELS_FILE = join(tmpdir(), `hearth-e2e-models-${MODEL_PORT}.json`);
writeFileSync(
  MODELS_FILE,
  readFileSync(new URL('./tests/e2e/fixtures/models.json', import.meta.url), 'utf8').replaceAll(
    'localhost:4188',
    `localhost:${MODEL_PORT}`,
  ),
);
/** The test build's stall limit (the app's is 60 s): a stall test waits this long. */
export const STALL_MS = 12_000;
/** The build id of the test build, known so that a test can fake an older one. */
export const E2E_BUILD = 'e2e-build';

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

/** The sub-path build's server (scripts/suite/e2e.mjs drops it from runs without its project). */
const SUBPATH_SERVER = {
  command: 'node scripts/start.mjs',
  env: {
    PORT: String(SUBPATH_PORT),
    HEARTH_BASE: SUBPATH,
    HEARTH_OUT_DIR: `dist-e2e-${SUBPATH_PORT}`,
    HEARTH_PREVIEW_UNCOMPRESSED: '1',
  },
  url: `http://127.0.0.1:${SUBPATH_PORT}${SUBPATH}`,
  reuseExistingServer: false,
  timeout: 120_000,
  stdout: 'ignore' as const,
};

export default defineConfig({
  testDir: 'tests/e2e',
  timeout: 60_000,
  expect: { timeout: 10_000 },
  fullyParallel: false,
  workers: 1,
  retries: 0,
  // The JSON report says where the suite's time goes (scripts/suite/suite-times.mjs reads it).
  reporter: [['list'], ['json', { outputFile: `test-results/report-${PORT}.json` }]],
  // Builds, servers and results apart per port: runs on other ports can go on side by side.
  outputDir: `test-results/${PORT}`,
  globalSetup: './tests/e2e/global-setup.ts',
  use: {
    browserName: 'chromium',
    headless: true,
    launchOptions: { executablePath, args: chromiumArgs },
  },
  projects: [
    {
      name: 'root',
      testIgnore: /(subpath|no-webgpu|first-run|llama-compat|isolation)\.spec\.ts$/,
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
  webServer: [
    {
      command: 'node scripts/start.mjs',
      env: {
        PORT: String(PORT),
        HEARTH_BUILD: E2E_BUILD,
        HEARTH_OUT_DIR: `dist-e2e-${PORT}`,
        HEARTH_MODELS_FILE: MODELS_FILE,
        HEARTH_PREVIEW_UNCOMPRESSED: '1',
        // GGUFs stored in parts of 256 KiB, not 32 MiB: the fixtures have several (gguf-parts.ts).
        VITE_HEARTH_GGUF_PART_BYTES: String(256 * 1024),
        // A stream without a token for 12 s, not 60, ends with engine_stalled (faults.spec.ts);
        // no test's echo engine pauses that long between tokens (the longest pause is 10 s).
        VITE_HEARTH_STALL_MS: String(STALL_MS),
        // `hf:` ids are looked up on the model server's Hub (tests/e2e/model-server.ts).
        VITE_HEARTH_HUB_URL: `http://localhost:${MODEL_PORT}/hub`,
      },
      url: `http://127.0.0.1:${PORT}/`,
      // A server left over from another run could serve a stale build.
      reuseExistingServer: false,
      timeout: 120_000,
      stdout: 'ignore',
    },
    ...(process.env.E2E_SUBPATH === '0' ? [] : [SUBPATH_SERVER]),
  ],
});
