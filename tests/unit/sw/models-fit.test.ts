/**
 * The catalogue's `backend`, `fit` and `fit_reason` as the service worker's model directory gives
 * them from what the host measured, and `hostCpu`, which asks the host for the processor's facts.
 */
import { describe, expect, it } from 'vitest';
import { CURATED_GGUF } from '../../../src/models/curated-gguf';
import { catalogEntry, ggufEntry, type GpuFacts } from '../../../src/models/catalog';
import { SOFTWARE_ADAPTER_REASON } from '../../../src/models/fit';
import { ECHO_MODEL } from '../../../src/models/models';
import { OpenAIError } from '../../../src/protocol/errors';
import type { CpuFacts } from '../../../src/protocol/host/cpu-facts';
import { hostCpu } from '../../../sw/device';
import { DeviceModels, type DeviceModelsOptions } from '../../../sw/models';
import { ROOMY_LIMITS } from '../helpers';

/** SwiftShader, as Chromium offers it here: a software adapter without shader-f16. */
const SWIFTSHADER: GpuFacts = {
  webgpu: true,
  adapter: {
    vendor: 'google',
    architecture: 'swiftshader',
    fallback: true,
    features: [],
    limits: ROOMY_LIMITS,
  },
};
/** Two cores without isolation: llama.cpp gets one thread, which reads 5 GB/s in the probe. */
const TWO_CORES: CpuFacts = {
  cores: 2,
  threads: 1,
  isolated: false,
  bytes_per_second: 5e9,
  memory_gb: null,
  measured_at: 0,
};

const webllm = (modelId: string) =>
  catalogEntry(
    { model: `https://hf.example/${modelId}`, model_id: modelId, model_lib: 'lib.wasm' },
    { owner: 'mlc-ai', source: 'prebuilt', tools: false },
  );
const entries = [
  webllm('SmolLM2-360M-Instruct-q4f32_1-MLC'),
  webllm('SmolLM2-360M-Instruct-q4f16_1-MLC'),
  ...CURATED_GGUF.map((record) => ggufEntry(record, 'curated')),
];

/** No file of any model is on the device. */
const EMPTY_CACHES = { open: async () => ({ match: async () => undefined }) };

/**
 * The directory under a host that measured `gpu` and `cpu` (undefined host: no tab hosts; `cpu`
 * undefined: the host will not say, as an older build's or one whose probe failed).
 */
function directory(
  facts: { gpu: GpuFacts | null; cpu: CpuFacts | null | undefined } | undefined,
  over: Partial<DeviceModelsOptions> = {},
) {
  const noHost = () => new OpenAIError('engine_unavailable', 'No tab hosts the engine.');
  return new DeviceModels({
    catalog: entries,
    appUrl: 'https://app.example/',
    caches: EMPTY_CACHES,
    host: async () =>
      facts ? { loaded_model: null, failing_models: {}, evicted_models: {} } : null,
    device: async () => {
      if (!facts) throw noHost();
      return facts.gpu;
    },
    cpu: async () => {
      if (!facts) throw noHost();
      return facts.cpu;
    },
    storage: async () => ({ usage_bytes: 0, quota_bytes: 100e9, persisted: false }),
    ...over,
  });
}

describe('the catalogue’s fit', () => {
  it('on two cores with a software adapter: no model of billions of parameters and no WebLLM model is good', async () => {
    const catalog = await directory({ gpu: SWIFTSHADER, cpu: TWO_CORES }).catalog();
    for (const m of catalog) expect(m.fit).not.toBeNull();
    // Of billions of parameters: its name says so (`-4B-`), or its Q4 file is over a GB (Phi-3.5 mini).
    const billions = (m: { id: string; size_mb: number | null }) =>
      Number(/[-_](\d+(?:\.\d+)?)B[-_:]/i.exec(m.id)?.[1] ?? 0) >= 1 || (m.size_mb ?? 0) >= 1000;
    expect(catalog.filter((m) => m.fit === 'good' && billions(m)).map((m) => m.id)).toEqual([]);
    expect(catalog.filter((m) => billions(m)).length).toBeGreaterThan(5);
    expect(catalog.find((m) => m.id === 'mlc-ai/SmolLM2-360M-Instruct-q4f32_1-MLC')).toMatchObject({
      backend: 'webgpu',
      fit: 'slow',
      fit_reason: SOFTWARE_ADAPTER_REASON,
      available: true,
    });
    const qwen4b = catalog.find((m) => m.id === 'unsloth/Qwen3-4B-GGUF:Q4_K_M');
    expect(qwen4b).toMatchObject({ backend: 'cpu', fit: 'slow', available: true });
    expect(qwen4b?.fit_reason).toMatch(/tokens a second on this device's CPU \(1 thread/);
  });

  it('keeps available and fit in agreement: available is false exactly where fit is no, with the same reason', async () => {
    const tight = directory(
      { gpu: SWIFTSHADER, cpu: TWO_CORES },
      { storage: async () => ({ usage_bytes: 1e9, quota_bytes: 2e9, persisted: false }) },
    );
    const catalog = await tight.catalog();
    expect(catalog.some((m) => m.fit === 'no')).toBe(true);
    for (const m of catalog) {
      expect(m.available === false).toBe(m.fit === 'no');
      if (m.fit === 'no') expect(m.unavailable_reason).toBe(m.fit_reason);
    }
    const f16 = catalog.find((m) => m.id === 'mlc-ai/SmolLM2-360M-Instruct-q4f16_1-MLC');
    expect(f16?.fit_reason).toMatch(/shader-f16/);
    const big = catalog.find((m) => m.id === 'unsloth/Qwen3-4B-GGUF:Q4_K_M');
    expect(big?.fit_reason).toMatch(/more than the storage this site has left/);
  });

  it('calls a model that lost the GPU device twice here no, saying so, whatever the rule would say', async () => {
    const id = 'mlc-ai/SmolLM2-360M-Instruct-q4f32_1-MLC';
    const failing = directory(
      { gpu: SWIFTSHADER, cpu: TWO_CORES },
      {
        host: async () => ({
          loaded_model: null,
          failing_models: { [id]: 'Lost the GPU device twice.' },
          evicted_models: {},
        }),
      },
    );
    expect((await failing.catalog()).find((m) => m.id === id)).toMatchObject({
      available: false,
      unavailable_reason: 'Lost the GPU device twice.',
      fit: 'no',
      fit_reason: 'Lost the GPU device twice.',
    });
  });

  it('calls the echo engine good, run nowhere in particular', async () => {
    const catalog = await directory({ gpu: SWIFTSHADER, cpu: TWO_CORES }).catalog();
    expect(catalog.find((m) => m.id === ECHO_MODEL.id)).toMatchObject({
      backend: null,
      fit: 'good',
      available: true,
    });
  });

  it('leaves every fit null, saying why, while no tab hosts the engine: nothing has measured', async () => {
    const catalog = await directory(undefined).catalog();
    const models = catalog.filter((m) => m.id !== ECHO_MODEL.id);
    for (const m of models) {
      expect(m).toMatchObject({ fit: null, backend: null, available: null });
      expect(m.fit_reason).toMatch(/^Not known yet: no tab of Hearth hosts the engine/);
    }
  });

  it('judges what the GPU alone decides while the processor is not measured, and says the rest is not known', async () => {
    const catalog = await directory({ gpu: SWIFTSHADER, cpu: null }).catalog();
    const byId = new Map(catalog.map((m) => [m.id, m]));
    expect(byId.get('mlc-ai/SmolLM2-360M-Instruct-q4f16_1-MLC')).toMatchObject({
      fit: 'no',
      available: false,
    });
    expect(byId.get('unsloth/Qwen3-4B-GGUF:Q4_K_M')).toMatchObject({
      fit: null,
      backend: 'cpu',
      available: true,
      fit_reason: expect.stringMatching(/measuring this device's processor/),
    });
  });

  it('judges every model when the host will not measure the processor: a GGUF on the CPU slow, saying why, never unknown for good', async () => {
    const catalog = await directory({ gpu: SWIFTSHADER, cpu: undefined }).catalog();
    expect(catalog.filter((m) => m.fit === null)).toEqual([]);
    const byId = new Map(catalog.map((m) => [m.id, m]));
    expect(byId.get('mlc-ai/SmolLM2-360M-Instruct-q4f16_1-MLC')).toMatchObject({ fit: 'no' });
    expect(byId.get('unsloth/Qwen3-4B-GGUF:Q4_K_M')).toMatchObject({
      fit: 'slow',
      backend: 'cpu',
      available: true,
      fit_reason: expect.stringMatching(/processor was not measured/),
    });
  });
});

describe('hostCpu', () => {
  it('asks a host once for its processor’s facts, and again while it has not measured them', async () => {
    let asked = 0;
    let cpu: CpuFacts | null = null;
    const facts = hostCpu({
      port: async () => undefined,
      hostId: () => 'a',
      status: async () => {
        asked += 1;
        return { host: { id: 'a', build: 'b' }, device: null, cpu };
      },
    });
    expect(await facts()).toBeNull();
    cpu = TWO_CORES;
    expect(await facts()).toEqual(TWO_CORES);
    expect(await facts()).toEqual(TWO_CORES);
    expect(asked).toBe(2);
  });

  it('asks the next host again, and takes a host that says nothing of the processor as one that will not', async () => {
    let id = 'a';
    let status: { host: { id: string; build: string }; device: null; cpu?: CpuFacts | null } = {
      host: { id: 'a', build: 'b' },
      device: null,
      cpu: TWO_CORES,
    };
    const facts = hostCpu({
      port: async () => undefined,
      hostId: () => id,
      status: async () => status,
    });
    expect(await facts()).toEqual(TWO_CORES);
    id = 'older';
    status = { host: { id: 'older', build: 'old' }, device: null };
    expect(await facts()).toBeUndefined();
  });
});
