import { describe, expect, it } from 'vitest';
import { catalogEntry, type GpuFacts } from '../../../src/models/catalog';
import { OpenAIError } from '../../../src/protocol/errors';
import { ECHO_MODEL, remoteModelInfo } from '../../../src/models/models';
import type { CacheStorageLike } from '../../../src/models/on-device';
import { memoryServerStore, Servers, type ServerRecord } from '../../../src/servers/servers';
import { DeviceModels, type DeviceModelsOptions } from '../../../sw/models';
import { createApi } from '../../../src/api/router';
import { UpstreamBackend } from '../../../src/servers/upstream';
import { chatRequest, scriptedBackend, ROOMY_LIMITS } from '../helpers';

const f32 = catalogEntry(
  {
    model: 'https://hf.example/m32',
    model_id: 'M-q4f32_1',
    model_lib: 'https://libs.example/m32.wasm',
  },
  { owner: 'mlc-ai', source: 'prebuilt', tools: false },
);
const f16 = catalogEntry(
  {
    model: 'https://hf.example/m16',
    model_id: 'M-q4f16_1',
    model_lib: 'https://libs.example/m16.wasm',
  },
  { owner: 'mlc-ai', source: 'prebuilt', tools: false },
);
/** What the host's engine worker measured: a GPU without shader-f16. */
const GPU: GpuFacts = {
  webgpu: true,
  adapter: {
    vendor: 'v',
    architecture: 'a',
    fallback: false,
    features: [],
    limits: ROOMY_LIMITS,
  },
};
/** The host as the directory sees it (null: no tab hosts the engine). */
type Host =
  | (NonNullable<Awaited<ReturnType<DeviceModelsOptions['host']>>> & { device: GpuFacts | null })
  | null;
/** A host that has loaded nothing, measured `device`. */
const hostWith = (device: GpuFacts | null): Host => ({
  loaded_model: null,
  failing_models: {},
  evicted_models: {},
  device,
});
/** The directory's view of `host`: without one, the device fails as a request would. */
function hostOptions(host: Host): Pick<DeviceModelsOptions, 'host' | 'device'> {
  return {
    host: async () => host,
    device: async () => {
      if (!host) throw new OpenAIError('engine_unavailable', 'No tab hosts the engine.');
      return host.device;
    },
  };
}

/** Caches holding every file of the f32 model. */
function cachesWith(entry: typeof f32): CacheStorageLike {
  const base = `${entry.model_url}/resolve/main/`;
  const files: Record<string, Record<string, unknown>> = {
    'webllm/config': { [`${base}mlc-chat-config.json`]: { tokenizer_files: ['tokenizer.json'] } },
    'webllm/model': {
      [`${base}tensor-cache.json`]: { records: [] },
      [`${base}tokenizer.json`]: {},
    },
    'webllm/wasm': { [entry.model_lib]: '' },
  };
  return {
    open: async (name) => ({
      match: async (url: string) =>
        url in (files[name] ?? {}) ? new Response(JSON.stringify(files[name]![url])) : undefined,
    }),
  };
}

/** The directory of both models, the f32 one downloaded, under `host` (null: no host tab). */
function directory(host: Host = hostWith(GPU)) {
  return new DeviceModels({
    catalog: [f32, f16],
    appUrl: 'https://app.example/',
    caches: cachesWith(f32),
    ...hostOptions(host),
  });
}

describe('DeviceModels', () => {
  it('lists the echo engine and the downloaded models this GPU can run', async () => {
    expect((await directory().list()).map((m) => m.id)).toEqual([ECHO_MODEL.id, f32.id]);
  });

  it('knows every catalogue model, downloaded or not', async () => {
    expect((await directory().find(f16.id))?.id).toBe(f16.id);
    expect(await directory().find('acme/none')).toBeUndefined();
  });

  it('gives a model the price its owner set, and the others none', async () => {
    const models = new DeviceModels({
      catalog: [f32, f16],
      appUrl: 'https://app.example/',
      caches: cachesWith(f32),
      ...hostOptions(hostWith(GPU)),
      price: async (id) => (id === ECHO_MODEL.id ? { prompt: 1e-6, completion: 2e-6 } : undefined),
    });
    expect((await models.find(ECHO_MODEL.id))?.price).toEqual({ prompt: 1e-6, completion: 2e-6 });
    expect((await models.find(f32.id))?.price).toEqual({ prompt: 0, completion: 0 });
  });

  it('refuses an f16 model on a GPU without shader-f16 (503), and a model not on the device (404)', async () => {
    await expect(directory().ensureReady((await directory().find(f16.id))!)).rejects.toMatchObject({
      code: 'webgpu_unavailable',
      status: 503,
    });
    const gpu = { ...GPU, adapter: { ...GPU.adapter!, features: ['shader-f16'] } };
    const withF16 = new DeviceModels({
      catalog: [f16],
      appUrl: 'https://app.example/',
      caches: cachesWith(f32),
      ...hostOptions(hostWith(gpu)),
    });
    const model = (await withF16.find(f16.id))!;
    await expect(withF16.ensureReady(model)).rejects.toMatchObject({
      code: 'model_not_downloaded',
      status: 404,
    });
    await expect(withF16.ensureReady(model, { files: false })).resolves.toBeUndefined();
  });

  it('shows in the catalogue what is loaded, a model marked as failing with why, and one evicted', async () => {
    const catalog = await directory({
      device: GPU,
      loaded_model: f32.id,
      failing_models: { [f32.id]: 'lost the device twice' },
      evicted_models: { [f16.id]: '3 of its files are gone' },
    }).catalog();
    expect(catalog.find((m) => m.id === f16.id)).toMatchObject({
      downloaded: false,
      evicted: '3 of its files are gone',
    });
    expect(catalog.find((m) => m.id === f32.id)).not.toHaveProperty('evicted');
    expect(catalog.find((m) => m.id === f32.id)).toMatchObject({
      loaded: true,
      downloaded: true,
      available: false,
      unavailable_reason: 'lost the device twice',
    });
    expect(catalog[0]).toMatchObject({
      id: ECHO_MODEL.id,
      source: 'built-in',
      available: true,
      downloaded: true,
    });
  });

  it('judges models by the adapter the host measured, though the service worker has no WebGPU', async () => {
    // Firefox offers no WebGPU to service workers; the engine worker has it.
    expect((globalThis as { navigator?: { gpu?: unknown } }).navigator?.gpu).toBeUndefined();
    expect((await directory().list()).map((m) => m.id)).toEqual([ECHO_MODEL.id, f32.id]);
    expect((await directory().catalog()).find((m) => m.id === f32.id)).toMatchObject({
      available: true,
    });
    await expect(
      directory().ensureReady((await directory().find(f32.id))!),
    ).resolves.toBeUndefined();
  });

  it('refuses a model on an adapter with too little workgroup storage, and says which limit', async () => {
    const small = { ...GPU, adapter: { ...GPU.adapter!, limits: { ...GPU.adapter!.limits } } };
    small.adapter.limits.maxComputeWorkgroupStorageSize = 16 << 10;
    const models = directory(hostWith(small));
    await expect(models.ensureReady((await models.find(f32.id))!)).rejects.toMatchObject({
      code: 'webgpu_unavailable',
      status: 503,
      message: expect.stringMatching(/maxComputeWorkgroupStorageSize/),
    });
    expect((await models.catalog()).find((m) => m.id === f32.id)).toMatchObject({
      available: false,
      unavailable_reason: expect.stringMatching(/maxComputeWorkgroupStorageSize/),
    });
    expect((await models.list()).map((m) => m.id)).toEqual([ECHO_MODEL.id]);
  });

  it('says the device is not known yet when no tab hosts the engine, rather than that it has no WebGPU', async () => {
    const catalog = await directory(null).catalog();
    expect(catalog[0]).toMatchObject({ id: ECHO_MODEL.id, available: true });
    for (const model of catalog.slice(1)) {
      expect(model.available).toBeNull();
      expect(model.unavailable_reason).toMatch(/not known yet/i);
      expect(model.unavailable_reason).not.toMatch(/no WebGPU|no usable GPU/);
    }
  });

  it('says the device is not known yet while the host has not measured its GPU', async () => {
    const catalog = await directory(hostWith(null)).catalog();
    expect(catalog.find((m) => m.id === f16.id)).toMatchObject({
      available: null,
      unavailable_reason: expect.stringMatching(/not known yet/i),
    });
  });

  it('answers a request for a catalogue model with 503 engine_unavailable when no tab hosts the engine', async () => {
    const models = directory(null);
    await expect(models.ensureReady((await models.find(f16.id))!)).rejects.toMatchObject({
      code: 'engine_unavailable',
      status: 503,
    });
    // The echo engine needs nothing of the device.
    await expect(models.ensureReady(ECHO_MODEL)).resolves.toBeUndefined();
  });

  it('leaves the fit to the engine while the host has not measured its GPU', async () => {
    const models = directory(hostWith(null));
    await expect(
      models.ensureReady((await models.find(f16.id))!, { files: false }),
    ).resolves.toBeUndefined();
  });

  it('lists the downloaded models while no tab hosts the engine, as their fit is not known', async () => {
    expect((await directory(null).list()).map((m) => m.id)).toEqual([ECHO_MODEL.id, f32.id]);
  });
});

/** A server the user added: two models listed, one of them unticked. */
const GPU_BOX: ServerRecord = {
  name: 'gpu-box',
  base_url: 'http://gpu-box:8000/v1',
  api_key: 'sk-secret',
  models: ['meta-llama/Llama-3-8B', 'qwen', 'hidden-one'],
  hidden: ['hidden-one'],
  added_at: 1,
};

/** The directory of both catalogue models plus `GPU_BOX`, online as `online` says. */
function withServers(state: { online: boolean }, options: Partial<DeviceModelsOptions> = {}) {
  const servers = new Servers(memoryServerStore([GPU_BOX]), {
    fetch: async () => {
      throw new Error('no request is expected');
    },
    organisations: async () => new Set(),
  });
  const models = new DeviceModels({
    catalog: [f32, f16],
    appUrl: 'https://app.example/',
    caches: cachesWith(f32),
    ...hostOptions(hostWith(GPU)),
    servers,
    online: () => state.online,
    ...options,
  });
  return { models, servers };
}

describe('DeviceModels with servers the user added', () => {
  it('lists the offered server models last, marked remote, while online', async () => {
    const { models } = withServers({ online: true });
    const list = await models.list();
    expect(list.map((m) => m.id)).toEqual([
      ECHO_MODEL.id,
      f32.id,
      'gpu-box/meta-llama/Llama-3-8B',
      'gpu-box/qwen',
    ]);
    expect(list[2]).toMatchObject({
      owned_by: 'gpu-box',
      remote: { server: 'gpu-box', host: 'gpu-box:8000' },
    });
    expect(JSON.stringify(list)).not.toContain('sk-secret');
  });

  it('does not list server models while offline, and lists them again once back online', async () => {
    const state = { online: false };
    const { models } = withServers(state);
    expect((await models.list()).map((m) => m.id)).toEqual([ECHO_MODEL.id, f32.id]);
    state.online = true;
    expect((await models.list()).map((m) => m.id)).toContain('gpu-box/qwen');
  });

  it('looks a server model up once for a chat request: the server’s backend comes with the answer, and the upstream never resolves the id again', async () => {
    const { servers } = withServers({ online: true });
    let lookups = 0;
    const resolve = servers.resolve.bind(servers);
    servers.resolve = async (id) => {
      lookups += 1;
      return resolve(id);
    };
    const sent: string[] = [];
    // As the service worker wires it: no `resolve` of its own, targets bound by the directory.
    const upstream = new UpstreamBackend({
      fetch: async (url, init) => {
        sent.push(`${url} ${JSON.parse(String(init?.body)).model}`);
        return Response.json({
          choices: [
            { message: { role: 'assistant', content: 'from the box' }, finish_reason: 'stop' },
          ],
          usage: { prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 },
        });
      },
    });
    const models = new DeviceModels({
      catalog: [f32],
      appUrl: 'https://app.example/',
      caches: cachesWith(f32),
      ...hostOptions(hostWith(GPU)),
      servers,
      forward: (target) => upstream.to(target),
      online: () => true,
    });
    // The device's engines: a server model's request never reaches them.
    const device = scriptedBackend(async function* () {});
    const api = createApi({
      backend: device,
      models,
      servers: { registry: servers },
    });
    const response = await api.fetch(
      chatRequest({ model: 'gpu-box/qwen', messages: [{ role: 'user', content: 'hi' }] }),
    );
    const reply = (await response.json()) as { choices: { message: { content: string } }[] };
    expect(response.status).toBe(200);
    expect(reply.choices[0]!.message.content).toBe('from the box');
    expect(sent).toEqual(['http://gpu-box:8000/v1/chat/completions qwen']);
    expect(lookups).toBe(1);
    expect(device.signals).toHaveLength(0);
  });

  it('follows the servers: a model unticked or a server removed is no longer listed', async () => {
    const { models, servers } = withServers({ online: true });
    await servers.offer('gpu-box', { offered: ['qwen'] });
    expect((await models.list()).map((m) => m.id)).toEqual([ECHO_MODEL.id, f32.id, 'gpu-box/qwen']);
    expect(await models.find('gpu-box/meta-llama/Llama-3-8B')).toBeUndefined();
    await servers.remove('gpu-box');
    expect((await models.list()).map((m) => m.id)).toEqual([ECHO_MODEL.id, f32.id]);
    expect(await models.find('gpu-box/qwen')).toBeUndefined();
  });

  it('finds a server model as remoteModelInfo, with the price its owner set', async () => {
    const price = { prompt: 3e-6, completion: 5e-6 };
    const { models } = withServers(
      { online: true },
      { price: async (id) => (id === 'gpu-box/qwen' ? price : undefined) },
    );
    const qwen = await models.find('gpu-box/qwen');
    expect(qwen).toMatchObject({
      ...remoteModelInfo('gpu-box/qwen', { server: 'gpu-box', host: 'gpu-box:8000' }, price),
      remote: { server: 'gpu-box', host: 'gpu-box:8000' },
    });
    expect(qwen?.price).toEqual(price);
    const llama = await models.find('gpu-box/meta-llama/Llama-3-8B');
    expect(llama).toMatchObject({ owned_by: 'gpu-box', price: { prompt: 0, completion: 0 } });
    expect(await models.find('gpu-box/hidden-one')).toBeUndefined();
    expect(await models.find('gpu-box/none')).toBeUndefined();
  });

  it('finds a server model while offline too (the request is then refused by ensureReady)', async () => {
    const { models } = withServers({ online: false });
    expect((await models.find('gpu-box/qwen'))?.remote).toBeDefined();
  });

  it('answers ensureReady for a server model with 503 upstream_unavailable while offline', async () => {
    const state = { online: false };
    const { models } = withServers(state);
    const model = (await models.find('gpu-box/qwen'))!;
    await expect(models.ensureReady(model)).rejects.toMatchObject({
      code: 'upstream_unavailable',
      status: 503,
      retryAfter: 30,
      message: expect.stringMatching(/offline/),
    });
    state.online = true;
    await expect(models.ensureReady(model)).resolves.toBeUndefined();
  });

  it('needs no tab hosting the engine for a server model', async () => {
    const { models } = withServers({ online: true }, hostOptions(null));
    await expect(models.ensureReady((await models.find('gpu-box/qwen'))!)).resolves.toBeUndefined();
  });

  it('shows the offered server models last in the catalogue, leaving the device', async () => {
    const { models } = withServers({ online: true });
    const catalog = await models.catalog();
    expect(catalog.map((m) => m.id)).toEqual([
      ECHO_MODEL.id,
      f32.id,
      f16.id,
      'gpu-box/meta-llama/Llama-3-8B',
      'gpu-box/qwen',
    ]);
    const llama = catalog.find((m) => m.id === 'gpu-box/meta-llama/Llama-3-8B');
    expect(llama).toEqual({
      id: 'gpu-box/meta-llama/Llama-3-8B',
      object: 'model',
      owned_by: 'gpu-box',
      engine: 'server',
      size_mb: null,
      vram_required_mb: null,
      context_window: 0,
      required_features: [],
      available: true,
      // Run by its server: nothing on this device to judge but the network, which is up.
      backend: null,
      fit: 'good',
      downloaded: true,
      loaded: false,
      source: 'server',
      tools: true,
      reasoning: false,
      vision: null,
      leaves_device: true,
      server: { name: 'gpu-box', host: 'gpu-box:8000', upstream_id: 'meta-llama/Llama-3-8B' },
    });
    expect(JSON.stringify(catalog)).not.toContain('sk-secret');
  });

  it('shows the server models in the catalogue while offline as unavailable, saying why', async () => {
    const { models } = withServers({ online: false });
    const qwen = (await models.catalog()).find((m) => m.id === 'gpu-box/qwen');
    expect(qwen).toMatchObject({
      engine: 'server',
      leaves_device: true,
      available: false,
      unavailable_reason: expect.stringMatching(/offline/),
    });
  });

  it('counts hearth and the owners of the catalogue as organisations, not the servers', async () => {
    const { models } = withServers({ online: true });
    const organisations = await models.organisations();
    expect(organisations.has('hearth')).toBe(true);
    expect(organisations.has('mlc-ai')).toBe(true);
    expect(organisations.has('gpu-box')).toBe(false);
  });

  it('refuses a server named after an organisation of the catalogue', async () => {
    const models = directory();
    const servers = new Servers(memoryServerStore(), {
      fetch: async () => Response.json({ data: [{ id: 'x' }] }),
      organisations: () => models.organisations(),
    });
    await expect(servers.add({ name: 'mlc-ai', base_url: 'http://box/v1' })).rejects.toMatchObject({
      status: 409,
      code: 'model_exists',
      param: 'name',
    });
    await expect(servers.add({ name: 'hearth', base_url: 'http://box/v1' })).rejects.toMatchObject({
      status: 409,
      code: 'model_exists',
    });
    await expect(servers.add({ name: 'box', base_url: 'http://box/v1' })).resolves.toMatchObject({
      models: ['x'],
    });
  });
});

describe('GET /v1/openai/models/{id} through the service worker’s directory', () => {
  /** An f32 model this GPU runs, not downloaded. */
  const other = catalogEntry(
    {
      model: 'https://hf.example/o32',
      model_id: 'O-q4f32_1',
      model_lib: 'https://libs.example/o.wasm',
    },
    { owner: 'mlc-ai', source: 'prebuilt', tools: false },
  );
  /** What the models endpoints answer: a list, a model, or an error. */
  interface Answer {
    data: { id: string }[];
    id?: string;
    error: { code: string; type: string; param: string | null; message: string };
  }
  /** The API of an app under `/repo/`, as a site on GitHub Pages has it. */
  function api(state = { online: true }) {
    const { models, servers } = withServers(state, {
      catalog: [f32, f16, other],
      appUrl: 'https://app.example/repo/',
    });
    return createApi({
      backend: scriptedBackend(async function* () {}),
      models,
      base: '/repo/',
      servers: { registry: servers },
    });
  }
  const get = async (app: ReturnType<typeof api>, path: string) => {
    const response = await app.fetch(
      new Request(`https://app.example/repo/v1/openai/${path}`, {
        headers: { authorization: 'Bearer k' },
      }),
    );
    return { status: response.status, body: (await response.json()) as Answer };
  };
  const retrieve = (app: ReturnType<typeof api>, id: string) =>
    get(app, `models/${encodeURIComponent(id)}`);

  it('answers 200 exactly for the models the list lists, and 404 model_not_found for every other catalogue model', async () => {
    for (const state of [{ online: true }, { online: false }]) {
      const app = api(state);
      const listed = (await get(app, 'models')).body.data.map((m) => m.id);
      const everyId = [ECHO_MODEL.id, f32.id, f16.id, other.id, 'gpu-box/qwen'];
      for (const id of everyId) {
        const { status, body } = await retrieve(app, id);
        if (listed.includes(id)) {
          expect({ id, status, got: body.id }).toEqual({ id, status: 200, got: id });
        } else {
          expect({ id, status, code: body.error.code }).toEqual({
            id,
            status: 404,
            code: 'model_not_found',
          });
        }
      }
      expect(listed.includes('gpu-box/qwen')).toBe(state.online);
    }
  });

  it('says why a catalogue model is not listed and how to get it: not downloaded, or not runnable here', async () => {
    const app = api();
    const missing = (await retrieve(app, other.id)).body.error;
    expect(missing).toMatchObject({
      code: 'model_not_found',
      type: 'not_found_error',
      param: 'model',
    });
    expect(missing.message).toContain("is in Hearth's catalogue but not on this device");
    expect(missing.message).toContain(`hearth.models.prepare('${other.id}')`);
    expect(missing.message).toContain(`POST /repo/v1/hearth/models/${other.id}/download`);
    expect(missing.message).toContain(
      'the whole catalogue is at GET /repo/v1/hearth/catalog, in a page of the site.',
    );
    const cannot = (await retrieve(app, f16.id)).body.error;
    expect(cannot.message).toMatch(/cannot answer here: This GPU lacks shader-f16/);
    expect(cannot.message).toContain('GET /repo/v1/hearth/catalog');
    const offline = (await retrieve(api({ online: false }), 'gpu-box/qwen')).body.error;
    expect(offline.message).toContain('This device is offline');
  });

  it('answers a chat with a catalogue model that is not downloaded with 404 model_not_downloaded saying how to download it', async () => {
    const response = await api().fetch(
      new Request('https://app.example/repo/v1/openai/chat/completions', {
        method: 'POST',
        headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
        body: JSON.stringify({ model: other.id, messages: [{ role: 'user', content: 'hi' }] }),
      }),
    );
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    expect({ status: response.status, code: error.code }).toEqual({
      status: 404,
      code: 'model_not_downloaded',
    });
    expect(error.message).toBe(
      `The model '${other.id}' is not on this device; download it first: hearth.models.prepare('${other.id}') in a page of the site, or POST /repo/v1/hearth/models/${other.id}/download from one (not through the relay).`,
    );
  });

  it('answers an unknown bare MLC name with the catalogue id it probably meant and the catalogue route', async () => {
    const { status, body } = await retrieve(api(), 'O-q4f32_1');
    expect(status).toBe(404);
    expect(body.error.message).toBe(
      "The model 'O-q4f32_1' does not exist. Did you mean 'mlc-ai/O-q4f32_1'? GET /repo/v1/openai/models lists the models ready on this device; the whole catalogue is at GET /repo/v1/hearth/catalog, in a page of the site.",
    );
  });
});
