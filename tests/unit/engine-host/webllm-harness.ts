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
 * internals added to its exports. It is pinned to 0.2.86: a version bump must re-check that
 * (1) `MLCEngine.reloadInternal` still only fetches, compiles and allocates before it fills the
 * `loadedModelIdTo…` maps (the harness replays its bookkeeping, below), and that its device-lost
 * handler still unloads; (2) `LLMChatPipeline`'s state fields (set in `ScriptedPipeline`'s
 * constructor) and its GPU-touching methods (`embedAndForward`, `sampleFromRawLogits`,
 * `resetKVCache`, `dispose`, `sync`, `prepareGrammarMatcherForSampling`, `commitSamplerState`)
 * keep their names and roles; (3) `getTokenLogprob`'s entry shape is unchanged.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AppConfig } from '@mlc-ai/web-llm';

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
  __CustomLock: new () => unknown;
  __DeviceLostError: new () => Error;
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
      'CustomLock as __CustomLock',
      'DeviceLostError as __DeviceLostError',
    ];
    // Inside node_modules, so that vitest loads it as it is, like any dependency.
    const dir = join(dirname(pkgFile), '..', '..', '.cache', 'hearth');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `web-llm-${version}-internals.mjs`);
    writeFileSync(file, `${source}\nexport { ${exported.join(', ')} };\n`);
    return (await import(pathToFileURL(file).href)) as WebLLMInternals;
  })();
  return internals;
}

/** Special tokens of the fake vocabulary, each one id. */
const SPECIALS = ['<|im_start|>', '<|im_end|>', '<|endoftext|>'];
const SPECIAL_BASE = 256;
const PIECE_BASE = 512;

/** The ChatML template as MLC's `mlc-chat-config.json` gives it (Qwen, Hermes-2-Pro…). */
export const CHATML = {
  name: 'chatml',
  system_template: '<|im_start|>system\n{system_message}<|im_end|>\n',
  system_message: 'You are a helpful assistant.',
  roles: { user: '<|im_start|>user', assistant: '<|im_start|>assistant', tool: '<|im_start|>tool' },
  role_templates: {
    user: '{user_message}',
    assistant: '{assistant_message}',
    tool: '{tool_message}',
  },
  messages: [],
  seps: ['<|im_end|>\n'],
  role_content_sep: '\n',
  role_empty_sep: '\n',
  stop_str: ['<|im_end|>'],
  system_prefix_token_ids: [],
  // `<|im_end|>`: WebLLM takes stop tokens from the chat config's template at every prefill.
  stop_token_ids: [SPECIAL_BASE + 1],
  add_role_after_system_message: true,
};

/** A template without a tool role (Llama-2, Phi…). */
export const NO_TOOL_ROLE = {
  ...CHATML,
  name: 'no-tool-role',
  roles: { user: '<|im_start|>user', assistant: '<|im_start|>assistant' },
};

/**
 * A byte-level tokenizer: single bytes (the byte fallback), special tokens, then pieces a test
 * registers — text, or raw bytes that end mid-character, as real tokenizers split CJK and emoji.
 */
export class FakeTokenizer {
  readonly #pieces: Uint8Array[] = [];
  readonly #texts: string[] = [];

  /** The id of `piece`: a special token, or a registered piece of text. */
  idOf(piece: string): number {
    const special = SPECIALS.indexOf(piece);
    if (special !== -1) return SPECIAL_BASE + special;
    return this.#register(new TextEncoder().encode(piece), piece);
  }

  /** The id of a token made of raw bytes (one byte is the byte fallback's own token). */
  idOfBytes(bytes: readonly number[]): number {
    if (bytes.length === 1) return bytes[0] ?? 0;
    return this.#register(Uint8Array.from(bytes), '');
  }

  #register(bytes: Uint8Array, text: string): number {
    let index = this.#pieces.findIndex(
      (p) => p.length === bytes.length && p.every((b, i) => b === bytes[i]),
    );
    if (index === -1) {
      index = this.#pieces.push(bytes) - 1;
      this.#texts.push(text);
    }
    return PIECE_BASE + index;
  }

  #bytesOf(id: number): Uint8Array {
    if (id < SPECIAL_BASE) return Uint8Array.of(id);
    if (id < PIECE_BASE) return new TextEncoder().encode(SPECIALS[id - SPECIAL_BASE] ?? '');
    return this.#pieces[id - PIECE_BASE] ?? new Uint8Array();
  }

  encode(text: string): Int32Array {
    const ids: number[] = [];
    let i = 0;
    outer: while (i < text.length) {
      for (const special of SPECIALS) {
        if (text.startsWith(special, i)) {
          ids.push(this.idOf(special));
          i += special.length;
          continue outer;
        }
      }
      let best = -1;
      this.#texts.forEach((t, index) => {
        if (
          t !== '' &&
          text.startsWith(t, i) &&
          (best === -1 || t.length > (this.#texts[best] ?? '').length)
        )
          best = index;
      });
      if (best !== -1) {
        ids.push(PIECE_BASE + best);
        i += this.#texts[best]?.length ?? 1;
        continue;
      }
      const char = String.fromCodePoint(text.codePointAt(i) ?? 0);
      ids.push(...new TextEncoder().encode(char));
      i += char.length;
    }
    return Int32Array.from(ids);
  }

  decode(ids: Int32Array): string {
    const bytes = [...ids].flatMap((id) => [...this.#bytesOf(id)]);
    return new TextDecoder().decode(Uint8Array.from(bytes));
  }

  getVocabSize(): number {
    return PIECE_BASE + this.#pieces.length;
  }

  dispose(): void {}
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
  /** Runs at load time: a test makes the load wait, or fail. */
  onLoad?: (harness: WebLLMHarness) => Promise<void> | void;
}

/** A GPU device as WebLLM and Hearth watch it. */
export class FakeDevice {
  readonly lost: Promise<{ reason: string; message: string }>;
  #resolve!: (info: { reason: string; message: string }) => void;
  destroyed = false;

  constructor() {
    this.lost = new Promise((resolve) => (this.#resolve = resolve));
  }

  /** What `device.destroy()` does: WebLLM calls it on a failed allocation (out of memory). */
  destroy(): void {
    this.destroyed = true;
    this.#resolve({ reason: 'destroyed', message: 'Device was destroyed.' });
  }

  /** A loss the browser decided (a driver reset, a GPU process crash). */
  loseUnexpectedly(message = 'GPU process crashed'): void {
    this.#resolve({ reason: 'unknown', message });
  }
}

/** The adapter the harness installs as `globalThis.GPUAdapter`, so Hearth's device watch sees devices. */
export class FakeGPUAdapter {
  async requestDevice(): Promise<FakeDevice> {
    return new FakeDevice();
  }
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
        seed = value;
        harness.seeds.push(value);
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
      return { dispose() {} };
    },
    async sampleFromRawLogits(
      this: typeof state,
      _logits: unknown,
      genConfig?: { logprobs?: boolean | null; top_logprobs?: number | null },
    ) {
      if (this.outputIds.length === 0 && step === 0) {
        const turn = { prompt: harness.prompts.at(-1) ?? '', seed, index: replies };
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
    // `reloadInternal` without the fetching, compiling and allocating: the record lookup, the
    // chat config (record overrides over the model's file), the device-lost handler, the maps.
    engine.reloadInternal = async function (this: MLCEngineInternal, modelId, chatOpts) {
      const record = lib.__findModelRecord(modelId, this.appConfig);
      const model = harness.models.get(new URL(record.model, 'https://app.example/').href);
      if (!model)
        throw new Error(`Failed to fetch ${record.model}/resolve/main/mlc-chat-config.json`);
      this.loadedModelIdToModelType.set(modelId, record.model_type ?? 0);
      const config = { ...CHAT_CONFIG, ...model.chatConfig, ...record.overrides, ...chatOpts };
      this.loadedModelIdToChatConfig.set(modelId, config);
      const adapter = (globalThis as { GPUAdapter?: typeof FakeGPUAdapter }).GPUAdapter;
      const device = adapter
        ? await adapter.prototype.requestDevice.call(adapter.prototype)
        : new FakeDevice();
      harness.devices.push(device);
      let lostInReload = false;
      void device.lost.then(() => {
        if (this.deviceLostIsError) {
          void this.unload();
          lostInReload = true;
        }
      });
      // Where the weights would download: a test makes the load wait, fail or lose the device.
      await model.onLoad?.(harness);
      if (this.reloadController?.signal.aborted) {
        throw new DOMException('Engine.unload() is called.', 'AbortError');
      }
      const pipeline = makePipeline(
        lib.__LLMChatPipeline.prototype,
        lib.__getConversation,
        config,
        model,
        harness,
        device,
      );
      this.loadedModelIdToPipeline.set(modelId, pipeline);
      this.loadedModelIdToLock.set(modelId, new lib.__CustomLock());
      harness.loads.push(modelId);
      if (lostInReload) throw new lib.__DeviceLostError();
    };
    this.engine = engine;
    return engine;
  }

  /** WebLLM's function-calling model ids. */
  async functionCallingModelIds(): Promise<string[]> {
    return (await webllmInternals()).functionCallingModelIds;
  }
}
