/**
 * The model endpoints end to end in Node: the API and the service worker's model directory, the
 * port bridge, the engine worker's model service and downloads, over caches and a network in
 * memory. (tests/e2e/downloads.spec.ts does the same in Chromium with the real WebLLM.)
 */
import { describe, expect, it } from 'vitest';
import { PortBackend } from '../../../src/bridge/client';
import { HostServer } from '../../../src/bridge/server';
import { Downloads } from '../../../src/engine-host/downloads/downloads';
import type { Engine, EngineOutput } from '../../../src/engines/engine';
import { LocalModels } from '../../../src/engine-host/model-service';
import { EngineQueue } from '../../../src/engine-host/queue';
import { catalogEntry, type GpuFacts } from '../../../src/models/catalog';
import type { DownloadProgress } from '../../../src/protocol/host/downloads';
import type { ChatEvent } from '../../../src/protocol/host/backend';
import { OpenAIError } from '../../../src/protocol/errors';
import { createApi } from '../../../src/api/router';
import type { ChatRequest } from '../../../src/protocol/types';
import { missingFiles } from '../../../src/models/on-device';
import { DeviceModels } from '../../../sw/models';
import { tinyModel } from '../../tiny-model';
import { FakeNetwork, MemoryCaches, memorySet } from '../fake-storage';
import {
  chatRequest,
  eventually,
  getRequest,
  sleep,
  sseData,
  URL_BASE,
  ROOMY_LIMITS,
} from '../helpers';

const APP = 'https://app.example/';
const BASE = 'https://models.example/tiny/';
const ID = 'acme/tiny';
const model = tinyModel({ shards: 3, shardBytes: 128 * 1024 });
const entry = catalogEntry(
  { model: 'https://models.example/tiny', model_id: 'tiny', model_lib: `${BASE}lib/tiny.wasm` },
  { owner: 'acme', id: ID, source: 'self-hosted', tools: false },
);
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

/** A promise and the function that settles it. */
function gate(): { done: Promise<void>; open: () => void } {
  let open = () => {};
  const done = new Promise<void>((resolve) => (open = resolve));
  return { done, open };
}

/**
 * An engine for the tiny model whose replies wait until released. Like WebLLM, it takes no lock
 * of its own: a load or unload may be held open, and it records what overlapped.
 */
class TinyEngine implements Engine {
  loadedModel: string | null = null;
  models: string[] = [];
  /** Models marked as failing, as the engine read them at its last refresh. */
  failing: Record<string, string> = {};
  /** What a refresh reads as failing (the device-loss store). */
  lossStore: Record<string, string> = {};
  loads: string[] = [];
  unloads = 0;
  generations = 0;
  /** Something ran while an unload was disposing the model. */
  overlapped = false;
  #unloading = false;
  #loadGate: Promise<void> | undefined;
  #unloadGate: Promise<void> | undefined;
  release = () => {};
  serves = (id: string) => id === ID;
  isLoaded = (id: string) => this.loadedModel === id;
  /** Holds loads from now on until the returned function is called. */
  holdLoads(): () => void {
    const { done, open } = gate();
    this.#loadGate = done;
    return open;
  }
  /** Holds unloads from now on until the returned function is called. */
  holdUnloads(): () => void {
    const { done, open } = gate();
    this.#unloadGate = done;
    return open;
  }
  async load(id: string) {
    if (this.failing[id]) {
      throw new OpenAIError('webgpu_unavailable', this.failing[id], { shouldRetry: false });
    }
    if (this.#unloading) this.overlapped = true;
    this.loads.push(id);
    await this.#loadGate;
    this.loadedModel = id;
  }
  /** Disposes the model; it is gone only once the disposal is done (WebLLM's device.sync). */
  async unload() {
    if (this.#unloading) this.overlapped = true;
    this.#unloading = true;
    this.unloads += 1;
    await this.#unloadGate;
    this.loadedModel = null;
    this.#unloading = false;
  }
  async refresh() {
    this.models = (await missingFiles(entry, APP, this.caches)).length === 0 ? [ID] : [];
    this.failing = { ...this.lossStore };
  }
  async settled() {}
  constructor(readonly caches: MemoryCaches) {}
  async hasModelInCache() {
    return false;
  }
  async *generate(_request: ChatRequest, signal: AbortSignal): AsyncGenerator<EngineOutput> {
    if (this.#unloading) this.overlapped = true;
    this.generations += 1;
    await new Promise<void>((resolve) => {
      this.release = resolve;
      signal.addEventListener('abort', () => resolve());
    });
    yield { type: 'token', text: 'hi' };
    yield { type: 'end', finish_reason: 'stop', usage: { prompt_tokens: 1, completion_tokens: 1 } };
  }
}

function setup(options: { downloaded?: string[] } = {}) {
  const caches = new MemoryCaches();
  const network = new FakeNetwork(model, BASE);
  const engine = new TinyEngine(caches);
  const forgotten: string[] = [];
  // As the worker wires it: a load asked for on its own lifts the model's failing mark.
  const queue = new EngineQueue([engine], {
    beforeLoad: (id): Promise<void> => models.clearFailing(id),
  });
  const downloaded = memorySet(...(options.downloaded ?? []));
  const ended: DownloadProgress[] = [];
  const downloads = new Downloads({
    catalog: [entry],
    appUrl: APP,
    caches,
    fetch: network.fetch,
    pending: memorySet(),
    downloaded,
    onChange: () => undefined,
    onEnd: (progress) => {
      ended.push(progress);
      void models.downloadEnded(progress);
    },
    retryMs: 1,
    progressMs: 0,
  });
  const models = new LocalModels({
    catalog: [entry],
    appUrl: APP,
    caches,
    downloads,
    queue,
    engine,
    forgetLosses: async (id) => {
      forgotten.push(id);
      delete engine.lossStore[id];
    },
    downloaded,
    onChange: () => undefined,
  });
  const server = new HostServer(queue, {
    status: () => ({
      host: { id: 'h', build: 'test' },
      models: queue.models,
      loaded_model: queue.loadedModel,
      loading: null,
      load_error: null,
      failing_models: {},
      last_speed: null,
      downloads: downloads.active,
      evicted_models: { ...models.evicted },
      queue: queue.counts,
      device: GPU,
    }),
    models,
  });
  const { port1, port2 } = new MessageChannel();
  server.attach(port2);
  const backend = new PortBackend(async () => port1);
  const directory = new DeviceModels({
    catalog: [entry],
    appUrl: APP,
    caches,
    device: async () => GPU,
    host: async () => null,
  });
  const api = createApi({ backend, models: directory, status: () => backend.status() });
  const call = (method: string, path: string, body?: unknown) =>
    api.fetch(
      new Request(`${URL_BASE}/v1/hearth/${path}`, {
        method,
        headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      }),
    );
  return {
    api,
    call,
    caches,
    network,
    engine,
    queue,
    models,
    forgotten,
    downloaded,
    ended,
    close: () => {
      port1.close();
      port2.close();
    },
  };
}

const progressOf = async (response: Response) => (await sseData(response)) as DownloadProgress[];

describe('the model endpoints, through the bridge', () => {
  it('streams a download’s progress as SSE until every file is stored', async () => {
    const t = setup();
    const response = await t.call('POST', `models/${ID}/download`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = await progressOf(response);
    expect(events[0]).toMatchObject({ object: 'hearth.download', model: ID });
    expect(events.at(-1)).toMatchObject({
      phase: 'done',
      bytes_done: model.totalBytes,
      bytes_total: model.totalBytes,
    });
    const state = await (await t.call('GET', `models/${ID}`)).json();
    expect(state).toEqual({
      id: ID,
      object: 'hearth.model',
      downloaded: true,
      missing_files: [],
      webllm_has_model_in_cache: false,
      loaded: false,
      download: null,
      evicted: null,
    });
    // The service worker's directory now lists it.
    const list = await (await t.api.fetch(getRequest('/v1/openai/models'))).json();
    expect(list.data.map((m: { id: string }) => m.id)).toEqual(['hearth/echo', ID]);
    t.close();
  });

  it('lets a second caller join the download, and each file is fetched once', async () => {
    const t = setup();
    const release = t.network.hold(model.shards[1]!);
    const first = t.call('POST', `models/${ID}/download`);
    await eventually(() => t.network.count(model.shards[1]!) === 1);
    const status = await (await t.call('GET', 'status')).json();
    expect(status.downloads).toMatchObject([{ model: ID, phase: 'files' }]);
    const second = t.call('POST', `models/${ID}/download`);
    const inspection = await (await t.call('GET', `models/${ID}`)).json();
    expect(inspection).toMatchObject({ downloaded: false, download: { phase: 'files' } });
    release();
    const [a, b] = await Promise.all([progressOf(await first), progressOf(await second)]);
    expect(a.at(-1)!.phase).toBe('done');
    expect(b.at(-1)!.phase).toBe('done');
    for (const file of model.files) expect(t.network.count(file.path)).toBe(1);
    t.close();
  });

  it('answers only the outcome, as JSON, when asked not to stream', async () => {
    const t = setup();
    const response = await t.call('POST', `models/${ID}/download`, { stream: false });
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toMatchObject({ model: ID, phase: 'done' });
    t.close();
  });

  it('answers a failed download that is not streamed with its error and status', async () => {
    const t = setup();
    t.caches.quotaBytes = model.totalBytes / 2;
    const response = await t.call('POST', `models/${ID}/download`, { stream: false });
    expect(response.status).toBe(507);
    expect((await response.json()).error).toMatchObject({ code: 'storage_full' });
    expect(t.caches.urls).toEqual([]);
    t.close();
  });

  it('ends the stream of a failed download with the failure, as its last event', async () => {
    const t = setup();
    t.network.fail('resolve/main/tokenizer.json', 404);
    const events = await progressOf(await t.call('POST', `models/${ID}/download`));
    expect(events.at(-1)).toMatchObject({
      phase: 'failed',
      error: { code: 'engine_error', message: expect.stringContaining('answered 404') },
    });
    t.close();
  });

  it('answers a download whose host cannot be reached with 503 download_unreachable, as JSON and as the stream’s last event', async () => {
    for (const stream of [false, true]) {
      const t = setup();
      // Every try of the first shard fails as fetch does offline: a TypeError, no response.
      t.network.fail(model.shards[0]!, 'reset', 'reset', 'reset');
      const response = await t.call('POST', `models/${ID}/download`, { stream });
      const error = stream
        ? (await progressOf(response)).at(-1)!.error
        : { status: response.status, ...(await response.json()).error };
      expect(error).toMatchObject({
        ...(!stream && { status: 503 }),
        code: 'download_unreachable',
        type: 'unavailable_error',
        message: expect.stringContaining('could not reach models.example'),
      });
      t.close();
    }
  });

  it('cancels a download with DELETE …/download; its stream ends with cancelled', async () => {
    const t = setup();
    t.network.hold(model.shards[2]!);
    const stream = t.call('POST', `models/${ID}/download`);
    await eventually(() => t.network.count(model.shards[2]!) === 1);
    const cancel = await t.call('DELETE', `models/${ID}/download`);
    expect(await cancel.json()).toEqual({ id: ID, object: 'hearth.download', cancelled: true });
    expect((await progressOf(await stream)).at(-1)!.phase).toBe('cancelled');
    expect((await (await t.call('GET', 'status')).json()).downloads).toEqual([]);
    t.close();
  });

  it('deletes a model: 409 while a request uses it, then every file is gone', async () => {
    const t = setup();
    await progressOf(await t.call('POST', `models/${ID}/download`));
    const chat = t.api.fetch(
      chatRequest({ model: ID, messages: [{ role: 'user', content: 'x' }] }),
    );
    await eventually(() => t.engine.loadedModel === ID);
    const refused = await t.call('DELETE', `models/${ID}`);
    expect(refused.status).toBe(409);
    expect((await refused.json()).error).toMatchObject({
      code: 'model_in_use',
      type: 'invalid_request_error',
    });
    expect(t.caches.urls.length).toBe(model.files.length);
    t.engine.release();
    expect((await chat).status).toBe(200);
    const deleted = await t.call('DELETE', `models/${ID}`);
    expect(await deleted.json()).toEqual({ id: ID, object: 'model', deleted: true });
    expect(t.caches.urls).toEqual([]);
    expect(t.engine.unloads).toBe(1);
    expect(t.downloaded.models.size).toBe(0);
    const state = await (await t.call('GET', `models/${ID}`)).json();
    expect(state).toMatchObject({ downloaded: false, missing_files: expect.any(Array) });
    const chatAfter = await t.api.fetch(
      chatRequest({ model: ID, messages: [{ role: 'user', content: 'x' }] }),
    );
    expect((await chatAfter.json()).error.code).toBe('model_not_downloaded');
    t.close();
  });

  it('unloads the model: 409 while a request uses it, then the GPU is free', async () => {
    const t = setup();
    await progressOf(await t.call('POST', `models/${ID}/download`));
    const chat = t.api.fetch(
      chatRequest({ model: ID, messages: [{ role: 'user', content: 'x' }] }),
    );
    await eventually(() => t.engine.loadedModel === ID);
    expect((await t.call('POST', 'unload')).status).toBe(409);
    t.engine.release();
    await chat;
    const unloaded = await t.call('POST', 'unload');
    expect(await unloaded.json()).toEqual({ object: 'hearth.unload', loaded_model: null });
    expect(t.engine.loadedModel).toBeNull();
    t.close();
  });

  it('reports a model that was downloaded and has lost files since, instead of assuming it', async () => {
    const t = setup({ downloaded: [ID] });
    await t.engine.refresh();
    await t.models.reconcile();
    const status = await (await t.call('GET', 'status')).json();
    expect(status.evicted_models[ID]).toMatch(/files are gone from the device/);
    expect((await (await t.call('GET', `models/${ID}`)).json()).evicted).toMatch(
      /download it again/,
    );
    expect(t.downloaded.models.size).toBe(1);
    await progressOf(await t.call('POST', `models/${ID}/download`));
    expect((await (await t.call('GET', 'status')).json()).evicted_models).toEqual({});
    t.close();
  });

  it('counts a model found complete at start-up as downloaded', async () => {
    const t = setup();
    await progressOf(await t.call('POST', `models/${ID}/download`));
    t.downloaded.models.clear();
    await t.engine.refresh();
    await t.models.reconcile();
    expect(t.downloaded.models).toEqual(new Set([ID]));
    t.close();
  });

  it.each([
    ['an unknown model', 'POST', 'models/acme/none/download', undefined, 404, 'model_not_found'],
    ['the echo engine', 'POST', 'models/hearth/echo/download', undefined, 400, 'invalid_value'],
    ['deleting the echo engine', 'DELETE', 'models/hearth%2Fecho', undefined, 400, 'invalid_value'],
    [
      'a body with other fields',
      'POST',
      `models/${ID}/download`,
      { force: 1 },
      400,
      'invalid_value',
    ],
    [
      'a stream that is no boolean',
      'POST',
      `models/${ID}/download`,
      { stream: 1 },
      400,
      'invalid_value',
    ],
    ['GET on …/load', 'GET', `models/${ID}/load`, undefined, 405, 'method_not_allowed'],
    ['POST on the model itself', 'POST', `models/${ID}`, undefined, 405, 'method_not_allowed'],
    ['an unknown action', 'POST', `models/${ID}/upload`, undefined, 404, 'unknown_url'],
    ['PUT on a model', 'PUT', `models/${ID}`, undefined, 405, 'method_not_allowed'],
  ])('refuses %s', async (_what, method, path, body, status, code) => {
    const t = setup();
    const response = await t.call(method, path, body);
    expect(response.status).toBe(status);
    expect((await response.json()).error.code).toBe(code);
    // Nothing was fetched, and the next request still works.
    expect(t.network.requests).toEqual([]);
    expect((await t.call('GET', `models/${ID}`)).status).toBe(200);
    t.close();
  });

  it('says which methods an action takes', async () => {
    const t = setup();
    const response = await t.call('GET', `models/${ID}/download`);
    expect(response.headers.get('allow')).toBe('POST, DELETE');
    t.close();
  });

  it('tells what it knows of the built-in echo engine', async () => {
    const t = setup();
    const state = await (await t.call('GET', 'models/hearth/echo')).json();
    expect(state).toMatchObject({ id: 'hearth/echo', downloaded: true, missing_files: [] });
    t.close();
  });
});

/** A chat request for the tiny model, as the host receives it. */
const tinyChat = (content: string): ChatRequest => ({
  model: ID,
  messages: [{ role: 'user', content }],
  stream: false,
  include_usage: false,
  n: 1,
});

/** Runs a request straight on the host's queue (past the service worker's checks, already made). */
async function onQueue(queue: EngineQueue, request: ChatRequest): Promise<ChatEvent[]> {
  const events: ChatEvent[] = [];
  for await (const event of queue.chat(request, { signal: new AbortController().signal })) {
    events.push(event);
  }
  return events;
}

describe('unloads and deletions, in turn with the requests', () => {
  it('lets a deletion that races a preload wait for the load, then unload and remove the model', async () => {
    const t = setup();
    await progressOf(await t.call('POST', `models/${ID}/download`));
    const releaseLoad = t.engine.holdLoads();
    // A new host tab puts its predecessor's model back on the GPU.
    t.queue.preload(ID);
    await eventually(() => t.engine.loads.length === 1);
    const deleting = t.models.deleteModel(ID);
    // A request the service worker checked before the files went, reaching the host meanwhile.
    const late = onQueue(t.queue, tinyChat('late')).catch((e: unknown) => e);
    await sleep(20);
    expect(t.caches.urls.length).toBe(model.files.length);
    releaseLoad();
    await deleting;
    expect(t.engine.unloads).toBe(1);
    expect(t.engine.loadedModel).toBeNull();
    expect(t.caches.urls).toEqual([]);
    // It finds the model gone instead of making WebLLM fetch it again.
    const error = (await late) as OpenAIError;
    expect(error).toBeInstanceOf(OpenAIError);
    expect(error.code).toBe('model_not_downloaded');
    // …and says how to get it back.
    expect(error.message).toBe(
      `The model '${ID}' was deleted from this device; download it first: hearth.models.prepare('${ID}') in a page of the site, or POST /v1/hearth/models/${ID}/download from one (not through the relay).`,
    );
    expect(t.engine.loads).toEqual([ID]);
    t.close();
  });

  it('starts no load or generation while an unload is disposing the model', async () => {
    const t = setup();
    await progressOf(await t.call('POST', `models/${ID}/download`));
    await t.call('POST', `models/${ID}/load`);
    const releaseUnload = t.engine.holdUnloads();
    const unloading = t.call('POST', 'unload');
    await eventually(() => t.engine.unloads === 1);
    const next = onQueue(t.queue, tinyChat('next'));
    await sleep(20);
    expect(t.engine.generations).toBe(0);
    releaseUnload();
    expect((await unloading).status).toBe(200);
    await eventually(() => t.engine.generations === 1);
    t.engine.release();
    expect((await next).at(-1)?.type).toBe('end');
    // The request loaded the model again, after the unload, never during it.
    expect(t.engine.loads).toEqual([ID, ID]);
    expect(t.engine.overlapped).toBe(false);
    t.close();
  });

  it('disposes the model once when two unloads come at once', async () => {
    const t = setup();
    await progressOf(await t.call('POST', `models/${ID}/download`));
    await t.call('POST', `models/${ID}/load`);
    const releaseUnload = t.engine.holdUnloads();
    const both = [t.call('POST', 'unload'), t.call('POST', 'unload')];
    await eventually(() => t.engine.unloads > 0);
    await sleep(20);
    releaseUnload();
    const answers = await Promise.all(both);
    expect(answers.map((r) => r.status)).toEqual([200, 200]);
    expect(t.engine.unloads).toBe(1);
    expect(t.engine.overlapped).toBe(false);
    t.close();
  });

  it('refuses to unload while a request is loading the model onto the GPU', async () => {
    const t = setup();
    await progressOf(await t.call('POST', `models/${ID}/download`));
    const releaseLoad = t.engine.holdLoads();
    const chat = onQueue(t.queue, tinyChat('x'));
    await eventually(() => t.engine.loads.length === 1);
    const refused = await t.call('POST', 'unload');
    expect(refused.status).toBe(409);
    expect((await refused.json()).error.code).toBe('model_in_use');
    releaseLoad();
    await eventually(() => t.engine.generations === 1);
    t.engine.release();
    await chat;
    expect(t.engine.unloads).toBe(0);
    t.close();
  });
});

describe('a model marked failing on this device', () => {
  const marked = async () => {
    const t = setup();
    await progressOf(await t.call('POST', `models/${ID}/download`));
    t.engine.lossStore[ID] = 'The GPU device was lost 2 times running this model.';
    await t.engine.refresh();
    return t;
  };

  it('is refused to chat requests, with 503 webgpu_unavailable and no retry', async () => {
    const t = await marked();
    const response = await t.api.fetch(
      chatRequest({ model: ID, messages: [{ role: 'user', content: 'x' }] }),
    );
    expect(response.status).toBe(503);
    expect(response.headers.get('x-should-retry')).toBe('false');
    expect((await response.json()).error.code).toBe('webgpu_unavailable');
    expect(t.forgotten).toEqual([]);
    expect(t.engine.loads).toEqual([]);
    t.close();
  });

  it('is tried again when the user loads it: its losses are forgotten and chats work again', async () => {
    const t = await marked();
    const loaded = await t.call('POST', `models/${ID}/load`);
    expect(loaded.status).toBe(200);
    expect(await loaded.json()).toEqual({ id: ID, object: 'model', loaded: true });
    expect(t.forgotten).toEqual([ID]);
    expect(t.engine.failing).toEqual({});
    const chat = t.api.fetch(
      chatRequest({ model: ID, messages: [{ role: 'user', content: 'x' }] }),
    );
    await eventually(() => t.engine.generations === 1);
    t.engine.release();
    expect((await chat).status).toBe(200);
    t.close();
  });

  it('keeps the losses of a model that is not marked when it is loaded', async () => {
    const t = setup();
    await progressOf(await t.call('POST', `models/${ID}/download`));
    expect((await t.call('POST', `models/${ID}/load`)).status).toBe(200);
    expect(t.forgotten).toEqual([]);
    t.close();
  });
});
