/**
 * @module
 * The model catalogue: WebLLM's prebuilt chat models and self-hosted ones, as plain data made at
 * build time (the service worker never loads the WebLLM bundle), and the rules that say whether
 * this device can run a model and whether its files are all on the device.
 */
// Types only: vite.config.ts loads this file, and Vite's config loader wants file extensions.
import type { GpuFacts, GpuLimits } from '../protocol/host/gpu-facts';
import type { EmbeddingFacts, ModelInfo } from './models';

export type { GpuFacts } from '../protocol/host/gpu-facts';
// Kept in models.ts, which ModelInfo needs them in, so that models.ts need not import the catalogue.
export type { EmbeddingFacts, Pooling } from './models';

/** What WebLLM calls a model record (the fields the catalogue reads). */
export interface ModelRecordLike {
  model: string;
  model_id: string;
  model_lib: string;
  overrides?: { context_window_size?: number; [key: string]: unknown };
  vram_required_MB?: number;
  low_resource_required?: boolean;
  required_features?: string[];
  model_type?: number;
  integrity?: object;
  model_manifest?: string;
}

/** Which engine serves a model: a property of its entry, never guessed from its id. */
export type EngineName = 'webllm' | 'llama.cpp';

/** What every model of the catalogue has, whichever engine serves it. */
interface EntryBase {
  /**
   * `<organisation>/<model_name>`: `mlc-ai/<WebLLM model_id>` for WebLLM's prebuilt models,
   * `<hf-user>/<repo>:<quant>` for GGUF models (llama.cpp's `-hf` convention).
   */
  id: string;
  owned_by: string;
  engine: EngineName;
  context_window: number;
  vram_required_mb: number | null;
  /** The download, estimated until the files are known; null where nothing says. */
  size_mb: number | null;
  /** GPU features the model needs to run at all (none for a GGUF, which runs on the CPU too). */
  required_features: string[];
  /** Whether it takes `tools`. */
  tools: boolean;
  /** Whether it thinks aloud, returned as `reasoning_content`. */
  reasoning: boolean;
  /** Where the entry comes from: WebLLM's list, Hearth's list of GGUFs, the app's file, the user. */
  source: 'prebuilt' | 'curated' | 'self-hosted' | 'added';
  /** Present for an embedding model (`/v1/openai/embeddings`), which does not chat. */
  embedding?: EmbeddingFacts;
}

/** A model WebLLM runs (MLC weights and a compiled WebGPU library). */
export interface WebLLMEntry extends EntryBase {
  engine: 'webllm';
  /** WebLLM's own id. */
  model_id: string;
  /** Where the weights live (absolute, or relative to the app for self-hosted models). */
  model_url: string;
  /** The compiled WebGPU library. */
  model_lib: string;
  low_resource: boolean;
  /** The record's own fields WebLLM needs, passed back as they were. */
  overrides?: Record<string, unknown>;
  integrity?: object;
  model_manifest?: string;
  /** A vision-language model (WebLLM's `ModelType.VLM`): it takes images. */
  vision?: true;
}

/** A GGUF model llama.cpp runs, on WebGPU where it can, else on the CPU. */
export interface GgufEntry extends EntryBase {
  engine: 'llama.cpp';
  /** Its file, or the parts of a split GGUF in order (absolute, or relative to the app). */
  files: string[];
  /**
   * Its vision projector (llama.cpp's `mmproj` GGUF), which lets it take images: downloaded,
   * loaded and deleted with `files`, as one model.
   */
  mmproj?: string;
  /** The quantisation (`Q4_K_M`, `F32`…): the part of the id after `:`. */
  quant: string;
}

/** One model of the catalogue. */
export type CatalogEntry = WebLLMEntry | GgufEntry;

/** WebLLM's `ModelType.LLM`, `ModelType.embedding` and `ModelType.VLM` (it sees images). */
const LLM = 0;
const EMBEDDING = 1;
const VLM = 2;

/**
 * WebLLM's prebuilt embedding models (Snowflake Arctic Embed, a BERT encoder: the first token's
 * state, 512 tokens), whose records say nothing of their vectors or size. Hearth normalises their
 * vectors (WebLLM returns them as the model computes them).
 */
const WEBLLM_EMBEDDINGS: Record<string, { dimensions: number; size_mb: number }> = {
  'snowflake-arctic-embed-m': { dimensions: 768, size_mb: 436 },
  'snowflake-arctic-embed-s': { dimensions: 384, size_mb: 133 },
};

/** What the catalogue says of a WebLLM embedding model, or null when it does not know it. */
function webllmEmbedding(modelId: string): { facts: EmbeddingFacts; size_mb: number } | null {
  const known = Object.entries(WEBLLM_EMBEDDINGS).find(([name]) => modelId.startsWith(`${name}-`));
  if (!known) return null;
  const [, { dimensions, size_mb }] = known;
  return { facts: { dimensions, pooling: 'cls', normalized: true, matryoshka: [] }, size_mb };
}
/** WebLLM allocates the KV cache for this many tokens when a record does not say. */
const DEFAULT_CONTEXT_WINDOW = 4096;
/** Bits per weight of each quantisation, scales included. */
const BITS: Record<string, number> = { q0f16: 16, q0f32: 32, q3f16: 3.5, q4f16: 4.5, q4f32: 4.5 };

/** The model size in MB from a name like `Qwen2.5-0.5B-…-q4f32_1-MLC`, or null. */
export function estimateSizeMb(modelId: string): number | null {
  const params = /(?:^|[-_])E?(\d+(?:\.\d+)?)([BM])(?=[-_])/i.exec(modelId);
  const quant = /q(\d)f(16|32)/i.exec(modelId);
  if (!params?.[1] || !params[2] || !quant) return null;
  const bits = BITS[`q${quant[1]}f${quant[2]}`];
  if (bits === undefined) return null;
  const count = Number(params[1]) * (params[2].toUpperCase() === 'B' ? 1e9 : 1e6);
  return Math.round((count * bits) / 8 / 1e6);
}

/**
 * The GPU features a model needs. Only `shader-f16` is ever declared, and most f16 records do
 * not declare it although their shaders are f16 (notes/webllm §5.7): infer it from the name.
 */
export function requiredFeatures(record: ModelRecordLike): string[] {
  const features = new Set(record.required_features ?? []);
  if (/q\df16/i.test(record.model_id)) features.add('shader-f16');
  return [...features].sort();
}

/** Whether a model thinks aloud before answering. */
export function isReasoningModel(modelId: string): boolean {
  return /DeepSeek-R1|^Qwen3|Reasoning/i.test(modelId);
}

/** A catalogue entry for a WebLLM record. */
export function catalogEntry(
  record: ModelRecordLike,
  options: { owner: string; source: CatalogEntry['source']; tools: boolean; id?: string },
): WebLLMEntry {
  const entry: WebLLMEntry = {
    id: options.id ?? `${options.owner}/${record.model_id}`,
    owned_by: options.owner,
    engine: 'webllm',
    model_id: record.model_id,
    model_url: record.model,
    model_lib: record.model_lib,
    context_window: record.overrides?.context_window_size ?? DEFAULT_CONTEXT_WINDOW,
    vram_required_mb: record.vram_required_MB ?? null,
    size_mb: estimateSizeMb(record.model_id),
    required_features: requiredFeatures(record),
    low_resource: record.low_resource_required ?? false,
    tools: options.tools,
    reasoning: isReasoningModel(record.model_id),
    source: options.source,
  };
  if (record.overrides) entry.overrides = record.overrides;
  if (record.integrity) entry.integrity = record.integrity;
  if (record.model_manifest) entry.model_manifest = record.model_manifest;
  return entry;
}

/** The prebuilt chat and embedding models of a WebLLM app config. */
export function prebuiltCatalog(
  models: readonly ModelRecordLike[],
  functionCallingModelIds: readonly string[],
): WebLLMEntry[] {
  const entries: WebLLMEntry[] = [];
  for (const record of models) {
    const type = record.model_type ?? LLM;
    const options = {
      owner: 'mlc-ai',
      source: 'prebuilt' as const,
      tools: functionCallingModelIds.includes(record.model_id),
    };
    if (type === LLM) entries.push(catalogEntry(record, options));
    if (type === VLM) entries.push({ ...catalogEntry(record, options), vision: true });
    const embedding = type === EMBEDDING ? webllmEmbedding(record.model_id) : null;
    if (!embedding) continue;
    const entry = catalogEntry(record, { ...options, tools: false });
    // Compiled for 512 tokens (`ctx512` in its library's name), not WebLLM's default.
    entry.context_window = record.overrides?.context_window_size ?? 512;
    entry.size_mb = embedding.size_mb;
    entry.embedding = embedding.facts;
    entries.push(entry);
  }
  return entries;
}

/** 2026-01-01T00:00:00Z: catalogue models carry no date of their own. */
const CATALOGUE_CREATED = 1767225600;
/** Most choices a request may ask for; both engines run them one after another. */
const MAX_N = 8;

/**
 * The most tokens of context llama.cpp is given, whatever a GGUF was trained for: its KV cache is
 * allocated whole at load time (~1 GB at 8K for a 4B model), and phones have little memory.
 */
export const LLAMA_MAX_CONTEXT = 8192;

/** The context llama.cpp is loaded with for `entry`: what requests may use. */
export function llamaContextSize(entry: GgufEntry): number {
  return Math.min(entry.context_window, LLAMA_MAX_CONTEXT);
}

/** The API's view of a catalogue model. */
export function catalogModelInfo(entry: CatalogEntry): ModelInfo {
  const llama = entry.engine === 'llama.cpp';
  return {
    id: entry.id,
    owned_by: entry.owned_by,
    created: CATALOGUE_CREATED,
    context_window: llama ? llamaContextSize(entry) : entry.context_window,
    capabilities: {
      tools: entry.tools,
      // Neither forces a call: WebLLM ignores tool_choice, and llama.cpp 3.13's wasm answered
      // "required" with plain text (measured on a Hermes-style template).
      tool_choices: ['auto', 'none'],
      max_n: MAX_N,
      stream_n: false,
      logprobs: true,
      // llama-server refuses logprobs with tools in a stream, and Hearth always streams from it.
      logprobs_with_tools: !llama,
      response_formats: ['text', 'json_object', 'json_schema'],
      // A GGUF sees images through its projector; WebLLM's vision-language models natively.
      vision: llama ? entry.mmproj !== undefined : entry.vision === true,
    },
    price: { prompt: 0, completion: 0 },
    ...(entry.embedding && { embedding: { ...entry.embedding } }),
  };
}

const MIB = 1 << 20;
const KIB = 1 << 10;

/**
 * The least WebLLM 0.2.86 accepts of each limit: it asks for 1 GiB buffers and bindings and
 * falls back to the WebGPU defaults (256 MiB, 128 MiB) before it gives up.
 */
const WEBLLM_MIN_LIMITS: readonly {
  name: keyof GpuLimits;
  min: number;
  unit: 'bytes' | 'count';
}[] = [
  { name: 'maxBufferSize', min: 256 * MIB, unit: 'bytes' },
  { name: 'maxStorageBufferBindingSize', min: 128 * MIB, unit: 'bytes' },
  { name: 'maxComputeWorkgroupStorageSize', min: 32 * KIB, unit: 'bytes' },
  { name: 'maxStorageBuffersPerShaderStage', min: 10, unit: 'count' },
];

function formatLimit(value: number, unit: 'bytes' | 'count'): string {
  if (unit === 'count') return String(value);
  return value >= MIB ? `${+(value / MIB).toFixed(1)} MiB` : `${+(value / KIB).toFixed(1)} KiB`;
}

/** One sentence per limit of the adapter below WebLLM's floor (none when all are enough). */
function limitShortfalls(limits: GpuLimits): string[] {
  return WEBLLM_MIN_LIMITS.filter(({ name, min }) => limits[name] < min).map(
    ({ name, min, unit }) =>
      `${name} is ${formatLimit(limits[name], unit)}; WebLLM needs at least ${formatLimit(min, unit)}.`,
  );
}

/** Why this device cannot run the model, or null when it can. */
export function unavailableReason(entry: CatalogEntry, gpu: GpuFacts): string | null {
  // llama.cpp runs a GGUF on the CPU wherever WebGPU falls short.
  if (entry.engine === 'llama.cpp') return null;
  if (!gpu.webgpu) return 'This browser has no WebGPU, which every model but hearth/echo needs.';
  const adapter = gpu.adapter;
  if (!adapter) return 'WebGPU found no usable GPU adapter on this device.';
  const missing = entry.required_features.filter((f) => !adapter.features.includes(f));
  if (missing.length > 0) {
    return `This GPU lacks ${missing.join(', ')}, which this model needs; an f32 variant (q4f32) may run.`;
  }
  // Every shortfall at once: WebLLM would name only the first, and the next attempt the next.
  const short = limitShortfalls(adapter.limits);
  if (short.length > 0) return `This GPU's limits are too small for WebLLM: ${short.join(' ')}`;
  return null;
}

/** A GGUF id: `<hf-user>/<repo>:<quant>` (llama.cpp's `-hf` convention). */
const GGUF_ID = /^([\w.-]+)\/([\w.-]+):([\w.-]+)$/;

/** The parts of a GGUF id, or null when `id` is not one. */
export function parseGgufId(id: string): { owner: string; repo: string; quant: string } | null {
  const match = GGUF_ID.exec(id);
  if (!match?.[1] || !match[2] || !match[3]) return null;
  return { owner: match[1], repo: match[2], quant: match[3] };
}

/** What a GGUF entry is made from (the curated list, the app's file, a user's addition). */
export interface GgufRecord {
  id: string;
  files: string[];
  /** Its vision projector's file, for a model that takes images. */
  mmproj?: string;
  context_window?: number;
  size_mb?: number | null;
  /** Memory it takes to run: the file, the KV cache and buffers. */
  memory_mb?: number | null;
  tools?: boolean;
  reasoning?: boolean;
  /** Present for an embedding model. */
  embedding?: EmbeddingFacts;
}

/**
 * Every file of a GGUF model: its file or parts, then its vision projector where it has one
 * (last: wllama tells the projector from the parts by its metadata, not its place).
 */
export function ggufModelFiles(model: { files: readonly string[]; mmproj?: string }): string[] {
  return model.mmproj === undefined ? [...model.files] : [...model.files, model.mmproj];
}

/** A catalogue entry for a GGUF model. */
export function ggufEntry(record: GgufRecord, source: CatalogEntry['source']): GgufEntry {
  const parts = parseGgufId(record.id);
  if (!parts) throw new Error(`${record.id} is not a GGUF id (<user>/<repo>:<quant>)`);
  return {
    id: record.id,
    owned_by: parts.owner,
    engine: 'llama.cpp',
    files: [...record.files],
    ...(record.mmproj !== undefined && { mmproj: record.mmproj }),
    quant: parts.quant,
    context_window: record.context_window ?? DEFAULT_CONTEXT_WINDOW,
    vram_required_mb: record.memory_mb ?? null,
    size_mb: record.size_mb ?? null,
    required_features: [],
    tools: record.tools ?? false,
    reasoning: record.reasoning ?? isReasoningModel(parts.repo),
    source,
    ...(record.embedding && { embedding: { ...record.embedding } }),
  };
}

/** Whether llama.cpp can run on the GPU here: its WebGPU backend needs `shader-f16`. */
export function llamaOnGpu(gpu: GpuFacts | null): boolean {
  return gpu?.adapter?.features.includes('shader-f16') ?? false;
}

/** How well a model runs here: at a comfortable reading speed, slowly, or not at all. */
export type Fit = 'good' | 'slow' | 'no';
/** Where a model would run here: WebGPU or the processor. */
export type FitBackend = 'webgpu' | 'cpu';

/** A catalogue model as `/v1/hearth/catalog` shows it. */
export interface CatalogModel {
  id: string;
  object: 'model';
  owned_by: string;
  /** Which engine serves it; `server` for a model of a server the user added. */
  engine: EngineName | 'echo' | 'server';
  size_mb: number | null;
  vram_required_mb: number | null;
  context_window: number;
  required_features: string[];
  /**
   * Whether this device can run it; null when that is not known yet (no tab hosts the engine,
   * whose worker measures the GPU). When not true, `unavailable_reason` says why.
   */
  available: boolean | null;
  unavailable_reason?: string;
  /** Where it would run here; null for the echo engine, servers' models, and before measuring. */
  backend: FitBackend | null;
  /**
   * How well it runs here (src/models/fit.ts); `no` exactly where `available` is false; null only
   * while no host has measured the device.
   */
  fit: Fit | null;
  /** Why `fit` is not `good`, in words (while it is null, why it is not known). */
  fit_reason?: string;
  /** Every file is on the device. */
  downloaded: boolean;
  /** It was downloaded and has lost files since (evicted by the browser): why. */
  evicted?: string;
  /** It is on the GPU now. */
  loaded: boolean;
  source: CatalogEntry['source'] | 'built-in' | 'server';
  tools: boolean;
  reasoning: boolean;
  /** Whether it takes images (`image_url` parts); null for a server's model: the server decides. */
  vision: boolean | null;
  /** Only on embedding models: the length of their vectors, pooling, Matryoshka lengths. */
  embedding?: EmbeddingFacts;
  /** Only on a server's models: requests for them leave this device, for this server. */
  leaves_device?: true;
  server?: { name: string; host: string; upstream_id: string };
}
