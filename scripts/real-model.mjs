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
 * @property {object | undefined} catalogue the self-hosted catalogue that serves it from `dir`
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
  const { prebuiltAppConfig } = await import('@mlc-ai/web-llm');
  const record = prebuiltAppConfig.model_list.find((r) => r.model_id === modelId);
  if (!record) throw new Error(`HEARTH_REAL_MODEL: ${modelId} is not a WebLLM 0.2.86 model`);
  const dir = process.env.HEARTH_MODEL_DIR;
  if (!dir) return { id: `mlc-ai/${modelId}`, record, dir: undefined, catalogue: undefined };
  const lib = basename(record.model_lib);
  for (const path of [join(dir, modelId, 'mlc-chat-config.json'), join(dir, lib)]) {
    if (!existsSync(path)) throw new Error(`HEARTH_MODEL_DIR has no ${path}`);
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
      },
    ],
  };
  return { id: `local/${modelId}`, record, dir: resolve(dir), catalogue };
}

/**
 * Why the model's files cannot be had here, or null when they can.
 * @param {RealModel} model
 * @returns {Promise<string | null>}
 */
export async function filesUnreachable(model) {
  if (model.dir) return null;
  try {
    const url = `${model.record.model}/resolve/main/mlc-chat-config.json`;
    const response = await fetch(url, { method: 'HEAD', signal: AbortSignal.timeout(10_000) });
    return response.ok ? null : `${url} answered ${response.status}`;
  } catch (err) {
    return `the network is out of reach (${err instanceof Error ? err.message : err}) and HEARTH_MODEL_DIR is not set`;
  }
}

/**
 * Builds the app into `outDir`, with the self-hosted catalogue when there is one.
 * @param {RealModel} model
 * @param {string} outDir
 * @param {Record<string, string>} [extraEnv]
 */
export async function buildForRealModel(model, outDir, extraEnv = {}) {
  const { build } = await import('vite');
  Object.assign(process.env, { HEARTH_OUT_DIR: outDir, ...extraEnv });
  if (model.catalogue) {
    const file = resolve(`${outDir}.models.json`);
    writeFileSync(file, JSON.stringify(model.catalogue, null, 2));
    process.env.HEARTH_MODELS_FILE = file;
  }
  await build({ logLevel: 'warn' });
}

/** @type {Record<string, string>} */
const TYPES = { '.json': 'application/json', '.wasm': 'application/wasm' };

/**
 * A Vite plugin for `vite preview` that serves HEARTH_MODEL_DIR where the self-hosted catalogue
 * says the files are: `/models/<model_id>/resolve/main/<file>` and `/models/<lib>`.
 * @param {RealModel} model
 * @returns {import('vite').Plugin}
 */
export function modelFiles(model) {
  return {
    name: 'hearth-real-model-files',
    configurePreviewServer(server) {
      const dir = model.dir;
      if (!dir) return;
      const modelId = model.record.model_id;
      const lib = basename(model.record.model_lib);
      const prefix = `/models/${modelId}/resolve/main/`;
      server.middlewares.use((req, res, next) => {
        const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
        const file = path.startsWith(prefix)
          ? join(dir, modelId, path.slice(prefix.length))
          : path === `/models/${lib}`
            ? join(dir, lib)
            : undefined;
        if (!file || file.includes('..') || !existsSync(file)) return next();
        const ext = file.slice(file.lastIndexOf('.'));
        res.setHeader('content-type', TYPES[ext] ?? 'application/octet-stream');
        res.setHeader('content-length', String(statSync(file).size));
        createReadStream(file).pipe(res);
      });
    },
  };
}
