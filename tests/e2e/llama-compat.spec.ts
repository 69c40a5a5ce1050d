/**
 * llama.cpp's compatibility build, chosen by feature detection: this suite runs in a Firefox with
 * JSPI turned off (`javascript.options.wasm_js_promise_integration`, the project `firefox-no-jspi`),
 * as older Firefox releases and Safari are, where wllama's default build cannot start. The app
 * serves the build itself, the service worker caches it at install, and the fixture GGUF answers
 * exactly as it does on the default build.
 */
import { expect, test } from '@playwright/test';
import { LLAMA_COMPAT_DIR } from '../../src/models/llama-compat';
import { llamaCompatCache } from '../../sw/llama-compat';
import { askFixture, downloadFixture, FIXTURE_ID, FIXTURE_SENTENCE } from './fixture-model';
import { hostStatus, openApp } from './helpers';
import { ModelServer } from './model-server';

const server = new ModelServer();
test.beforeAll(() => server.start());
test.afterAll(() => server.stop());

test('without JSPI the service worker caches the compatibility build, and the fixture answers exactly on it', async ({
  page,
}) => {
  await openApp(page);
  expect(await page.evaluate(() => 'Suspending' in WebAssembly)).toBe(false);
  const cached = await page.evaluate(async (name) => {
    const cache = await caches.open(name);
    return (await cache.keys()).map((r) => new URL(r.url).pathname).sort();
  }, llamaCompatCache());
  expect(cached).toEqual([
    `/hearth/${LLAMA_COMPAT_DIR}wllama.js`,
    `/hearth/${LLAMA_COMPAT_DIR}wllama.wasm`,
  ]);

  await downloadFixture(page);
  expect(await askFixture(page, { temperature: 0 })).toMatchObject({
    status: 200,
    content: FIXTURE_SENTENCE,
    finish_reason: 'stop',
  });
  const status = (await hostStatus(page)) as { loaded_model: string | null; llama?: unknown };
  expect(status.loaded_model).toBe(FIXTURE_ID);
  expect(status.llama).toMatchObject({ backend: 'cpu', build: 'compat' });
});
