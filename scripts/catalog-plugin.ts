/**
 * @module
 * Makes the model catalogue at build time, as the virtual module `virtual:hearth-catalog`:
 * WebLLM's prebuilt chat models (read from the pinned package, in Node) and the self-hosted ones
 * of `public/models.json`. The service worker and the engine worker import it; neither has to
 * load the WebLLM bundle to know what exists.
 */
import { readFileSync } from 'node:fs';
import * as v from 'valibot';
import type { Plugin } from 'vite';
import {
  catalogEntry,
  ggufEntry,
  parseGgufId,
  prebuiltCatalog,
  type CatalogEntry,
} from '../src/models/catalog.ts';
import { CURATED_GGUF, CURATED_GGUF_EMBEDDINGS } from '../src/models/curated-gguf.ts';

const VIRTUAL_ID = 'virtual:hearth-catalog';
const RESOLVED_ID = `\0${VIRTUAL_ID}`;

/** A WebLLM model record, with an id and whether it takes tools. */
const webllmRecord = v.looseObject({
  /** `<organisation>/<model_name>`; defaults to `self-hosted/<model_id>`. */
  id: v.optional(v.pipe(v.string(), v.regex(/^[\w.-]+\/[\w.-]+$/))),
  /** The weights' base URL: absolute, or relative to the app. */
  model: v.string(),
  model_id: v.string(),
  model_lib: v.string(),
  overrides: v.optional(v.record(v.string(), v.unknown())),
  vram_required_MB: v.optional(v.number()),
  low_resource_required: v.optional(v.boolean()),
  required_features: v.optional(v.array(v.string())),
  tools: v.optional(v.boolean()),
  integrity: v.optional(v.record(v.string(), v.unknown())),
  model_manifest: v.optional(v.string()),
  engine: v.optional(v.literal('webllm')),
});

/** A GGUF model for llama.cpp: its id (`-hf` style), its file or the parts of a split one. */
const ggufRecord = v.looseObject({
  id: v.pipe(
    v.string(),
    v.check((id) => parseGgufId(id) !== null, 'A GGUF id is <user>/<repo>:<quant>.'),
  ),
  engine: v.literal('llama.cpp'),
  /** Absolute, or relative to the app; the parts of a split GGUF in order. */
  files: v.pipe(v.array(v.pipe(v.string(), v.minLength(1))), v.minLength(1)),
  /** Its vision projector (llama.cpp's `mmproj` GGUF), absolute or relative to the app. */
  mmproj: v.optional(v.pipe(v.string(), v.minLength(1))),
  context_window: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  size_mb: v.optional(v.nullable(v.pipe(v.number(), v.minValue(0)))),
  memory_mb: v.optional(v.nullable(v.pipe(v.number(), v.minValue(0)))),
  tools: v.optional(v.boolean()),
  reasoning: v.optional(v.boolean()),
  /** An embedding model: the length of its vectors, its pooling, and its Matryoshka lengths. */
  embedding: v.optional(
    v.object({
      dimensions: v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1))),
      pooling: v.optional(v.picklist(['mean', 'cls', 'last', 'unknown']), 'unknown'),
      normalized: v.optional(v.literal(true), true),
      matryoshka: v.optional(v.array(v.pipe(v.number(), v.integer(), v.minValue(1))), []),
    }),
  ),
});

/** The self-hosted catalogue file: WebLLM records, and GGUF models (`"engine": "llama.cpp"`). */
const selfHostedSchema = v.object({
  models: v.array(
    v.lazy((input) =>
      typeof input === 'object' &&
      input !== null &&
      (input as { engine?: unknown }).engine === 'llama.cpp'
        ? ggufRecord
        : webllmRecord,
    ),
  ),
});

/**
 * The self-hosted models of `file`, checked; a missing file is an empty catalogue. A WebLLM
 * record takes tools only if WebLLM calls functions with its `model_id` (`functionCallingIds`,
 * WebLLM's `functionCallingModelIds`): WebLLM refuses tools to any other, so such a record says
 * `tools: false`, and a request with tools gets the 400 of every model without them.
 */
export function readSelfHosted(
  file: string,
  functionCallingIds: readonly string[] = [],
): CatalogEntry[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const parsed = v.safeParse(selfHostedSchema, JSON.parse(text));
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const where = issue.path?.map((p) => String(p.key)).join('.') ?? '';
    throw new Error(`${file}: ${where}: ${issue.message}`);
  }
  return parsed.output.models.map((record) =>
    record.engine === 'llama.cpp'
      ? ggufEntry(record as v.InferOutput<typeof ggufRecord>, 'self-hosted')
      : webllmEntry(record as v.InferOutput<typeof webllmRecord>, functionCallingIds, file),
  );
}

/** A self-hosted WebLLM record's catalogue entry. */
function webllmEntry(
  record: v.InferOutput<typeof webllmRecord>,
  functionCallingIds: readonly string[],
  file: string,
): CatalogEntry {
  const callsFunctions = functionCallingIds.includes(record.model_id);
  if (record.tools && !callsFunctions) {
    console.warn(
      `${file}: ${record.model_id} says tools: true, but WebLLM calls functions only with ${functionCallingIds.join(', ') || 'none'}; it is listed without tools.`,
    );
  }
  return catalogEntry(record as Parameters<typeof catalogEntry>[0], {
    owner: (record.id ?? 'self-hosted/x').split('/')[0] ?? 'self-hosted',
    id: record.id ?? `self-hosted/${record.model_id}`,
    source: 'self-hosted',
    tools: (record.tools ?? false) && callsFunctions,
  });
}

/** The whole catalogue: prebuilt models first, then self-hosted ones (whose ids must differ). */
export async function buildCatalog(selfHostedFile: string): Promise<CatalogEntry[]> {
  const webllm = await import('@mlc-ai/web-llm');
  const prebuilt = prebuiltCatalog(
    webllm.prebuiltAppConfig.model_list,
    webllm.functionCallingModelIds,
  );
  const curated = [...CURATED_GGUF, ...CURATED_GGUF_EMBEDDINGS].map((record) =>
    ggufEntry(record, 'curated'),
  );
  const selfHosted = readSelfHosted(selfHostedFile, webllm.functionCallingModelIds);
  const ids = new Set([...prebuilt, ...curated].map((e) => e.id));
  for (const entry of selfHosted) {
    if (ids.has(entry.id)) throw new Error(`${selfHostedFile}: the id ${entry.id} is taken`);
    ids.add(entry.id);
  }
  return [...prebuilt, ...curated, ...selfHosted];
}

/** The Vite plugin that serves `virtual:hearth-catalog`. */
export function hearthCatalog(selfHostedFile: string): Plugin {
  return {
    name: 'hearth-catalog',
    resolveId: (id) => (id === VIRTUAL_ID ? RESOLVED_ID : undefined),
    async load(id) {
      if (id !== RESOLVED_ID) return undefined;
      this.addWatchFile(selfHostedFile);
      return `export default ${JSON.stringify(await buildCatalog(selfHostedFile))};`;
    },
  };
}
