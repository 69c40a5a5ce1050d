/**
 * The model catalogue in Chromium with a WebGPU adapter (SwiftShader, on the CPU: no
 * `shader-f16`) and no model weights on the device.
 */
import { expect } from '@playwright/test';
import { hostStatus, KEY } from './helpers';
import { sharedAppTest } from './warm-context';

interface CatalogModel {
  id: string;
  available: boolean;
  unavailable_reason?: string;
  downloaded: boolean;
  loaded: boolean;
  required_features: string[];
}

/** The tests only read the catalogue and the status: one page of the app serves them all. */
const test = sharedAppTest();

test('lists WebLLM’s chat models: f16 ones unavailable for want of shader-f16, f32 ones available', async ({
  page,
}) => {
  const catalog = await page.evaluate(async (KEY) => {
    const response = await fetch('v1/hearth/catalog', { headers: KEY });
    return (await response.json()) as { object: string; data: CatalogModel[] };
  }, KEY);
  expect(catalog.object).toBe('list');
  const byId = new Map(catalog.data.map((m) => [m.id, m]));
  expect(byId.get('hearth/echo')).toMatchObject({ available: true, downloaded: true });
  expect(byId.get('mlc-ai/SmolLM2-360M-Instruct-q4f32_1-MLC')).toMatchObject({
    available: true,
    downloaded: false,
    loaded: false,
  });
  const f16 = byId.get('mlc-ai/SmolLM2-360M-Instruct-q4f16_1-MLC')!;
  expect(f16.available).toBe(false);
  expect(f16.unavailable_reason).toMatch(/shader-f16/);
  const webllm = catalog.data.filter((m) => m.id.startsWith('mlc-ai/'));
  expect(webllm.length).toBeGreaterThan(100);
  for (const model of webllm) {
    expect(model.available).toBe(!model.required_features.includes('shader-f16'));
  }
});

test('lists at /v1/openai/models only what can answer now: the echo engine, with nothing downloaded', async ({
  page,
}) => {
  const ids = await page.evaluate(async (KEY) => {
    const response = await fetch('v1/openai/models', { headers: KEY });
    return ((await response.json()) as { data: { id: string }[] }).data.map((m) => m.id);
  }, KEY);
  expect(ids).toEqual(['hearth/echo']);
  // …but any catalogue model can be looked up.
  const one = await page.evaluate(async (KEY) => {
    const response = await fetch('v1/openai/models/mlc-ai%2FQwen3-0.6B-q4f32_1-MLC', {
      headers: KEY,
    });
    return { status: response.status, body: await response.json() };
  }, KEY);
  expect(one).toMatchObject({
    status: 200,
    body: { id: 'mlc-ai/Qwen3-0.6B-q4f32_1-MLC', owned_by: 'mlc-ai' },
  });
});

test('answers a model that is not on the device with 404 model_not_downloaded, and one this GPU cannot run with 503', async ({
  page,
}) => {
  const results = await page.evaluate(async (KEY) => {
    const ask = async (model: string) => {
      const response = await fetch('v1/openai/chat/completions', {
        method: 'POST',
        headers: KEY,
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
      });
      return {
        status: response.status,
        retry: response.headers.get('x-should-retry'),
        error: (await response.json()).error,
      };
    };
    return {
      notDownloaded: await ask('mlc-ai/SmolLM2-360M-Instruct-q4f32_1-MLC'),
      needsF16: await ask('mlc-ai/SmolLM2-360M-Instruct-q4f16_1-MLC'),
    };
  }, KEY);
  expect(results.notDownloaded).toMatchObject({
    status: 404,
    error: { code: 'model_not_downloaded', param: 'model' },
  });
  expect(results.needsF16).toMatchObject({
    status: 503,
    retry: 'false',
    error: { code: 'webgpu_unavailable' },
  });
});

test('reports the WebGPU adapter and the storage in the status', async ({ page }) => {
  const status = (await page.evaluate(async (KEY) => {
    const response = await fetch('v1/hearth/status', { headers: KEY });
    return response.json();
  }, KEY)) as Record<string, unknown>;
  expect(status).toMatchObject({
    // Measured in the engine worker, with the adapter WebLLM asks for.
    webgpu: {
      available: true,
      adapter: { architecture: 'swiftshader', fallback: true },
      limits: {
        maxBufferSize: expect.any(Number),
        maxStorageBufferBindingSize: expect.any(Number),
        maxComputeWorkgroupStorageSize: expect.any(Number),
        maxStorageBuffersPerShaderStage: expect.any(Number),
        maxComputeInvocationsPerWorkgroup: expect.any(Number),
      },
    },
    storage: {
      usage_bytes: expect.any(Number),
      quota_bytes: expect.any(Number),
      persisted: expect.any(Boolean),
    },
  });
  expect((status.webgpu as { features: string[] }).features).not.toContain('shader-f16');
  expect(status).not.toHaveProperty('device');
  expect((await hostStatus(page)).queue).toEqual({ running: 0, waiting: 0 });
});
