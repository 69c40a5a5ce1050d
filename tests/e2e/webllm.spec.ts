/**
 * The real WebLLM library in the engine worker, in Chromium with SwiftShader and no network: as
 * far as CI can take it. (tests/real-model/ goes further where a GPU and the weights exist.)
 */
import { expect, test } from '@playwright/test';
import { ask, hostStatus, KEY, openApp } from './helpers';

test('loading a model whose files cannot be fetched fails with a clear error, and leaves the engine serving', async ({
  page,
}) => {
  await openApp(page);
  const result = await page.evaluate(async (KEY) => {
    const response = await fetch(
      'v1/hearth/models/mlc-ai%2FSmolLM2-360M-Instruct-q4f32_1-MLC/load',
      {
        method: 'POST',
        headers: KEY,
      },
    );
    return { status: response.status, body: await response.json() };
  }, KEY);
  expect(result.status).toBe(500);
  expect(result.body.error).toMatchObject({ code: 'engine_error', type: 'server_error' });
  expect(result.body.error.message).toMatch(
    /^Loading mlc-ai\/SmolLM2-360M-Instruct-q4f32_1-MLC failed: /,
  );
  // The library itself ran: it was loaded into the engine worker on demand.
  expect(page.workers().length).toBe(1);
  const status = await hostStatus(page);
  expect(status).toMatchObject({
    loaded_model: null,
    queue: { running: 0, waiting: 0 },
    open_ports: 0,
  });
  expect(await ask(page, 'still answering')).toEqual({ status: 200, content: 'still answering' });
});

test('a model this GPU cannot run is refused before the library is asked', async ({ page }) => {
  await openApp(page);
  const result = await page.evaluate(async (KEY) => {
    const response = await fetch(
      'v1/hearth/models/mlc-ai%2FSmolLM2-360M-Instruct-q4f16_1-MLC/load',
      {
        method: 'POST',
        headers: KEY,
      },
    );
    return {
      status: response.status,
      retry: response.headers.get('x-should-retry'),
      body: await response.json(),
    };
  }, KEY);
  expect(result).toMatchObject({
    status: 503,
    retry: 'false',
    body: { error: { code: 'webgpu_unavailable' } },
  });
});
