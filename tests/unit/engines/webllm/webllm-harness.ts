/**
 * WebLLM 0.2.86's own engine code, with only the GPU replaced, for tests of Hearth's WebLLM
 * engine against the library's actual behaviour rather than against a reading of it.
 *
 * Everything between `chatCompletion()` and the GPU is WebLLM's: request checks and the
 * mutations they make (the Hermes system prompt, the forced JSON grammar for tools), the model
 * record lookup, the per-model lock, the conversation and its prompt template (`name` as the role
 * string included), prefill and KV-cache reuse, the stream generator (deltas held back mid
 * character, a trimmed stop string), stop tokens and strings, `max_tokens`, seeding, usage,
 * logprob assembly and `unload()`. A scripted pipeline stands in for the TVM/WebGPU parts of
 * `LLMChatPipeline`: it counts the KV cache, samples the tokens a test gives (choosing among
 * them by the seed it was given), makes logprob entries as WebLLM does, records `setSeed` calls
 * and the prompts it was fed, and owns a fake GPU device that a test can lose.
 *
 * WebLLM exports neither `LLMChatPipeline` (its `getLLMStates` checks `instanceof`) nor its
 * conversation templates, so the harness loads a copy of the package's bundle with those
 * internals added to its exports, and `MLCEngine.reloadInternal` runs as WebLLM wrote it (the
 * record lookup, the chat config, its device-lost handler that unloads, its abort signal, the
 * maps) with only what needs files or a GPU replaced: tvmjs's loading functions
 * (`installLoadHooks`) and two calls patched in the copy (`PATCHES`: the tokenizer, the
 * pipeline). It is pinned to 0.2.86: a version bump must re-check that (1) `PATCHES` still
 * match and `reloadInternal` still gets its caches, runtime and device from tvmjs's exports;
 * (2) `LLMChatPipeline`'s state fields (set in `makePipeline`) and its GPU-touching methods
 * (`embedAndForward`, `sampleFromRawLogits`, `resetKVCache`, `dispose`, `sync`,
 * `asyncLoadWebGPUPipelines`, `prepareGrammarMatcherForSampling`, `commitSamplerState`) keep
 * their names and roles; (3) `getTokenLogprob`'s entry shape is unchanged; (4) the sampler's
 * generator is still tvmjs's `LinearCongruentialGenerator`, seeded by `tvm.setSeed`.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AppConfig } from '@mlc-ai/web-llm';
import { CHATML, FakeDevice, FakeGPUAdapter, FakeTokenizer } from './webllm-fakes';

export { CHATML, FakeDevice, FakeGPUAdapter, FakeTokenizer, NO_TOOL_ROLE } from './webllm-fakes';

/** The version whose internals the harness knows. */
export const WEBLLM_VERSION = '0.2.86';

const require = createRequire(import.meta.url);

/** WebLLM's module, with the internals the harness needs. */
interface WebLLMInternals {
  MLCEngine: new (config: { appConfig: AppConfig; logLevel?: string }) => MLCEngineInternal;
  functionCallingModelIds: string[];
  __LLMChatPipeline: { prototype: object };
  __getConversation: (template: object, config?: object) => unknown;
  __findModelRecord: (
    modelId: string,
    appConfig: AppConfig,
  ) => { model: string; model_id: string; model_type?: number; overrides?: object };
  /**
   * tvmjs, inlined in the bundle: its `LinearCongruentialGenerator` is WebLLM's sampling RNG, and
   * its loading functions (looked up on this object at each call) are what the harness replaces.
   */
  __tvmjs: TvmExports;
}

/** The parts of tvmjs's exports the harness uses or replaces. */
interface TvmExports {
  LinearCongruentialGenerator: new () => WebLLMRandom;
  createArtifactCache: (...args: unknown[]) => unknown;
  createPolyfillWASI: (...args: unknown[]) => unknown;
  instantiate: (...args: unknown[]) => Promise<unknown>;
  detectGPUDevice: (...args: unknown[]) => Promise<unknown>;
}

/** WebLLM's random generator (tvmjs's `LinearCongruentialGenerator`). */
export interface WebLLMRandom {
  setSeed(seed: number): void;
  randomFloat(): number;
}

/** The parts of `MLCEngine` the harness reaches into. */
export interface MLCEngineInternal {
  appConfig: AppConfig;
  deviceLostIsError: boolean;
  reloadController: AbortController | undefined;
  loadedModelIdToPipeline: Map<string, unknown>;
  loadedModelIdToChatConfig: Map<string, unknown>;
  loadedModelIdToModelType: Map<string, number>;
  loadedModelIdToLock: Map<string, unknown>;
  reloadInternal: (modelId: string, chatOpts?: object) => Promise<void>;
  unload(): Promise<void>;
  reload(modelId: string): Promise<void>;
}

let internals: Promise<WebLLMInternals> | undefined;

/** Imports (once) a copy of WebLLM's bundle that also exports the internals. */
export function webllmInternals(): Promise<WebLLMInternals> {
  internals ??= (async () => {
    const pkgFile = require.resolve('@mlc-ai/web-llm/package.json');
    const { version } = JSON.parse(readFileSync(pkgFile, 'utf8')) as { version: string };
    if (version !== WEBLLM_VERSION) {
      throw new Error(
        `The WebLLM harness knows ${WEBLLM_VERSION}, not ${version}: re-check what its header lists, then update WEBLLM_VERSION.`,
      );
    }
    const source = readFileSync(join(dirname(pkgFile), 'lib', 'index.js'), 'utf8');
    const exported = [
      'LLMChatPipeline as __LLMChatPipeline',
      'getConversation as __getConversation',
      'findModelRecord$1 as __findModelRecord',
      'libExports$2 as __tvmjs',
    ];
    // `reloadInternal` runs as WebLLM wrote it (its device-lost handler, its abort, its maps);
    // only the tokenizer and the pipeline, which need the model's files and the GPU, are the
    // harness's (`LOAD_HOOKS`), beside tvmjs's loading functions (`installLoadHooks`).
    let patched = source;
    for (const [from, to] of PATCHES) {
      if (patched.split(from).length !== 2) {
        throw new Error(`The WebLLM harness expected ${JSON.stringify(from)} once in the bundle.`);
      }
      patched = patched.replace(from, to);
    }
    // Inside node_modules, so that vitest loads it as it is, like any dependency.
    const dir = join(dirname(pkgFile), '..', '..', '.cache', 'hearth');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `web-llm-${version}-internals.mjs`);
    // Written whole under a name of this process's, then renamed into place: a test file
    // importing the copy in parallel never reads a half-written one.
    const partial = `${file}.${process.pid}.${Date.now()}.tmp`;
    writeFileSync(partial, `${patched}\nexport { ${exported.join(', ')} };\n`);
    renameSync(partial, file);
    const lib = (await import(pathToFileURL(file).href)) as WebLLMInternals;
    installLoadHooks(lib);
    return lib;
  })();
  return internals;
}

/** The hooks the patched bundle calls, on `globalThis` (the copy is a module of its own). */
interface LoadHooks {
  tokenizer: () => Promise<FakeTokenizer>;
  Pipeline: (this: unknown, tvm: unknown, tokenizer: unknown, config: object) => object;
}

/** Where the bundle's `reloadInternal` would need the model's files or the GPU. */
const PATCHES: [string, string][] = [
  [
    'const tokenizer = yield asyncLoadTokenizer(modelUrl, curModelConfig, this.appConfig, this.logger, modelRecord.integrity);',
    'const tokenizer = yield globalThis.__hearthWebLLMHooks.tokenizer();',
  ],
  // An embedding model gets a chat pipeline too (its tests fake `embeddings.create`).
  [
    'newPipeline = new EmbeddingPipeline(tvm, tokenizer, curModelConfig);',
    'newPipeline = new globalThis.__hearthWebLLMHooks.Pipeline(tvm, tokenizer, curModelConfig);',
  ],
  [
    'newPipeline = new LLMChatPipeline(tvm, tokenizer, curModelConfig,',
    'newPipeline = new globalThis.__hearthWebLLMHooks.Pipeline(tvm, tokenizer, curModelConfig,',
  ],
];

/** The load under way: which harness, for which scripted model. */
interface LoadContext {
  harness: WebLLMHarness;
  model: ScriptedModel | undefined;
  modelId: string;
  lib: WebLLMInternals;
  device?: FakeDevice;
}
let loading: LoadContext | undefined;

function currentLoad(): LoadContext {
  if (!loading) throw new Error('the WebLLM harness was asked to load outside a reload');
  return loading;
}

/**
 * Replaces what `reloadInternal` fetches, instantiates and asks of the GPU while a harness loads
 * (tvmjs's functions are looked up on its exports at each call): the chat config comes from the
 * scripted model, the weights "download" runs its `onLoad` and honours the reload's abort
 * signal as a fetch does, and the device comes from the installed `GPUAdapter`.
 */
function installLoadHooks(lib: WebLLMInternals): void {
  const tvmjs = lib.__tvmjs;
  const original = { ...tvmjs };
  tvmjs.createArtifactCache = (...args: unknown[]) => {
    if (!loading) return original.createArtifactCache(...args);
    const load = loading;
    return {
      async fetchWithCache(url: string) {
        if (args[0] !== 'webllm/config') return new ArrayBuffer(8); // the wasm
        if (!load.model) throw new Error(`Failed to fetch ${url}`);
        const config = { ...CHAT_CONFIG, ...load.model.chatConfig };
        return new TextEncoder().encode(JSON.stringify(config)).buffer;
      },
    };
  };
  tvmjs.createPolyfillWASI = (...args: unknown[]) =>
    loading ? {} : original.createPolyfillWASI(...args);
  tvmjs.instantiate = async (...args: unknown[]) => {
    if (!loading) return original.instantiate(...args);
    const load = loading;
    return {
      registerInitProgressCallback() {},
      initWebGPU() {},
      webgpu: () => ({}),
      // Where the weights download: a test makes it wait, fail or lose the device.
      async fetchTensorCache(_url: string, _device: unknown, options?: { signal?: AbortSignal }) {
        await load.model?.onLoad?.(load.harness);
        await new Promise((resolve) => setTimeout(resolve, 0));
        if (options?.signal?.aborted) {
          throw new DOMException('The operation was aborted.', 'AbortError');
        }
      },
    };
  };
  tvmjs.detectGPUDevice = async (...args: unknown[]) => {
    if (!loading) return original.detectGPUDevice(...args);
    const load = loading;
    const adapter = (globalThis as unknown as { GPUAdapter?: typeof FakeGPUAdapter }).GPUAdapter;
    const device = adapter
      ? await adapter.prototype.requestDevice.call(adapter.prototype)
      : new FakeDevice();
    load.device = device;
    load.harness.devices.push(device);
    return { adapter: {}, adapterInfo: { description: '', vendor: 'harness' }, device };
  };
  const hooks: LoadHooks = {
    tokenizer: async () => currentLoad().harness.tokenizer,
    // Called with `new` (so a function, not a method): the object it returns is the pipeline.
    Pipeline: function (_tvm, _tokenizer, config) {
      const load = currentLoad();
      if (!load.model || !load.device) throw new Error('no scripted model or device to load');
      load.harness.loads.push(load.modelId);
      return makePipeline(
        lib.__LLMChatPipeline.prototype,
        lib.__getConversation,
        config as typeof CHAT_CONFIG,
        load.model,
        load.harness,
        load.device,
        new tvmjs.LinearCongruentialGenerator(),
      );
    },
  };
  (globalThis as { __hearthWebLLMHooks?: LoadHooks }).__hearthWebLLMHooks = hooks;
}

/** A token of a scripted reply: a piece of text, or raw bytes (part of a character). */
export type ScriptToken = string | { bytes: number[] };

/** What a scripted model is told when it starts a reply. */
export interface Turn {
  /** The whole prompt prefilled for this reply, as text (new tokens only when the KV cache was reused). */
  prompt: string;
  /** The seed last given to the pipeline (`setSeed`), if any. */
  seed: number | undefined;
  /** How many replies this pipeline has started before this one. */
  index: number;
  /**
   * The next draw of the pipeline's random generator: WebLLM's own (tvmjs's linear
   * congruential one, seeded by `setSeed` as WebLLM seeds it), as its sampler draws per token.
   */
  random: () => number;
  /** The generation config WebLLM made of the request (penalties, `enable_thinking`…). */
  config: Record<string, unknown>;
}

/** A model WebLLM can load from a URL: its `mlc-chat-config.json` and how it replies. */
export interface ScriptedModel {
  chatConfig?: Record<string, unknown>;
  /** The tokens of the reply; a stop token follows unless `endless`. */
  reply: (turn: Turn) => ScriptToken[];
  /** Keep repeating the reply instead of ending it (for `max_tokens`). */
  endless?: boolean;
  /** Runs as each token is sampled (`step` counts from 1): a test loses the device mid-reply. */
  onToken?: (harness: WebLLMHarness, step: number) => void;
  /** Runs as each chunk is forwarded (a prefill chunk, or a decoded token): `length` tokens. */
  onForward?: (harness: WebLLMHarness, length: number) => void;
  /** Runs as the weights download (`fetchTensorCache`): a test makes the load wait, or fail. */
  onLoad?: (harness: WebLLMHarness) => Promise<void> | void;
  /** Runs as the pipeline allocates GPU memory, after the download. */
  onAllocate?: (harness: WebLLMHarness) => Promise<void> | void;
}

const CHAT_CONFIG = {
  temperature: 0.7,
  top_p: 0.95,
  repetition_penalty: 1,
  frequency_penalty: 0,
  presence_penalty: 0,
  context_window_size: 4096,
  sliding_window_size: -1,
  attention_sink_size: -1,
  prefill_chunk_size: 2048,
  vocab_size: 32000,
  conv_template: CHATML,
  tokenizer_info: { token_postproc_method: 'byte_level', prepend_space_in_encode: false },
};

/** The pipeline WebLLM drives, with the GPU's work scripted. */
function makePipeline(
  proto: object,
  getConversation: WebLLMInternals['__getConversation'],
  config: typeof CHAT_CONFIG & Record<string, unknown>,
  model: ScriptedModel,
  harness: WebLLMHarness,
  device: FakeDevice,
  rng: WebLLMRandom,
): object {
  const tokenizer = harness.tokenizer;
  const template = config.conv_template;
  const stopToken = template.stop_token_ids[0] ?? tokenizer.idOf('<|im_end|>');
  let script: number[] = [];
  let step = 0;
  let replies = 0;
  let seed: number | undefined;
  const state = {
    // LLMChatPipeline's constructor state (0.2.86).
    kvStateKind: 'kv_cache',
    filledKVCacheLength: 0,
    bosTokenId: 1,
    contextWindowSize: config.context_window_size,
    slidingWindowSize: config.sliding_window_size,
    attentionSinkSize: config.attention_sink_size,
    prefillChunkSize: config.prefill_chunk_size,
    resetStatsPerPrefill: true,
    maxHistorySize: 1,
    outputMessage: '',
    outputIds: [] as number[],
    stopTriggered: false,
    finishReason: undefined,
    appearedTokensFreq: new Map(),
    imageDataCache: new Map(),
    artifactImagePixelCache: new Map(),
    kvCheckpointFuncs: new Map(),
    tokenLogprobArray: [] as unknown[],
    decodingTotalTime: 0,
    decodingTotalTokens: 0,
    prefillTotalTime: 0,
    prefillTotalTokens: 0,
    curRoundDecodingTotalTokens: 0,
    curRoundCompletionTotalTokens: 0,
    curRoundPrefillTotalTokens: 0,
    curRoundDecodingTotalTime: 0,
    curRoundPrefillTotalTime: 0,
    curRoundGrammarInitTotalTime: 0,
    curRoundGrammarPerTokenTotalTime: 0,
    curRoundLatencyBreakdown: {
      logitProcessorTime: [],
      logitBiasTime: [],
      penaltyTime: [],
      sampleTime: [],
      totalTime: [],
      grammarBitmaskTime: [],
    },
    config,
    tokenizer,
    fullVocabSize: config.vocab_size,
    conversation: getConversation(template, config['conv_config'] as object | undefined),
    stopStr: template.stop_str,
    stopTokens: template.stop_token_ids,
    token_postproc_method: 'byte_level',
    prepend_space_in_encode: false,
    device: { sync: async () => undefined },
    tvm: {
      beginScope() {},
      endScope() {},
      detachFromCurrentScope: <T>(x: T) => x,
      setSeed(value: number) {
        harness.seeds.push(value);
        // tvmjs's `setSeed`: the generator refuses what it cannot take, as in the browser.
        rng.setSeed(value);
        seed = value;
      },
      dispose() {},
    },
  };
  const scripted = {
    // The GPU's work: the KV cache grows by what is fed; logits are a token chosen in advance.
    async embedAndForward(this: typeof state, inputData: number[][], length: number) {
      const ids = inputData.flat();
      if (ids.length > 1 || step === 0)
        harness.prompts.push(tokenizer.decode(Int32Array.from(ids)));
      this.filledKVCacheLength += length;
      model.onForward?.(harness, length);
      return { dispose() {} };
    },
    async sampleFromRawLogits(
      this: typeof state,
      _logits: unknown,
      genConfig?: { logprobs?: boolean | null; top_logprobs?: number | null },
    ) {
      harness.genConfigs.push({ ...genConfig });
      // The reply starts at the first sample (outputIds may already hold an empty think block).
      if (step === 0) {
        const turn = {
          prompt: harness.prompts.at(-1) ?? '',
          seed,
          index: replies,
          random: () => rng.randomFloat(),
          config: { ...genConfig },
        };
        replies += 1;
        script = model
          .reply(turn)
          .map((t) => (typeof t === 'string' ? tokenizer.idOf(t) : tokenizer.idOfBytes(t.bytes)));
      }
      let id: number;
      if (step < script.length || (model.endless && script.length > 0)) {
        id = script[step % script.length] ?? stopToken;
      } else id = stopToken;
      step += 1;
      model.onToken?.(harness, step);
      const top = genConfig?.top_logprobs ?? 0;
      // WebLLM makes an entry only when `top_logprobs` > 0 (0.2.86, sampleFromRawLogits).
      if (genConfig?.logprobs && top > 0) {
        const token = tokenizer.decode(Int32Array.of(id));
        const bytes = [...new TextEncoder().encode(token)];
        const logprob = -0.25 * step;
        this.tokenLogprobArray.push({
          token,
          bytes,
          logprob,
          top_logprobs: Array.from({ length: top }, (_, i) => ({
            token: i === 0 ? token : `alt${i}`,
            bytes: i === 0 ? bytes : [...new TextEncoder().encode(`alt${i}`)],
            logprob: logprob - i,
          })),
        });
      }
      return id;
    },
    resetKVCache() {
      step = 0;
    },
    prepareGrammarMatcherForSampling(genConfig?: { response_format?: unknown }) {
      // xgrammar's wasm is not run: the forced format is recorded instead.
      harness.responseFormats.push(genConfig?.response_format);
      step = 0;
      return undefined;
    },
    async asyncLoadWebGPUPipelines() {
      await model.onAllocate?.(harness);
    },
    commitSamplerState() {},
    dispose() {
      harness.disposed += 1;
      // Disposing the pipeline disposes TVM, which destroys its device.
      device.destroy();
    },
    async sync() {},
  };
  const pipeline = Object.assign(Object.create(proto) as object, state, scripted);
  return pipeline;
}

/** WebLLM's real `MLCEngine`, on scripted pipelines. */
export class WebLLMHarness {
  readonly tokenizer = new FakeTokenizer();
  /** The models WebLLM can fetch, by their record's `model` URL. */
  readonly models = new Map<string, ScriptedModel>();
  /** Every prompt prefilled, as text. */
  readonly prompts: string[] = [];
  /** Every `setSeed` call, in order. */
  readonly seeds: number[] = [];
  /** The `response_format` each generation ran with (WebLLM forces one for tools). */
  readonly responseFormats: unknown[] = [];
  /** The generation config of every token sampled, in order. */
  readonly genConfigs: Record<string, unknown>[] = [];
  /** The WebLLM model ids loaded, in order. */
  readonly loads: string[] = [];
  /** The devices handed to loads, newest last. */
  readonly devices: FakeDevice[] = [];
  disposed = 0;
  engine: MLCEngineInternal | undefined;

  /** The device of the model loaded last. */
  get device(): FakeDevice {
    const device = this.devices.at(-1);
    if (!device) throw new Error('no model was loaded');
    return device;
  }

  /** Makes WebLLM's `MLCEngine` for `appConfig`, as Hearth's `createEngine` option wants. */
  async create(appConfig: AppConfig): Promise<MLCEngineInternal> {
    const lib = await webllmInternals();
    const engine = new lib.MLCEngine({ appConfig, logLevel: 'SILENT' });
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const harness = this;
    // WebLLM's own `reloadInternal`, told which harness and model it loads for the hooks.
    const reloadInternal = engine.reloadInternal;
    engine.reloadInternal = function (this: MLCEngineInternal, modelId, chatOpts) {
      const record = lib.__findModelRecord(modelId, this.appConfig);
      const model = harness.models.get(new URL(record.model, 'https://app.example/').href);
      const load: LoadContext = { harness, model, modelId, lib };
      loading = load;
      // It reads `location.origin` at once, synchronously, to resolve relative URLs.
      const scope = globalThis as { location?: unknown };
      const saved = Object.getOwnPropertyDescriptor(scope, 'location');
      scope.location = { origin: 'https://app.example' };
      try {
        return reloadInternal.call(this, modelId, chatOpts).finally(() => {
          if (loading === load) loading = undefined;
        });
      } finally {
        if (saved) Object.defineProperty(scope, 'location', saved);
        else delete scope.location;
      }
    };
    this.engine = engine;
    return engine;
  }

  /** WebLLM's function-calling model ids. */
  async functionCallingModelIds(): Promise<string[]> {
    return (await webllmInternals()).functionCallingModelIds;
  }
}
