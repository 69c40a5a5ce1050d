// The app servers the browser suites test, on a run's ports: the e2e build at the root and, for
// the `subpath` project, the same app built for a sub-path. playwright.config.ts makes them its
// `webServer`s; `npm test`'s lanes (lanes.mjs) start them once per lane and keep them for the
// lane's several Playwright runs, which then find them up (`E2E_SERVERS_UP=1`).
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The test build's stall limit (the app's is 60 s): a stall test waits this long. */
export const STALL_MS = 12_000;
/** The build id of the test build, known so that a test can fake an older one. */
export const E2E_BUILD = 'e2e-build';
/** Where the app built for a sub-path lives, as on a GitHub Pages project site. */
export const SUBPATH = '/hearth/';

/**
 * A run's ports, from its environment: the app's (`E2E_PORT`), the model server's
 * (`E2E_MODEL_PORT`) and the sub-path build's (the next port, or the one after when the model
 * server is on the next one). Not 4190 for the model server: the Fetch standard lists it among
 * the "bad ports" (ManageSieve), and Firefox refuses every request to it.
 * @param {NodeJS.ProcessEnv} [env]
 */
export function e2ePorts(env = process.env) {
  const port = Number(env.E2E_PORT ?? 4179);
  const modelPort = Number(env.E2E_MODEL_PORT ?? 4188);
  return { port, modelPort, subpathPort: port + 1 === modelPort ? port + 2 : port + 1 };
}

/**
 * Writes the test build's self-hosted catalogue (tests/e2e/fixtures/models.json) pointed at the
 * model server's port, so that runs on other ports can go on side by side; returns its path.
 * @param {number} modelPort
 */
export function writeModelsFile(modelPort) {
  const file = join(tmpdir(), `hearth-e2e-models-${modelPort}.json`);
  const models = readFileSync(new URL('../../tests/e2e/fixtures/models.json', import.meta.url));
  writeFileSync(
    file,
    models.toString('utf8').replaceAll('localhost:4188', `localhost:${modelPort}`),
  );
  return file;
}

/**
 * @typedef {object} Server
 * @property {string} command
 * @property {Record<string, string>} env added to the environment
 * @property {string} url answers once the server is up
 */

/**
 * The app built and served on `port` by `npm start`'s script, under `base`, with `env` added;
 * files are sent as they are (vite preview gzips every response again: 6 MB of WebLLM at each
 * first visit).
 * @param {number} port
 * @param {string} base
 * @param {Record<string, string>} env
 * @returns {Server}
 */
function appServer(port, base, env) {
  return {
    command: 'node scripts/start.mjs',
    env: {
      PORT: String(port),
      HEARTH_OUT_DIR: `dist-e2e-${port}`,
      HEARTH_PREVIEW_UNCOMPRESSED: '1',
      ...env,
    },
    url: `http://127.0.0.1:${port}${base}`,
  };
}

/**
 * The app's servers for a run on `env`'s ports: the root build, and the sub-path build unless
 * `E2E_SUBPATH=0` (a run without the `subpath` project).
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {Server[]}
 */
export function e2eServers(env = process.env) {
  const { port, modelPort, subpathPort } = e2ePorts(env);
  const app = appServer(port, '/', {
    HEARTH_BUILD: E2E_BUILD,
    HEARTH_MODELS_FILE: writeModelsFile(modelPort),
    // GGUFs stored in parts of 256 KiB, not 32 MiB: the fixtures have several (gguf-parts.ts).
    VITE_HEARTH_GGUF_PART_BYTES: String(256 * 1024),
    // A stream without a token for 12 s, not 60, ends with engine_stalled (faults.spec.ts); no
    // test's echo engine pauses that long between tokens (the longest pause is 10 s).
    VITE_HEARTH_STALL_MS: String(STALL_MS),
    // `hf:` ids are looked up on the model server's Hub (tests/e2e/model-server.ts).
    VITE_HEARTH_HUB_URL: `http://localhost:${modelPort}/hub`,
  });
  if (env.E2E_SUBPATH === '0') return [app];
  return [app, appServer(subpathPort, SUBPATH, { HEARTH_BASE: SUBPATH })];
}
