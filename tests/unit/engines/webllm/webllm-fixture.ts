/**
 * What the tests of Hearth's WebLLM engine share: a catalogue of models, an engine on WebLLM's
 * own `MLCEngine` (./webllm-harness.ts) with scripted models, and helpers to read its outputs.
 */
import type { CreateEmbeddingResponse, EmbeddingCreateParams } from '@mlc-ai/web-llm';
import { afterAll, beforeAll } from 'vitest';
import type { EngineOutput } from '../../../../src/engines/engine';
import type { LossStore } from '../../../../src/engines/webllm/webllm-devices';
import { WebLLMEngine, type MLCEngineLike } from '../../../../src/engines/webllm/webllm-engine';
import {
  catalogEntry,
  prebuiltCatalog,
  type CatalogEntry,
  type WebLLMEntry,
} from '../../../../src/models/catalog';
import { modelBaseUrl } from '../../../../src/models/on-device';
import { parseChatRequest } from '../../../../src/protocol/validate';
import { FakeGPUAdapter, WebLLMHarness, type ScriptedModel } from './webllm-harness';

export const APP = 'https://app.example/hearth/';
export const HERMES_ID = 'Hermes-2-Pro-Llama-3-8B-q4f16_1-MLC';

export const hermes = catalogEntry(
  {
    model: `https://huggingface.co/mlc-ai/${HERMES_ID}`,
    model_id: HERMES_ID,
    model_lib: 'https://libs.example/hermes.wasm',
  },
  { owner: 'mlc-ai', source: 'prebuilt', tools: true },
);
export const smol = catalogEntry(
  {
    model: 'https://huggingface.co/mlc-ai/Smol-q4f32_1-MLC',
    model_id: 'Smol-q4f32_1-MLC',
    model_lib: 'https://libs.example/smol.wasm',
    overrides: { context_window_size: 2048 },
  },
  { owner: 'mlc-ai', source: 'prebuilt', tools: false },
);
/** A self-hosted copy that repeats the prebuilt model's WebLLM id, from files of its own. */
export const copy = catalogEntry(
  { model: 'models/smol', model_id: 'Smol-q4f32_1-MLC', model_lib: 'models/smol.wasm' },
  { owner: 'acme', id: 'acme/smol', source: 'self-hosted', tools: false },
);
/** A model whose template has no tool role. */
export const plain = catalogEntry(
  {
    model: 'https://huggingface.co/mlc-ai/Plain-q4f32_1-MLC',
    model_id: 'Plain-q4f32_1-MLC',
    model_lib: 'https://libs.example/plain.wasm',
  },
  { owner: 'mlc-ai', source: 'prebuilt', tools: false },
);
/** WebLLM's small Snowflake Arctic Embed, as the catalogue makes it from the prebuilt record. */
export const EMBED_ID = 'snowflake-arctic-embed-s-q0f32-MLC-b4';
export const arctic = ((): WebLLMEntry => {
  const [entry] = prebuiltCatalog(
    [
      {
        model: `https://huggingface.co/mlc-ai/${EMBED_ID}`,
        model_id: EMBED_ID,
        model_lib: 'https://libs.example/arctic-s-ctx512_cs512_batch4.wasm',
        model_type: 1,
      },
    ],
    [],
  );
  if (!entry?.embedding) throw new Error('the catalogue did not take the embedding record');
  return entry;
})();
/** A reasoning model (it thinks in `<think>…</think>`, and can be told not to). */
export const qwen3 = catalogEntry(
  {
    model: 'https://huggingface.co/mlc-ai/Qwen3-0.6B-q4f16_1-MLC',
    model_id: 'Qwen3-0.6B-q4f16_1-MLC',
    model_lib: 'https://libs.example/qwen3.wasm',
  },
  { owner: 'mlc-ai', source: 'prebuilt', tools: false },
);
export const CATALOG = [hermes, smol, copy, plain, arctic, qwen3];

/** Installs the harness's GPU adapter for the tests of the calling file. */
export function useFakeAdapter(): void {
  let savedAdapter: unknown;
  beforeAll(() => {
    // Hearth watches the devices the adapter hands out; the harness's loads ask this one.
    savedAdapter = (globalThis as { GPUAdapter?: unknown }).GPUAdapter;
    (globalThis as { GPUAdapter?: unknown }).GPUAdapter = FakeGPUAdapter;
  });
  afterAll(() => {
    (globalThis as { GPUAdapter?: unknown }).GPUAdapter = savedAdapter;
  });
}

/** Losses kept in memory, as `DeviceLosses` keeps them in IndexedDB. */
export function lossStore(initial: Record<string, number> = {}) {
  const counts: Record<string, number> = { ...initial };
  const store: LossStore = {
    record: async (model, detail) => {
      counts[model] = (counts[model] ?? 0) + 1;
      return { losses: counts[model] ?? 0, at: Date.now(), detail };
    },
    failing: async () =>
      Object.fromEntries(
        Object.entries(counts)
          .filter(([, n]) => n >= 2)
          .map(([m]) => [m, `${m} lost the device twice`]),
      ),
    clear: async (model) => {
      delete counts[model];
    },
  };
  return { store, counts };
}

/** What `engine.embeddings.create` does in a test; `harness` is that of the engine asked. */
export type EmbedFake = (
  request: EmbeddingCreateParams,
  harness: WebLLMHarness,
) => Promise<CreateEmbeddingResponse>;

export function setup(
  scripts: Partial<Record<string, ScriptedModel>>,
  options: { losses?: Record<string, number>; embed?: EmbedFake } = {},
) {
  const harness = new WebLLMHarness();
  for (const entry of CATALOG) {
    const script = scripts[entry.id];
    if (script) harness.models.set(modelBaseUrl(entry, APP), script);
  }
  const { store, counts } = lossStore(options.losses);
  const engine = new WebLLMEngine({
    catalog: CATALOG,
    appUrl: APP,
    caches: { open: async () => ({ match: async () => undefined }) },
    onChange: () => undefined,
    losses: store,
    createEngine: async (appConfig) => {
      const mlc = (await harness.create(appConfig)) as unknown as MLCEngineLike;
      const { embed } = options;
      if (embed) {
        // WebLLM's `Embeddings.create(request)`, as `MLCEngineLike` types it.
        const create = (request: EmbeddingCreateParams) => embed(request, harness);
        mlc.embeddings = { create } as unknown as MLCEngineLike['embeddings'];
      }
      return mlc;
    },
  });
  return { engine, harness, losses: counts };
}

export async function collect(outputs: AsyncIterable<EngineOutput>): Promise<EngineOutput[]> {
  const out: EngineOutput[] = [];
  for await (const o of outputs) out.push(o);
  return out;
}

export const request = (model: CatalogEntry, extra: Record<string, unknown> = {}) =>
  parseChatRequest({ model: model.id, messages: [{ role: 'user', content: 'hi' }], ...extra });

export const run = (engine: WebLLMEngine, body: ReturnType<typeof request>) =>
  collect(engine.generate(body, new AbortController().signal));

export const textOf = (outputs: EngineOutput[]) =>
  outputs.map((o) => (o.type === 'token' ? o.text : '')).join('');

export const endOf = (outputs: EngineOutput[]) => {
  const end = outputs.at(-1);
  if (end?.type !== 'end') throw new Error(`no end: ${JSON.stringify(outputs)}`);
  return end;
};

export const WEATHER = {
  type: 'function',
  function: {
    name: 'get_weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } } },
  },
};
export const CALL = '[{"name": "get_weather", "arguments": {"city": "Paris"}}]';
