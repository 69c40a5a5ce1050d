/**
 * @module
 * The engine worker's catalogue while it runs: the built-in models and the GGUF models the user
 * added, which the service worker keeps in IndexedDB and announces on a `BroadcastChannel`
 * (src/models/added/added-models.ts). `entries` is one array, changed in place, so that the downloads
 * and the model service, handed it once, always see the models there are now. The announcement
 * and a request sent right after the 201 travel different ways and may arrive in either order, so
 * a request for a GGUF id the worker does not know reads the store again before it is served.
 */
import { AddedModels, type AddedModelStore } from '../models/added/added-models';
import type {
  ChatEvent,
  ChatOptions,
  LoadingBackend,
  ModelService,
} from '../protocol/host/backend';
import { parseGgufId, type CatalogEntry, type GgufEntry } from '../models/catalog';
import { OpenAIError } from '../protocol/errors';
import type { ChatRequest, EmbeddingRequest } from '../protocol/types';

/** The built-in models and those the user added, as one live list. */
export class LiveCatalog {
  /** Every model: the built-in ones, then the added ones. Changed in place, never replaced. */
  readonly entries: CatalogEntry[];
  readonly #builtIn: number;
  readonly #added: AddedModels;
  readonly #onChange: () => void;
  #gguf: GgufEntry[];
  /** Reads in turn: each one starts after the last, so the latest change is never missed. */
  #reads: Promise<void> = Promise.resolve();

  constructor(
    builtIn: readonly CatalogEntry[],
    store: AddedModelStore,
    options: { onChange?: () => void } = {},
  ) {
    this.entries = [...builtIn];
    this.#builtIn = builtIn.length;
    this.#added = new AddedModels(store);
    this.#onChange = options.onChange ?? (() => undefined);
    this.#gguf = this.#ggufOf();
  }

  #ggufOf(): GgufEntry[] {
    return this.entries.filter((e): e is GgufEntry => e.engine === 'llama.cpp');
  }

  /** The GGUF models now, for the llama.cpp engine. */
  gguf(): readonly GgufEntry[] {
    return this.#gguf;
  }

  has(id: string): boolean {
    return this.entries.some((e) => e.id === id);
  }

  /** Reads the added models again (at start, and whenever the service worker says they changed). */
  refresh(): Promise<void> {
    this.#reads = this.#reads.then(async () => {
      this.#added.reload();
      const added = await this.#added.entries().catch(() => []);
      this.entries.splice(this.#builtIn, this.entries.length - this.#builtIn, ...added);
      this.#gguf = this.#ggufOf();
      this.#onChange();
    });
    return this.#reads;
  }

  /** Resolves once `model` is known, if it can be: a GGUF id not known yet is looked up. */
  async know(model: string): Promise<void> {
    if (this.has(model) || !parseGgufId(model)) return;
    await this.refresh();
  }

  /** `service`, each call made once its model is known. */
  service(service: ModelService): ModelService {
    const know = (model: string) => this.know(model);
    return {
      async *download(model, options) {
        await know(model);
        yield* service.download(model, options);
      },
      cancelDownload: async (model) => (await know(model), service.cancelDownload(model)),
      deleteModel: async (model) => (await know(model), service.deleteModel(model)),
      unload: () => service.unload(),
      inspect: async (model) => (await know(model), service.inspect(model)),
    };
  }

  /** `backend`, each request made once its model is known (at once for a known one). */
  backend(backend: LoadingBackend): LoadingBackend {
    const after = (model: string, run: () => AsyncIterable<ChatEvent>) => {
      // The hot path, every request for a model already known, gains no step.
      if (this.has(model) || !parseGgufId(model)) return run();
      const known = this.know(model);
      return (async function* () {
        await known;
        yield* run();
      })();
    };
    return {
      chat: (request: ChatRequest, options: ChatOptions) =>
        after(request.model, () => backend.chat(request, options)),
      load: (model: string, options: ChatOptions) =>
        after(model, () => backend.load(model, options)),
      embed: (request: EmbeddingRequest, options: ChatOptions) =>
        after(request.model, () => {
          if (!backend.embed) throw new OpenAIError('engine_error', 'Nothing here embeds.');
          return backend.embed(request, options);
        }),
    };
  }
}
