/**
 * Models that share their files, as WebLLM's prebuilt `X` and `X-1k` do (one weights folder, one
 * library, two ids): deleting one through the model service leaves the other on the device, not
 * evicted. The catalogue check says how common that is in the WebLLM release Hearth pins.
 */
import * as webllm from '@mlc-ai/web-llm';
import { describe, expect, it } from 'vitest';
import { Downloads } from '../../../src/engine-host/downloads/downloads';
import { EchoEngine } from '../../../src/engines/echo/echo-engine';
import { LocalModels } from '../../../src/engine-host/model-service';
import { EngineQueue } from '../../../src/engine-host/queue';
import { catalogEntry, prebuiltCatalog, type CatalogEntry } from '../../../src/models/catalog';
import { finished } from '../../../src/protocol/host/downloads';
import { missingFiles } from '../../../src/models/on-device';
import { tinyModel } from '../../tiny-model';
import { FakeNetwork, MemoryCaches, memorySet } from '../fake-storage';

const APP = 'https://app.example/';
const BASE = 'https://models.example/tiny/';
const model = tinyModel({ shards: 3, shardBytes: 64 * 1024 });

const entry = (id: string): CatalogEntry =>
  catalogEntry(
    {
      model: 'https://models.example/tiny',
      model_id: id.split('/')[1]!,
      model_lib: `${BASE}lib/tiny.wasm`,
    },
    { owner: 'acme', id, source: 'self-hosted', tools: false },
  );

function setup() {
  const full = entry('acme/tiny');
  const short = entry('acme/tiny-1k');
  const catalog = [full, short];
  const caches = new MemoryCaches();
  const downloaded = memorySet();
  const downloads = new Downloads({
    catalog,
    appUrl: APP,
    caches,
    fetch: new FakeNetwork(model, BASE).fetch,
    pending: memorySet(),
    downloaded,
    onChange: () => undefined,
    retryMs: 1,
    progressMs: 0,
  });
  // The WebLLM engine's view: the models whose every file is stored.
  const engine = {
    loadedModel: null,
    models: [] as string[],
    async refresh() {
      const present: string[] = [];
      for (const e of catalog) {
        if ((await missingFiles(e, APP, caches)).length === 0) present.push(e.id);
      }
      engine.models = present;
    },
    async unload() {},
    async settled() {},
    async hasModelInCache() {
      return false;
    },
  };
  const models = new LocalModels({
    catalog,
    appUrl: APP,
    caches,
    downloads,
    queue: new EngineQueue([new EchoEngine()]),
    engine,
    forgetLosses: async () => undefined,
    downloaded,
    onChange: () => undefined,
  });
  const download = (id: string) =>
    new Promise<void>((resolve) =>
      downloads.start(id, (report) => finished(report.phase) && resolve()),
    );
  return { full, short, caches, downloaded, engine, models, download };
}

describe('deleting one of two models that share their files', () => {
  it('leaves the other downloaded and not evicted', async () => {
    const { full, short, caches, downloaded, engine, models, download } = setup();
    await download(full.id);
    await download(short.id);
    await models.deleteModel(short.id);
    // What a new host finds at start-up.
    await engine.refresh();
    await models.reconcile();
    expect(models.evicted).toEqual({});
    expect(engine.models).toContain(full.id);
    expect(downloaded.models.has(full.id)).toBe(true);
    expect(await missingFiles(full, APP, caches)).toEqual([]);
  });

  it('frees the files once both are deleted', async () => {
    const { full, short, caches, engine, models, download } = setup();
    await download(full.id);
    await download(short.id);
    await models.deleteModel(short.id);
    await models.deleteModel(full.id);
    // The library stays: other catalogue models name it (the library rule).
    expect(caches.urls).toEqual([`${BASE}lib/tiny.wasm`]);
    expect(engine.models).toEqual([]);
  });

  it('frees the files when the other was never downloaded', async () => {
    const { short, caches, engine, models, download } = setup();
    await download(short.id);
    await models.deleteModel(short.id);
    expect(caches.urls).toEqual([`${BASE}lib/tiny.wasm`]);
    expect(engine.models).toEqual([]);
  });
});

describe('WebLLM 0.2.86’s prebuilt catalogue', () => {
  it('has models that share one weights folder under two ids, which deletion must spare', () => {
    const byUrl = new Map<string, string[]>();
    for (const e of prebuiltCatalog(
      webllm.prebuiltAppConfig.model_list,
      webllm.functionCallingModelIds,
    )) {
      byUrl.set(e.model_url, [...(byUrl.get(e.model_url) ?? []), e.id]);
    }
    const shared = [...byUrl.values()].filter((ids) => ids.length > 1);
    // At 0.2.86: 26 pairs of chat models (X and X-1k), plus 2 pairs of embedding models.
    expect(shared.length).toBeGreaterThan(0);
    expect(shared).toContainEqual(
      expect.arrayContaining([
        'mlc-ai/Phi-3.5-mini-instruct-q4f16_1-MLC',
        'mlc-ai/Phi-3.5-mini-instruct-q4f16_1-MLC-1k',
      ]),
    );
  });
});
