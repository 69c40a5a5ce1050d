/**
 * The model service with both engines that load models, WebLLM's and llama.cpp's: deleting a
 * GGUF removes its files and takes it out of llama.cpp, unloading takes out whichever model is
 * in memory, and what is on the device is what either engine finds.
 */
import { describe, expect, it } from 'vitest';
import { fixtureGguf } from '../../../scripts/fixture-gguf.mjs';
import { Downloads } from '../../../src/engine-host/downloads/downloads';
import { EchoEngine } from '../../../src/engines/echo/echo-engine';
import { LocalModels, type ManagedEngine } from '../../../src/engine-host/model-service';
import { EngineQueue } from '../../../src/engine-host/queue';
import { ggufEntry } from '../../../src/models/catalog';
import { finished } from '../../../src/protocol/host/downloads';
import { missingFiles } from '../../../src/models/on-device';
import { MemoryCaches, memorySet, RangeServer } from '../fake-storage';

const APP = 'https://app.example/';
const URL_ = 'https://models.example/fixture.gguf';
const GGUF = ggufEntry({ id: 'acme/fixture-GGUF:F32', files: [URL_] }, 'self-hosted');
const MLC = 'mlc-ai/Some-Model-q4f32_1-MLC';

/** An engine as the service sees it, serving the models under `prefix`. */
class FakeEngine implements ManagedEngine {
  loadedModel: string | null = null;
  models: string[] = [];
  unloads = 0;
  refreshes = 0;
  constructor(
    readonly prefix: string,
    readonly read: () => Promise<string[]> = async () => [],
  ) {}
  serves(model: string): boolean {
    return model.startsWith(this.prefix);
  }
  async unload() {
    this.unloads += 1;
    this.loadedModel = null;
  }
  async refresh() {
    this.refreshes += 1;
    this.models = await this.read();
  }
  async settled() {}
}

function setup() {
  const caches = new MemoryCaches();
  const server = new RangeServer();
  server.serve(URL_, fixtureGguf());
  const downloaded = memorySet();
  const downloads = new Downloads({
    catalog: [GGUF],
    appUrl: APP,
    caches,
    fetch: server.fetch,
    pending: memorySet(),
    downloaded,
    onChange: () => undefined,
    retryMs: 1,
    progressMs: 0,
  });
  const webllm = Object.assign(new FakeEngine('mlc-ai/'), {
    hasModelInCache: async () => true,
  });
  const llama = new FakeEngine('acme/', async () =>
    (await missingFiles(GGUF, APP, caches)).length === 0 ? [GGUF.id] : [],
  );
  const models = new LocalModels({
    catalog: [GGUF],
    appUrl: APP,
    caches,
    downloads,
    queue: new EngineQueue([new EchoEngine()]),
    engines: [webllm, llama],
    forgetLosses: async () => undefined,
    downloaded,
    onChange: () => undefined,
  });
  const download = () =>
    new Promise<void>((resolve) =>
      downloads.start(GGUF.id, (report) => finished(report.phase) && resolve()),
    );
  return { caches, downloaded, webllm, llama, models, download };
}

describe('LocalModels with WebLLM and llama.cpp', () => {
  it('deletes a GGUF: out of llama.cpp’s memory, its files gone, llama.cpp told', async () => {
    const { caches, webllm, llama, models, download } = setup();
    await download();
    await llama.refresh();
    expect(llama.models).toEqual([GGUF.id]);
    llama.loadedModel = GGUF.id;
    webllm.loadedModel = null;
    await models.deleteModel(GGUF.id);
    expect(llama.unloads).toBe(1);
    expect(webllm.unloads).toBe(0);
    expect(caches.urls).toEqual([]);
    expect(llama.models).toEqual([]);
  });

  it('unloads whichever engine has a model in memory', async () => {
    const { webllm, llama, models } = setup();
    llama.loadedModel = GGUF.id;
    await models.unload();
    expect([webllm.unloads, llama.unloads]).toEqual([0, 1]);
    webllm.loadedModel = MLC;
    await models.unload();
    expect([webllm.unloads, llama.unloads]).toEqual([1, 1]);
    await models.unload();
    expect([webllm.unloads, llama.unloads]).toEqual([1, 1]);
  });

  it('inspects a GGUF without asking WebLLM, and sees it loaded in llama.cpp', async () => {
    const { llama, models, download } = setup();
    await download();
    llama.loadedModel = GGUF.id;
    expect(await models.inspect(GGUF.id)).toMatchObject({
      missing_files: [],
      webllm_has_model_in_cache: false,
      loaded: true,
    });
  });

  it('counts a GGUF that llama.cpp finds on the device as downloaded', async () => {
    const { downloaded, llama, models, download } = setup();
    await download();
    await downloaded.delete(GGUF.id);
    await llama.refresh();
    await models.reconcile();
    expect(await downloaded.list()).toEqual([GGUF.id]);
    expect(models.evicted).toEqual({});
  });
});
