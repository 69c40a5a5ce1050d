/**
 * `npm run test:real-model`: a real model through the API, on a real GPU. Not part of `npm test`:
 * it needs a GPU, and the model's files (from the network, or HEARTH_MODEL_DIR).
 */
import { defineConfig } from '@playwright/test';
import { browserHelp, CHROMIUM_ARGS, findChromium } from '../../scripts/browsers.mjs';

const executablePath = await findChromium();
if (!executablePath) throw new Error(browserHelp('chromium'));

const PORT = Number(process.env.REAL_MODEL_PORT ?? 4181);
/** Extra Chromium flags a GPU may need, e.g. `--enable-features=Vulkan --use-angle=vulkan` on Linux. */
const extra = (process.env.HEARTH_CHROMIUM_ARGS ?? '').split(/\s+/).filter(Boolean);

export default defineConfig({
  testDir: '.',
  testMatch: /real-(model|gguf)\.spec\.ts$/,
  // The first load downloads the model: minutes on a slow line.
  timeout: 20 * 60_000,
  expect: { timeout: 30_000 },
  workers: 1,
  reporter: [['list']],
  globalSetup: '../e2e/global-setup.ts',
  use: {
    baseURL: `http://127.0.0.1:${PORT}/`,
    browserName: 'chromium',
    headless: process.env.HEARTH_HEADED !== '1',
    launchOptions: { executablePath, args: [...CHROMIUM_ARGS, '--enable-unsafe-webgpu', ...extra] },
  },
  webServer: {
    command: 'node tests/real-model/serve.mjs',
    cwd: '../..',
    env: { PORT: String(PORT) },
    url: `http://127.0.0.1:${PORT}/`,
    reuseExistingServer: false,
    timeout: 180_000,
  },
});
