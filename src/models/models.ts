/**
 * @module
 * src/models/ is what the API knows of models: ModelInfo and the model directory, the catalogue
 * (WebLLM's prebuilt models, the curated GGUF list), a model's files on the device and a GGUF's
 * parts, storage room, and which llama.cpp build a browser runs. It imports only src/protocol
 * (and itself, not its added/ subfolder).
 *
 * Models as the API knows them: what each can honour, what it costs, and the directory the
 * router asks which models exist, which this device can run and which are on it.
 */
import { OpenAIError } from '../protocol/errors';
import { notListed, unknownModel, type Absence, type KnownModel } from './model-hints';
import type { ChatBackend } from '../protocol/host/backend';
import type { ChatRequest, ModelObject, ResponseFormat } from '../protocol/types';

/** How a model pools its tokens' states into one vector (llama.cpp's pooling types). */
export type Pooling = 'mean' | 'cls' | 'last' | 'unknown';

/** What the catalogue says of an embedding model (kept here, beside `ModelInfo`, which carries it). */
export interface EmbeddingFacts {
  /** Length of its vectors; null until the model is loaded, when nothing said it before. */
  dimensions: number | null;
  pooling: Pooling;
  /** Whether its vectors come out with length 1 (Hearth's engines L2-normalise them). */
  normalized: boolean;
  /**
   * The shorter lengths it was trained to be cut to (Matryoshka), which `dimensions` may ask
   * for; empty when it was not, and then `dimensions` is refused.
   */
  matryoshka: number[];
}

/** Request features a model can honour; anything else is 400 `unsupported_parameter`. */
export interface ModelCapabilities {
  /** `tools`, with the `tool_choice` values of `tool_choices`. */
  tools: boolean;
  /** The `tool_choice` strings it honours (none honours naming a function). */
  tool_choices: ToolChoiceMode[];
  /** The largest `n`. */
  max_n: number;
  /** Whether `n` > 1 works together with `stream`. */
  stream_n: boolean;
  /** `logprobs: true`. */
  logprobs: boolean;
  /** Whether `logprobs` can be combined with `tools`. */
  logprobs_with_tools: boolean;
  /** The `response_format` types it honours. */
  response_formats: ResponseFormat['type'][];
  /** Whether it takes images (`image_url` parts in user messages). */
  vision: boolean;
}

/** A `tool_choice` given as a string. */
export type ToolChoiceMode = 'auto' | 'none' | 'required';

/** US dollars per token, for `usage.estimated_cost`. */
export interface ModelPrice {
  prompt: number;
  completion: number;
}

/** Everything the API needs to know about one model. */
export interface ModelInfo {
  /** `<organisation>/<model_name>`. */
  id: string;
  /** The organisation part of the id. */
  owned_by: string;
  /** Unix seconds. */
  created: number;
  /** Tokens of prompt and reply together. */
  context_window: number;
  capabilities: ModelCapabilities;
  price: ModelPrice;
  /** Present for an embedding model, which answers `/v1/openai/embeddings` and never chats. */
  embedding?: EmbeddingFacts;
  /**
   * Present for a model of a server the user added: requests for it leave this device, for that
   * server. It may chat or embed (the server decides), and what it honours is its own.
   */
  remote?: { server: string; host: string };
}

/** The id of the built-in test engine. */
export const ECHO_MODEL_ID = 'hearth/echo';

/**
 * The echo engine: a deterministic test engine that needs no GPU (docs/api.md, The echo engine). It honours only
 * what it can honour truthfully; sampling fields are validated and have no effect.
 */
export const ECHO_MODEL: ModelInfo = {
  id: ECHO_MODEL_ID,
  owned_by: 'hearth',
  // 2026-01-01T00:00:00Z: a fixed date, so that listings are reproducible.
  created: 1767225600,
  context_window: 1_048_576,
  capabilities: {
    // It answers in text, or calls the tools a `/call` message names (api.md, The echo engine).
    tools: true,
    tool_choices: ['auto', 'none'],
    max_n: 1,
    stream_n: false,
    logprobs: false,
    logprobs_with_tools: false,
    response_formats: ['text'],
    // It says what each image it got is (api.md, The echo engine): the path an image takes to an
    // engine, tested without a vision model.
    vision: true,
  },
  price: { prompt: 0, completion: 0 },
};

/**
 * One lookup of a model id, all a request needs: the model (what it honours, its context window,
 * its price), which backend answers it, and whether it can answer now.
 */
export interface ResolvedModel {
  model: ModelInfo;
  /**
   * The backend that answers it: for a server's model, forwarding bound to that server (no
   * second lookup); absent for the device's own engines.
   */
  backend?: ChatBackend;
  /**
   * Throws when this device cannot answer with it now: 503 `engine_unavailable` when no tab
   * hosts the engine (which alone knows the device's GPU), 503 `webgpu_unavailable` when it
   * cannot run it, 404 `model_not_downloaded` when it is not on the device (unless `files` is
   * false: a load fetches what is missing), 503 `upstream_unavailable` for a server's model
   * while offline.
   */
  ready(options?: { files: boolean }): Promise<void>;
}

/** What the router asks about models; the service worker and tests provide one. */
export interface ModelDirectory {
  /** The models this device can answer with now (`GET /v1/openai/models`). */
  list(): Promise<ModelInfo[]>;
  /** A known model (downloaded or not) and where it runs, or undefined: the one lookup. */
  resolve(id: string): Promise<ResolvedModel | undefined>;
  /** Forgets what it knows of the device's files (after a load fetched some). */
  forget?(): void;
  /** Takes a model the user added out of the catalogue (after its files are gone); others stay. */
  remove?(id: string): Promise<void>;
  /**
   * The app's base path (`/`, `/repo/`), under which the API's routes are: the messages that
   * point at them name them as the caller reaches them. `/` when absent.
   */
  readonly base?: string;
  /**
   * Every model a request may name, downloaded or not (a GGUF's with its files), which an
   * unknown id is matched against for what it probably meant; `list()`'s models when absent.
   */
  known?(): Promise<KnownModel[]>;
  /**
   * Why `list` leaves out `id`, a model `resolve` knows (undefined: it lists it), decided as
   * `list` decides, so that `GET /v1/openai/models/{id}` and the list agree.
   */
  absence?(id: string): Promise<Absence | undefined>;
}

/** 404 `model_not_found` for `id`, which no model has: the catalogue's route, what it meant. */
async function unknownModelError(models: ModelDirectory, id: string): Promise<OpenAIError> {
  const known = (await models.known?.()) ?? (await models.list()).map((m) => ({ id: m.id }));
  return unknownModel(id, known, models.base);
}

/** `resolve`, or 404 `model_not_found` for an id no model has. */
export async function resolveModel(models: ModelDirectory, id: string): Promise<ResolvedModel> {
  const resolved = await models.resolve(id);
  if (resolved) return resolved;
  throw await unknownModelError(models, id);
}

/**
 * The model `GET /v1/openai/models/{id}` shows: one that `GET /v1/openai/models` lists, and no
 * other (the openai SDK's `models.retrieve` must not find a model that chat then refuses). A model
 * Hearth knows and the list leaves out is 404 `model_not_found` saying why and how to get it.
 */
export async function retrieveModel(models: ModelDirectory, id: string): Promise<ModelInfo> {
  // An unknown id first: it needs no look at the device's files.
  if (!(await models.resolve(id))) throw await unknownModelError(models, id);
  const listed = (await models.list()).find((m) => m.id === id);
  if (listed) return listed;
  const absence = (await models.absence?.(id)) ?? {
    why: 'unavailable',
    reason: 'It is not ready on this device now.',
  };
  throw notListed(id, absence, models.base);
}

/** A model as the OpenAI models endpoints show it. */
export function modelObject(model: ModelInfo): ModelObject {
  return {
    id: model.id,
    object: 'model',
    created: model.created,
    owned_by: model.owned_by,
    context_window: model.context_window,
    ...(model.embedding && { embeddings: true, dimensions: model.embedding.dimensions }),
    ...(model.capabilities.vision && !model.remote && { vision: true }),
    ...(model.remote && {
      leaves_device: true,
      server: model.remote.server,
      host: model.remote.host,
    }),
  };
}

function unsupported(param: string, detail: string): OpenAIError {
  return new OpenAIError('unsupported_parameter', `Unsupported parameter: '${param}' ${detail}`, {
    param,
  });
}

/** Throws 400 `unsupported_parameter` for the first field the model cannot honour. */
export function assertCapabilities(request: ChatRequest, model: ModelInfo): void {
  if (model.embedding) {
    throw new OpenAIError(
      'invalid_value',
      `Invalid value for 'model': ${model.id} is an embedding model; it does not chat. Ask it with POST /v1/openai/embeddings.`,
      { param: 'model' },
    );
  }
  const caps = model.capabilities;
  if (request.n > caps.max_n) {
    throw unsupported('n', `must be at most ${caps.max_n} for ${model.id}.`);
  }
  if (request.n > 1 && request.stream && !caps.stream_n) {
    throw unsupported('n', `greater than 1 cannot be combined with stream for ${model.id}.`);
  }
  if (request.logprobs === true && !caps.logprobs) {
    throw unsupported('logprobs', `is not supported by ${model.id}.`);
  }
  const format = request.response_format?.type;
  if (format !== undefined && !caps.response_formats.includes(format)) {
    throw unsupported('response_format', `type "${format}" is not supported by ${model.id}.`);
  }
  const tools = (request.tools?.length ?? 0) > 0;
  if (tools && !caps.tools) {
    throw unsupported('tools', `are not supported by ${model.id}.`);
  }
  const choice = request.tool_choice;
  if (choice !== undefined && (typeof choice !== 'string' || !caps.tool_choices.includes(choice))) {
    const shown = typeof choice === 'string' ? `"${choice}"` : 'naming a function';
    const allowed = caps.tool_choices.map((c) => `"${c}"`).join(', ');
    throw unsupported('tool_choice', `${shown} is not supported by ${model.id}; use ${allowed}.`);
  }
  if (tools && request.logprobs === true && !caps.logprobs_with_tools) {
    throw unsupported('logprobs', `cannot be combined with tools for ${model.id}.`);
  }
  const image = request.messages.flatMap((m) => m.parts ?? []).find((p) => p.type === 'image');
  if (image?.type === 'image' && !caps.vision) {
    throw unsupported(
      image.param,
      `is an image, and ${model.id} does not take images; choose a model that does (\`vision: true\` in GET /v1/openai/models).`,
    );
  }
}

/** `usage.estimated_cost` in US dollars. */
export function estimateCost(price: ModelPrice, prompt: number, completion: number): number {
  return prompt * price.prompt + completion * price.completion;
}

/**
 * A server model as the API knows it: what the server honours is its own to say, so Hearth's
 * capability checks let everything through that its wire format can carry (several choices are
 * never streamed: Hearth's stream has one).
 */
export function remoteModelInfo(
  id: string,
  remote: { server: string; host: string },
  price: ModelPrice = { prompt: 0, completion: 0 },
): ModelInfo {
  return {
    id,
    owned_by: remote.server,
    created: ECHO_MODEL.created,
    // Not known: the server checks its own context.
    context_window: 0,
    capabilities: {
      tools: true,
      tool_choices: ['auto', 'none', 'required'],
      max_n: 128,
      stream_n: false,
      logprobs: true,
      logprobs_with_tools: true,
      response_formats: ['text', 'json_object', 'json_schema'],
      // The part goes to the server as it came; the server decides.
      vision: true,
    },
    price,
    remote,
  };
}

/** What a static directory's models need: by default, nothing (the echo engine's case). */
export interface StaticDirectoryOptions {
  /** Whether a model can answer now (tests make it throw). */
  ready?: (model: ModelInfo, options?: { files: boolean }) => Promise<void>;
  /** The backend of a model that is not the device's (a server's, in tests). */
  backend?: (model: ModelInfo) => ChatBackend | undefined;
}

/** A directory of fixed models, always ready unless `options` say otherwise. */
export function staticModelDirectory(
  models: readonly ModelInfo[],
  options: StaticDirectoryOptions = {},
): ModelDirectory {
  return {
    list: async () => [...models],
    known: async () => models.map((m) => ({ id: m.id })),
    resolve: async (id) => {
      const model = models.find((m) => m.id === id);
      if (!model) return undefined;
      const backend = options.backend?.(model);
      return {
        model,
        ...(backend && { backend }),
        ready: async (readyOptions) => options.ready?.(model, readyOptions),
      };
    },
  };
}
