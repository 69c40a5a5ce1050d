import { describe, expect, it } from 'vitest';
import { Channel } from '../../../src/bridge/channel';
import { Downloads } from '../../../src/engine-host/downloads/downloads';
import { EchoEngine } from '../../../src/engines/echo/echo-engine';
import { LiveCatalog } from '../../../src/engine-host/live-catalog';
import { LocalModels } from '../../../src/engine-host/model-service';
import { EngineQueue } from '../../../src/engine-host/queue';
import {
  memoryAddedStore,
  type AddedModelStore,
  type AddedRecord,
} from '../../../src/models/added/added-models';
import type { ChatEvent, LoadingBackend, ModelService } from '../../../src/protocol/host/backend';
import { ggufEntry } from '../../../src/models/catalog';
import type { DownloadProgress } from '../../../src/protocol/host/downloads';
import type { ChatRequest } from '../../../src/protocol/types';
import { MemoryCaches, memorySet } from '../fake-storage';

const APP = 'https://app.example/';
const BUILT_IN = ggufEntry(
  { id: 'acme/Built-GGUF:Q4_0', files: ['https://m.example/b.gguf'] },
  'curated',
);
const ADDED = 'me/Tiny-GGUF:Q8_0';
const record = (id: string): AddedRecord => ({
  id,
  files: [`https://m.example/${id.replace(/\W/g, '-')}.gguf`],
  origin: 'x',
  added_at: 1,
});

/** A store that counts its reads. */
function counted(store: AddedModelStore = memoryAddedStore()) {
  const reads = { count: 0 };
  return {
    store: { ...store, list: () => ((reads.count += 1), store.list()) } as AddedModelStore,
    inner: store,
    reads,
  };
}

describe('LiveCatalog', () => {
  it('holds the built-in models, then the added ones, in one array changed in place', async () => {
    const { store, inner } = counted();
    const live = new LiveCatalog([BUILT_IN], store);
    const entries = live.entries;
    expect(entries.map((e) => e.id)).toEqual([BUILT_IN.id]);
    await inner.put(record(ADDED));
    await live.refresh();
    expect(live.entries).toBe(entries);
    expect(entries.map((e) => e.id)).toEqual([BUILT_IN.id, ADDED]);
    expect(live.gguf().map((e) => e.id)).toEqual([BUILT_IN.id, ADDED]);
    await inner.delete(ADDED);
    await live.refresh();
    expect(entries.map((e) => e.id)).toEqual([BUILT_IN.id]);
  });

  it('tells its listener when the models change', async () => {
    let changes = 0;
    const live = new LiveCatalog([], memoryAddedStore([record(ADDED)]), {
      onChange: () => (changes += 1),
    });
    await live.refresh();
    expect(changes).toBe(1);
  });

  it('reads the store for a GGUF id it does not know, and only then', async () => {
    const { store, inner, reads } = counted();
    const live = new LiveCatalog([BUILT_IN], store);
    await live.know(BUILT_IN.id);
    await live.know('hearth/echo');
    expect(reads.count).toBe(0);
    await inner.put(record(ADDED));
    await live.know(ADDED);
    expect(live.has(ADDED)).toBe(true);
    expect(reads.count).toBe(1);
  });

  it('lets the model service answer for a model added after the worker read the store', async () => {
    const { store, inner } = counted();
    const live = new LiveCatalog([BUILT_IN], store);
    const calls: string[] = [];
    const service: ModelService = {
      download(model) {
        calls.push(`download ${model} ${live.has(model)}`);
        const progress = new Channel<DownloadProgress>();
        progress.close();
        return progress;
      },
      async cancelDownload(model) {
        calls.push(`cancel ${model} ${live.has(model)}`);
      },
      async deleteModel(model) {
        calls.push(`delete ${model} ${live.has(model)}`);
      },
      async unload() {
        calls.push('unload');
      },
      async inspect(model) {
        calls.push(`inspect ${model} ${live.has(model)}`);
        return {
          missing_files: [],
          webllm_has_model_in_cache: false,
          loaded: false,
          download: null,
          evicted: null,
        };
      },
    };
    const wrapped = live.service(service);
    await inner.put(record(ADDED));
    const signal = new AbortController().signal;
    for await (const _ of wrapped.download(ADDED, { signal, requestId: 'r' })) void _;
    await wrapped.inspect(ADDED);
    await wrapped.cancelDownload(ADDED);
    await wrapped.deleteModel(ADDED);
    await wrapped.unload();
    expect(calls).toEqual([
      `download ${ADDED} true`,
      `inspect ${ADDED} true`,
      `cancel ${ADDED} true`,
      `delete ${ADDED} true`,
      'unload',
    ]);
  });

  it('hands a chat for a known model straight to the backend, and one for a new GGUF id after a read', async () => {
    const { store, inner, reads } = counted();
    const live = new LiveCatalog([BUILT_IN], store);
    const seen: string[] = [];
    const backend: LoadingBackend = {
      chat(request) {
        seen.push(`${request.model} ${live.has(request.model)}`);
        const channel = new Channel<ChatEvent>();
        channel.close();
        return channel;
      },
      load(model) {
        seen.push(`load ${model} ${live.has(model)}`);
        const channel = new Channel<ChatEvent>();
        channel.close();
        return channel;
      },
    };
    const wrapped = live.backend(backend);
    const signal = new AbortController().signal;
    const echo = wrapped.chat({ model: 'hearth/echo' } as ChatRequest, { signal, requestId: 'r' });
    expect(seen).toEqual(['hearth/echo false']);
    for await (const _ of echo) void _;
    await inner.put(record(ADDED));
    for await (const _ of wrapped.chat({ model: ADDED } as ChatRequest, { signal, requestId: 'r' }))
      void _;
    for await (const _ of wrapped.load(ADDED, { signal, requestId: 'r' })) void _;
    expect(seen).toEqual(['hearth/echo false', `${ADDED} true`, `load ${ADDED} true`]);
    expect(reads.count).toBe(1);
  });

  it('gives the downloads and the model service the models added since they were made', async () => {
    const live = new LiveCatalog([BUILT_IN], memoryAddedStore([record(ADDED)]));
    const caches = new MemoryCaches();
    const downloaded = memorySet();
    const downloads = new Downloads({
      catalog: live.entries,
      appUrl: APP,
      caches,
      fetch: async () => new Response('no', { status: 404, statusText: 'Not Found' }),
      pending: memorySet(),
      downloaded,
      onChange: () => undefined,
      attempts: 1,
      retryMs: 1,
      progressMs: 0,
    });
    const models = new LocalModels({
      catalog: live.entries,
      appUrl: APP,
      caches,
      downloads,
      queue: new EngineQueue([new EchoEngine()]),
      engine: {
        loadedModel: null,
        models: [],
        unload: async () => undefined,
        refresh: async () => undefined,
        settled: async () => undefined,
        hasModelInCache: async () => false,
      },
      forgetLosses: async () => undefined,
      downloaded,
      onChange: () => undefined,
    });
    await live.refresh();
    const ended = await new Promise<DownloadProgress>((resolve) =>
      downloads.start(ADDED, (p) => p.phase === 'failed' && resolve(p)),
    );
    // It reached the network for the added model's file: the server, not the catalogue, refused.
    expect(ended.error?.message).toContain('404');
    expect((await models.inspect(ADDED)).missing_files).toEqual([record(ADDED).files[0]]);
    await expect(models.deleteModel(ADDED)).resolves.toBeUndefined();
  });
});
