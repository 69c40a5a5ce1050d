/**
 * The model catalogue in Chromium with a WebGPU adapter (SwiftShader, on the CPU: no
 * `shader-f16`) and no model weights on the device.
 */
import { expect } from '@playwright/test';
import type { CatalogModel as FittedModel } from '../../src/models/catalog';
import { recommendModel } from '../../src/models/recommend';
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
});

test('looks up at /v1/openai/models/{id} exactly what the list lists: a catalogue model not downloaded, or one this GPU cannot run, is 404 saying why and how', async ({
  page,
}) => {
  const look = (ids: string[]) =>
    page.evaluate(
      async ({ ids, KEY }) => {
        const answers = [];
        for (const id of ids) {
          // As the openai SDK's `models.retrieve` sends it: the slash encoded.
          const response = await fetch(`v1/openai/models/${encodeURIComponent(id)}`, {
            headers: KEY,
          });
          answers.push({ status: response.status, body: await response.json() });
        }
        return answers;
      },
      { ids, KEY },
    );
  const qwen = 'mlc-ai/Qwen3-0.6B-q4f32_1-MLC';
  const [echo, missing, f16] = await look([
    'hearth/echo',
    qwen,
    'mlc-ai/SmolLM2-360M-Instruct-q4f16_1-MLC',
  ]);
  expect(echo).toMatchObject({ status: 200, body: { id: 'hearth/echo' } });
  expect(missing).toMatchObject({
    status: 404,
    body: { error: { code: 'model_not_found', type: 'not_found_error', param: 'model' } },
  });
  expect(missing!.body.error.message).toBe(
    `The model '${qwen}' is in Hearth's catalogue but not on this device; download it first: hearth.models.prepare('${qwen}') in a page of the site, or POST /v1/hearth/models/${qwen}/download from one (not through the relay). GET /v1/openai/models lists the models ready on this device; the whole catalogue is at GET /v1/hearth/catalog, in a page of the site.`,
  );
  expect(f16).toMatchObject({ status: 404, body: { error: { code: 'model_not_found' } } });
  expect(f16!.body.error.message).toMatch(/cannot answer here: This GPU lacks shader-f16/);
});

test('answers an unknown model id with the catalogue route and, for a bare MLC name, the id it meant; an OpenAI id is not aliased', async ({
  page,
}) => {
  const errors = await page.evaluate(async (KEY) => {
    const ask = async (model: string) => {
      const response = await fetch('v1/openai/chat/completions', {
        method: 'POST',
        headers: KEY,
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
      });
      return { status: response.status, ...(await response.json()).error };
    };
    return {
      bare: await ask('Qwen3-0.6B-q4f32_1-MLC'),
      openai: await ask('gpt-4o-mini'),
    };
  }, KEY);
  expect(errors.bare).toMatchObject({ status: 404, code: 'model_not_found', param: 'model' });
  expect(errors.bare.message).toBe(
    "The model 'Qwen3-0.6B-q4f32_1-MLC' does not exist. Did you mean 'mlc-ai/Qwen3-0.6B-q4f32_1-MLC'? GET /v1/openai/models lists the models ready on this device; the whole catalogue is at GET /v1/hearth/catalog, in a page of the site.",
  );
  expect(errors.openai).toMatchObject({ status: 404, code: 'model_not_found' });
  expect(errors.openai.message).toContain(
    "The model 'gpt-4o-mini' does not exist here: it is one of OpenAI's, and Hearth serves models that run on this device",
  );
  expect(errors.openai.message).toContain('GET /v1/hearth/catalog');
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
  // It says how to download it: from a page, or with the download route.
  const smol = 'mlc-ai/SmolLM2-360M-Instruct-q4f32_1-MLC';
  expect(results.notDownloaded.error.message).toBe(
    `The model '${smol}' is not on this device; download it first: hearth.models.prepare('${smol}') in a page of the site, or POST /v1/hearth/models/${smol}/download from one (not through the relay).`,
  );
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

test('judges the fit on this device once the host measured it: on two cores and a software adapter, nothing of billions of parameters and no WebLLM model is good, and the recommendation is a small GGUF', async ({
  page,
}) => {
  const read = () =>
    page.evaluate(async (KEY) => {
      const get = async (path: string) => (await fetch(path, { headers: KEY })).json();
      return {
        catalog: ((await get('v1/hearth/catalog')) as { data: FittedModel[] }).data,
        status: (await get('v1/hearth/status')) as {
          cpu: { cores: number; threads: number; bytes_per_second: number } | null;
          webgpu: { adapter: { fallback: boolean } | null };
        },
      };
    }, KEY);
  // The host measures the processor as it starts (before it takes requests, or just after).
  await expect
    .poll(async () => (await read()).catalog.filter((m) => m.fit === null).map((m) => m.id), {
      timeout: 10_000,
    })
    .toEqual([]);
  const { catalog, status } = await read();
  test.skip(
    status.cpu === null || status.cpu.threads > 2 || status.webgpu.adapter?.fallback !== true,
    'the test is of two threads for llama.cpp and a software adapter, as CI and this machine have',
  );
  expect(status.cpu).toMatchObject({
    cores: await page.evaluate(() => navigator.hardwareConcurrency),
    threads: expect.any(Number),
    bytes_per_second: expect.any(Number),
  });
  expect(status.cpu!.bytes_per_second).toBeGreaterThan(0);
  for (const m of catalog) expect(m.available === false).toBe(m.fit === 'no');
  const good = catalog.filter((m) => m.fit === 'good');
  // Billions of parameters: the id says so (`-4B-`), or its file is over a GB (Phi-3.5 mini).
  const billions = (m: FittedModel) =>
    Number(/[-_](\d+(?:\.\d+)?)B[-_:]/i.exec(m.id)?.[1] ?? 0) >= 1 || (m.size_mb ?? 0) >= 1000;
  expect(catalog.filter(billions).length).toBeGreaterThan(0);
  expect(good.filter(billions).map((m) => m.id)).toEqual([]);
  expect(catalog.some((m) => m.engine === 'webllm')).toBe(true);
  expect(good.filter((m) => m.engine === 'webllm').map((m) => m.id)).toEqual([]);
  const pick = recommendModel(catalog);
  expect(pick).toMatchObject({ engine: 'llama.cpp', source: 'curated' });
  expect(['good', 'slow']).toContain(pick!.fit);
  expect(pick!.size_mb).toBeLessThan(1000);
});
