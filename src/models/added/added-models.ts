/**
 * @module
 * src/models/added/ is the GGUF models the user adds at run time: their endpoint, where their
 * files come from (gguf-source), what a GGUF's header says, uploads from the computer and the
 * orphan files uploads leave. It imports src/models, src/protocol and itself.
 *
 * GGUF models the user adds at run time: `POST /v1/hearth/models` checks the source (the files
 * are there and are GGUF) and adds an entry to the catalogue; the entries are kept on the device
 * (IndexedDB, through an `AddedModelStore`), so that they outlive reloads and work offline, and
 * every change is announced on a `BroadcastChannel`, on which the engine worker (which serves and
 * downloads them) and the pages (which show them) read them again.
 */
import * as v from 'valibot';
import { assertJsonContentType, readJsonBody } from '../../protocol/body';
import {
  ggufEntry,
  parseGgufId,
  type EmbeddingFacts,
  type GgufEntry,
  type GgufRecord,
} from '../catalog';
import { OpenAIError } from '../../protocol/errors';
import { installName } from '../../protocol/install';
import { embeddingFactsOf, embeddingLengthOf, readGgufHeader } from './gguf-header';
import { inspectGguf, inspectProjector } from './gguf-check';
import {
  HUB_URL,
  projectorUrl,
  resolveSource,
  type GgufSource,
  type SourceDeps,
} from './gguf-source';
import { assertNetworkAllowed } from '../../protocol/private-network';
import { jsonResponse } from '../../protocol/respond';
import { memoryStore, type RecordStore } from '../../protocol/record-store';
import { paramOf } from '../../protocol/validate';

/** A model the user added, as it is kept. */
export interface AddedRecord extends GgufRecord {
  /** What the user gave: a URL, a path of the app, or `hf:<user>/<repo>:<quant>`. */
  origin: string;
  /** When, in Unix milliseconds. */
  added_at: number;
}

/** Where the added models are kept (IndexedDB in the browser, memory in tests), by id. */
export type AddedModelStore = RecordStore<AddedRecord>;

/** A store of added models in memory. */
export const memoryAddedStore = (initial: readonly AddedRecord[] = []): AddedModelStore =>
  memoryStore((record) => record.id, initial);

/**
 * The channel on which a change of the added models is announced, and of the servers the user
 * added (whose models join the catalogue too; only the pages care about those).
 */
export const addedModelsChannelName = (): string => installName('hearth:added-models');

/** What goes out on that channel: the models changed, read them again. */
export interface AddedModelsMessage {
  type: 'added-models/changed' | 'servers/changed';
}

function exists(id: string): OpenAIError {
  return new OpenAIError(
    'model_exists',
    `A model with the id '${id}' exists already; give another with "id", or delete that one first.`,
    { param: 'id' },
  );
}

/** The added models: the store read once and kept in memory, every change written through. */
export class AddedModels {
  readonly #store: AddedModelStore;
  readonly #onChange: () => void;
  #entries: Promise<Map<string, GgufEntry>> | undefined;
  /** The records as kept, by id: what each was added from. */
  readonly #records = new Map<string, AddedRecord>();

  constructor(store: AddedModelStore, options: { onChange?: () => void } = {}) {
    this.#store = store;
    this.#onChange = options.onChange ?? (() => undefined);
  }

  #load(): Promise<Map<string, GgufEntry>> {
    this.#entries ??= this.#store.list().then((records) => {
      const entries = new Map<string, GgufEntry>();
      for (const record of records) {
        // A record this version cannot read is left alone, not allowed to break the catalogue.
        if (!parseGgufId(record.id)) continue;
        entries.set(record.id, ggufEntry(record, 'added'));
        this.#records.set(record.id, record);
      }
      return entries;
    });
    return this.#entries;
  }

  /** The added models, in the order they were added. */
  async entries(): Promise<GgufEntry[]> {
    return [...(await this.#load()).values()];
  }

  async get(id: string): Promise<GgufEntry | undefined> {
    return (await this.#load()).get(id);
  }

  /**
   * The record of the model added from `origin` (what the user gave) under `id`, or under any id
   * when none is given, if one was.
   */
  async addedFrom(origin: string, id?: string): Promise<AddedRecord | undefined> {
    await this.#load();
    return [...this.#records.values()].find(
      (r) => r.origin === origin && (id === undefined || r.id === id),
    );
  }

  /** Adds a model; 409 `model_exists` when one has its id. */
  async add(record: AddedRecord): Promise<GgufEntry> {
    const entries = await this.#load();
    if (entries.has(record.id)) throw exists(record.id);
    const entry = ggufEntry(record, 'added');
    // Taken before anything is awaited: a second add of the same id meanwhile gets 409.
    entries.set(record.id, entry);
    this.#records.set(record.id, record);
    try {
      await this.#store.put(record);
    } catch (err) {
      entries.delete(record.id);
      this.#records.delete(record.id);
      throw err;
    }
    this.#onChange();
    return entry;
  }

  /** Forgets a model; false when it was not an added one. */
  async remove(id: string): Promise<boolean> {
    const entries = await this.#load();
    if (!entries.has(id)) return false;
    await this.#store.delete(id);
    entries.delete(id);
    this.#records.delete(id);
    this.#onChange();
    return true;
  }

  /** Reads the store again on next use: another context changed it. */
  reload(): void {
    this.#entries = undefined;
    this.#records.clear();
  }
}

/** The catalogue that models are added to (the service worker's model directory). */
export interface AddableCatalog {
  /** Whether a model has this id: built in, or added. */
  has(id: string): Promise<boolean>;
  /** Adds the model (409 `model_exists` for a taken id) and returns its catalogue entry. */
  add(record: AddedRecord): Promise<unknown>;
  /** The model whose files include `url`, if any. */
  modelUsing(url: string): Promise<string | undefined>;
  /**
   * The model added from `origin` (the `source` the user gave), as `add` describes it: the same
   * addition asked again is that model, not a conflict.
   */
  addedFrom?(
    origin: string,
    id?: string,
  ): Promise<{ record: AddedRecord; model: unknown } | undefined>;
}

/** What `POST /v1/hearth/models` needs. */
export interface AddingDeps extends SourceDeps {
  catalog: AddableCatalog;
}

/** The body of `POST /v1/hearth/models`. */
const addBody = v.strictObject({
  /** The http(s) URL or app path of a `.gguf`, or `hf:<user>/<repo>:<quant>`. */
  source: v.pipe(
    v.string(),
    v.trim(),
    v.minLength(1, 'give a URL, a path or hf:<user>/<repo>:<quant>'),
  ),
  id: v.optional(v.string()),
  context_window: v.optional(
    v.pipe(
      v.number(),
      v.integer('expected a whole number of tokens'),
      v.minValue(1, 'expected at least 1 token'),
    ),
  ),
  tools: v.optional(v.boolean()),
  reasoning: v.optional(v.boolean()),
  /**
   * Whether it is an embedding model: by default, when its metadata gives a pooling type; `true`
   * makes it one when they do not say, `false` a chat model when they do.
   */
  embeddings: v.optional(v.boolean()),
  /**
   * Its vision projector (llama.cpp's `mmproj` GGUF): a URL or a path of the app; `false` for
   * none. By default, a Hugging Face repo's own projector, if it has one.
   */
  mmproj: v.optional(v.union([v.pipe(v.string(), v.trim(), v.minLength(1)), v.literal(false)])),
  /** Lets `source` be on the user's network or computer when the app is not (`private-network`). */
  allow_private_network: v.optional(v.boolean()),
});

const FIELDS = Object.keys(addBody.entries).join(', ');

/** The first schema issue as the error table's code, naming the field. */
function bodyError(issue: v.BaseIssue<unknown>): OpenAIError {
  const param = paramOf(issue);
  const field = param ?? 'body';
  if (issue.kind === 'schema' && issue.type === 'strict_object' && issue.expected === 'never') {
    return new OpenAIError(
      'unsupported_parameter',
      `Unsupported parameter: '${field}'; a model is added with ${FIELDS}.`,
      { param },
    );
  }
  if (issue.kind === 'schema' && issue.input === undefined) {
    return new OpenAIError('missing_field', `Missing required parameter: '${field}'.`, { param });
  }
  if (issue.kind === 'schema') {
    return new OpenAIError(
      'invalid_type',
      `Invalid type for '${field}': expected ${issue.expected ?? 'another type'}.`,
      { param },
    );
  }
  return new OpenAIError('invalid_value', `Invalid value for '${field}': ${issue.message}.`, {
    param,
  });
}

/**
 * What kind of model the metadata and the caller's `embeddings` make it: the embedding facts of
 * an embedding model, undefined for a chat model.
 */
function embeddingOf(
  head: Uint8Array,
  embeddings: boolean | undefined,
): EmbeddingFacts | undefined {
  if (embeddings === false) return undefined;
  const { metadata } = readGgufHeader(head);
  // A header cut short or spoilt still gives the pairs before: the pooling type comes early.
  const facts = embeddingFactsOf(metadata);
  if (facts) return facts;
  if (embeddings !== true) return undefined;
  return {
    dimensions: embeddingLengthOf(metadata),
    pooling: 'unknown',
    normalized: true,
    matryoshka: [],
  };
}

/** A projector given as the model: 400 that says where it goes. */
function assertNotProjector(head: Uint8Array, url: string): void {
  if (readGgufHeader(head).metadata.get('general.architecture') !== 'clip') return;
  throw new OpenAIError(
    'invalid_value',
    `${url} is a vision projector (mmproj), not a model: give the model as 'source' and this file as 'mmproj'.`,
    { param: 'source' },
  );
}

/**
 * The projector a model is added with, and the field a refusal of it names: the one the user
 * gave, none for `false`, else the one its Hugging Face repo has.
 */
function projectorOf(
  given: string | false | undefined,
  source: GgufSource,
  deps: SourceDeps,
): { url: string; param: 'mmproj' | 'source' } | null {
  if (given === false) return null;
  if (given !== undefined) return { url: projectorUrl(given, deps), param: 'mmproj' };
  return source.mmproj === undefined ? null : { url: source.mmproj, param: 'source' };
}

/**
 * Whether `body` asks for what `record` was added with: the same source (checked by the caller),
 * and the same id and projector where it names them. A site that adds its model at every visit
 * gets it back (200) rather than 409 `model_exists`.
 */
function sameAddition(
  record: AddedRecord,
  body: v.InferOutput<typeof addBody>,
  deps: SourceDeps,
): boolean {
  const differs = (given: unknown, kept: unknown) => given !== undefined && given !== kept;
  if (differs(body.id, record.id) || differs(body.context_window, record.context_window)) {
    return false;
  }
  if (differs(body.tools, record.tools) || differs(body.reasoning, record.reasoning)) return false;
  if (body.embeddings !== undefined && body.embeddings !== (record.embedding !== undefined)) {
    return false;
  }
  if (body.mmproj === undefined) return true;
  if (body.mmproj === false) return record.mmproj === undefined;
  return record.mmproj === projectorUrl(body.mmproj, deps);
}

/**
 * `POST /v1/hearth/models` `{source, id?, mmproj?, context_window?, tools?, reasoning?, embeddings?}`:
 * resolves the source, checks its files' first bytes (the first file's metadata among them) and
 * its projector's (`mmproj`, which lets it take images), and adds the model (201, its catalogue
 * entry), an embedding model when the metadata give a pooling type or `embeddings` is true, and
 * `embeddings` is not false.
 */
export async function addModel(
  request: Request,
  deps: AddingDeps,
  requestId: string,
): Promise<Response> {
  assertJsonContentType(request);
  const parsed = v.safeParse(addBody, await readJsonBody(request, 64 * 1024), {
    abortEarly: true,
  });
  if (!parsed.success) throw bodyError(parsed.issues[0]);
  const body = parsed.output;
  const again = await deps.catalog.addedFrom?.(body.source, body.id);
  if (again && sameAddition(again.record, body, deps)) {
    return jsonResponse(again.model, requestId, 200);
  }
  if (body.id !== undefined && !parseGgufId(body.id)) {
    throw new OpenAIError(
      'invalid_value',
      `Invalid value for 'id': a GGUF model's id is <user>/<repo>:<quant>, of letters, digits, '_', '.' and '-' (got ${JSON.stringify(body.id)}).`,
      { param: 'id' },
    );
  }
  // A given id that is taken needs no look-up on the network to be refused.
  if (body.id !== undefined && (await deps.catalog.has(body.id))) throw exists(body.id);
  const allowed = body.allow_private_network;
  if (body.source.startsWith('hf:')) {
    assertNetworkAllowed(deps.hubUrl ?? HUB_URL, allowed, 'source', deps.appUrl);
  }
  const source = await resolveSource(body.source, deps);
  for (const file of source.files) assertNetworkAllowed(file, allowed, 'source', deps.appUrl);
  const mmproj = projectorOf(body.mmproj, source, deps);
  if (mmproj) assertNetworkAllowed(mmproj.url, allowed, mmproj.param, deps.appUrl);
  const id = body.id ?? source.id;
  if (await deps.catalog.has(id)) throw exists(id);
  const [{ size, head }, projectorSize] = await Promise.all([
    inspectGguf(source.files, deps),
    mmproj ? inspectProjector(mmproj.url, mmproj.param, deps) : 0,
  ]);
  const bytes = size === null || projectorSize === null ? null : size + projectorSize;
  const record: AddedRecord = {
    id,
    files: source.files,
    ...(mmproj && { mmproj: mmproj.url }),
    size_mb: bytes === null ? null : Math.round(bytes / 1e5) / 10,
    origin: body.source,
    added_at: Date.now(),
  };
  if (body.context_window !== undefined) record.context_window = body.context_window;
  if (body.tools !== undefined) record.tools = body.tools;
  if (body.reasoning !== undefined) record.reasoning = body.reasoning;
  assertNotProjector(head, source.files[0]!);
  const embedding = embeddingOf(head, body.embeddings);
  if (embedding) record.embedding = embedding;
  return jsonResponse(await deps.catalog.add(record), requestId, 201);
}
