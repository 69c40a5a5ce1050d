// What the real-model test and benchmark share: which model, where its files come from, whether
// this machine can run it at all, and an app build that serves it.
import { createReadStream, existsSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';

/** The smallest prebuilt chat model that needs no `shader-f16` (notes/webllm §5.8). */
export const DEFAULT_MODEL = 'SmolLM2-360M-Instruct-q4f32_1-MLC';

/**
 * @typedef {object} RealModel
 * @property {string} id the model's id in the API
 * @property {import('@mlc-ai/web-llm').ModelRecord} record WebLLM's prebuilt record of it
 * @property {string | undefined} dir HEARTH_MODEL_DIR, resolved
 * @property {{ models: object[] } | undefined} catalogue the self-hosted catalogue that serves it
 *   from `dir`
 */

/**
 * The model under test and how the app will know it: a prebuilt `mlc-ai/…` id fetched from the
 * network, or, with HEARTH_MODEL_DIR, a self-hosted `local/…` id whose files the app serves.
 * HEARTH_MODEL_DIR holds `<model_id>/` (the weights' repository as on Hugging Face) and the
 * model library (`<lib>.wasm`, as in mlc-ai/binary-mlc-llm-libs).
 */
/** @returns {Promise<RealModel>} */
export async function realModel() {
  const modelId = process.env.HEARTH_REAL_MODEL ?? DEFAULT_MODEL;
  const model = await modelFor(modelId, 'HEARTH_REAL_MODEL', { required: true });
  if (!model) throw new Error(`HEARTH_REAL_MODEL: ${modelId} is not a WebLLM 0.2.86 model`);
  return model;
}

/**
 * The candidates for the tools test, smallest first: HEARTH_REAL_TOOLS_MODEL alone, or every one
 * of WebLLM's function-calling models (the only ones it takes `tools` on). Each is self-hosted
 * when HEARTH_MODEL_DIR holds its files, and fetched from the network otherwise. Which one runs
 * is the first this GPU can run (the f16 ones need `shader-f16`): only the page knows that.
 * @returns {Promise<RealModel[]>}
 */
export async function realToolsModels() {
  const { functionCallingModelIds, prebuiltAppConfig } = await import('@mlc-ai/web-llm');
  const chosen = process.env.HEARTH_REAL_TOOLS_MODEL;
  if (chosen !== undefined && !functionCallingModelIds.includes(chosen)) {
    throw new Error(
      `HEARTH_REAL_TOOLS_MODEL: ${chosen} is not one of WebLLM 0.2.86's function-calling models (${functionCallingModelIds.join(', ')})`,
    );
  }
  /** @param {string} id */
  const vram = (id) =>
    prebuiltAppConfig.model_list.find((r) => r.model_id === id)?.vram_required_MB ?? Infinity;
  const ids = chosen ? [chosen] : [...functionCallingModelIds].sort((a, b) => vram(a) - vram(b));
  const models = [];
  for (const id of ids) {
    const model = await modelFor(id, 'HEARTH_REAL_TOOLS_MODEL', { required: false });
    if (model) models.push(model);
  }
  return models;
}

/**
 * One prebuilt model as the app will know it. With HEARTH_MODEL_DIR, a model whose files are
 * missing there is an error when `required`, and otherwise fetched from the network.
 * @param {string} modelId
 * @param {string} variable the environment variable that chose it, for messages
 * @param {{ required: boolean }} options
 * @returns {Promise<RealModel | undefined>}
 */
async function modelFor(modelId, variable, { required }) {
  const { functionCallingModelIds, prebuiltAppConfig } = await import('@mlc-ai/web-llm');
  const record = prebuiltAppConfig.model_list.find((r) => r.model_id === modelId);
  if (!record) return undefined;
  const network = { id: `mlc-ai/${modelId}`, record, dir: undefined, catalogue: undefined };
  const dir = process.env.HEARTH_MODEL_DIR;
  if (!dir) return network;
  const lib = basename(record.model_lib);
  for (const path of [join(dir, modelId, 'mlc-chat-config.json'), join(dir, lib)]) {
    if (existsSync(path)) continue;
    if (required) throw new Error(`${variable}: HEARTH_MODEL_DIR has no ${path}`);
    return network;
  }
  const catalogue = {
    models: [
      {
        id: `local/${modelId}`,
        model: `models/${modelId}/resolve/main/`,
        model_id: modelId,
        model_lib: `models/${lib}`,
        ...(record.overrides && { overrides: record.overrides }),
        ...(record.vram_required_MB && { vram_required_MB: record.vram_required_MB }),
        ...(functionCallingModelIds.includes(modelId) && { tools: true }),
      },
    ],
  };
  return { id: `local/${modelId}`, record, dir: resolve(dir), catalogue };
}

/**
 * Why the model's files cannot be had here, or null when they can: its weights (Hugging Face)
 * and its library (GitHub), or HEARTH_MODEL_DIR.
 * @param {RealModel} model
 * @returns {Promise<string | null>}
 */
export async function filesUnreachable(model) {
  if (model.dir) return null;
  const urls = [`${model.record.model}/resolve/main/mlc-chat-config.json`, model.record.model_lib];
  for (const url of urls) {
    try {
      const response = await fetch(url, { method: 'HEAD', signal: AbortSignal.timeout(10_000) });
      if (!response.ok) return `${url} answered ${response.status}`;
    } catch (err) {
      return `the network is out of reach (${err instanceof Error ? err.message : err}) and HEARTH_MODEL_DIR does not hold ${model.record.model_id}`;
    }
  }
  return null;
}

/** @param {RealModel | RealModel[]} models */
const listOf = (models) => (Array.isArray(models) ? models : [models]);

/**
 * Builds the app into `outDir`, with a self-hosted catalogue of the models served from
 * HEARTH_MODEL_DIR when there are any.
 * @param {RealModel | RealModel[]} models
 * @param {string} outDir
 * @param {Record<string, string>} [extraEnv]
 */
export async function buildForRealModel(models, outDir, extraEnv = {}) {
  const { build } = await import('vite');
  Object.assign(process.env, { HEARTH_OUT_DIR: outDir, ...extraEnv });
  /** @type {Map<string, object>} */
  const entries = new Map();
  for (const model of listOf(models)) {
    for (const entry of model.catalogue?.models ?? []) entries.set(model.id, entry);
  }
  if (entries.size > 0) {
    const file = resolve(`${outDir}.models.json`);
    writeFileSync(file, JSON.stringify({ models: [...entries.values()] }, null, 2));
    process.env.HEARTH_MODELS_FILE = file;
  }
  await build({ logLevel: 'warn' });
}

/** @type {Record<string, string>} */
const TYPES = { '.json': 'application/json', '.wasm': 'application/wasm' };

/**
 * A Vite plugin for `vite preview` that serves HEARTH_MODEL_DIR where the self-hosted catalogue
 * says the files are: `/models/<model_id>/resolve/main/<file>` and `/models/<lib>`.
 * @param {RealModel | RealModel[]} models
 * @returns {import('vite').Plugin}
 */
export function modelFiles(models) {
  /** @type {Map<string, string>} where each served path (or folder, ending in `/`) lies */
  const routes = new Map();
  for (const model of listOf(models)) {
    if (!model.dir) continue;
    const modelId = model.record.model_id;
    const lib = basename(model.record.model_lib);
    routes.set(`/models/${modelId}/resolve/main/`, join(model.dir, modelId));
    routes.set(`/models/${lib}`, join(model.dir, lib));
  }
  return {
    name: 'hearth-real-model-files',
    configurePreviewServer(server) {
      if (routes.size === 0) return;
      server.middlewares.use((req, res, next) => {
        const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
        let file;
        for (const [route, target] of routes) {
          if (path === route) file = target;
          else if (route.endsWith('/') && path.startsWith(route))
            file = join(target, path.slice(route.length));
          if (file) break;
        }
        if (!file || path.includes('..') || !existsSync(file) || !statSync(file).isFile()) {
          return next();
        }
        const ext = file.slice(file.lastIndexOf('.'));
        res.setHeader('content-type', TYPES[ext] ?? 'application/octet-stream');
        res.setHeader('content-length', String(statSync(file).size));
        createReadStream(file).pipe(res);
      });
    },
  };
}
