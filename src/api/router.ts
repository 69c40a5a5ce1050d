/**
 * @module
 * src/api/ is the whole /v1 API as Request → Response functions: the router and its endpoints
 * (chat completions, embeddings, Hearth's model and settings endpoints) and a chat request's life
 * with the backend. It imports src/protocol, src/models, src/servers, itself and the route table
 * (relay/protocol.js); the service worker is its caller, and the engines reuse chat-run and
 * completion.
 *
 * The whole `/v1` API as one `Request → Response` function: route (404, 405), then auth (401),
 * then the endpoint. Every response, success or error, carries an `x-request-id`. The routes are
 * the route table's (relay/protocol.js `API_ROUTES`), each answered by the handler of its name.
 */
import type { ImageDeps } from './images';
import { addModel, type AddingDeps } from '../models/added/added-models';
import type { ChatBackend } from '../protocol/host/backend';
import { BODY_LIMIT } from '../protocol/body';
import { handleChatCompletions } from './chat';
import { chatFileSearch } from './vector-stores/file-search';
import { handleEmbeddings } from './embeddings';
import { modelEndpoints, unloadModel, type ManagingBackend } from './manage';
import { OpenAIError } from '../protocol/errors';
import { modelObject, retrieveModel, type ModelDirectory } from '../models/models';
import { deleteFile, storeFile, type FileDeps } from '../models/added/gguf-upload';
import { errorResponse, jsonResponse, newRequestId } from '../protocol/respond';
import {
  addServer,
  deleteServer,
  listServers,
  patchServer,
  type Servers,
} from '../servers/servers';
import type { Settings } from './settings';
import { createFile, deleteFile as removeFile, listFiles, readFile } from './vector-stores/files';
import { memoryDocumentStore, type DocumentStore } from '../documents/store';
import type { StorageEstimator } from '../models/storage-room';
import { createResponse } from './responses/responses';
import { Indexer } from './vector-stores/indexing';
import { vectorStoreRoute } from './vector-stores/routes';
import type { DocumentDeps } from './vector-stores/context';
import { clearKept, deleteResponse, listKept, readResponse } from './responses/kept';
import { memoryResponseStore, type ResponseStore } from './responses/store';
import {
  API_ROUTES,
  type RouteCondition,
  type RouteMethod,
  type RouteName,
} from '../../relay/protocol.js';

/** Everything the API depends on. */
export interface ApiOptions {
  /** A backend that can load models also gets the model endpoints it can serve. */
  backend: ChatBackend | ManagingBackend;
  models: ModelDirectory;
  /** Whether a bearer key may use the API (docs/api.md, Auth: any non-empty key by default). */
  authorize?: (key: string) => boolean | Promise<boolean>;
  /** The owner's settings: auth mode, issued keys and prices (`/v1/hearth/settings`, `…/keys`). */
  settings?: Settings;
  /** Body of `GET /v1/hearth/status`. */
  status?: () => Promise<unknown>;
  /** The models of `GET /v1/hearth/catalog`. */
  catalog?: () => Promise<unknown[]>;
  /**
   * Adding GGUF models (`POST /v1/hearth/models`), and storing files from the user's computer
   * for them (`PUT` and `DELETE /v1/hearth/files/…`).
   */
  adding?: AddingDeps & FileDeps;
  /** The app's base path, e.g. `/` or `/repo/`; the API lives at `{base}v1/`. */
  base?: string;
  /** Longest wait for a first token (default 4 minutes). */
  firstTokenTimeoutMs?: number;
  /** Longest silence of the engine after the first token (default 60 s). */
  stallTimeoutMs?: number;
  /** Largest request body (default 4 MiB). */
  bodyLimit?: number;
  /** Largest body of a chat request with images (default 64 MiB, `IMAGE_BODY_LIMIT`). */
  imageBodyLimit?: number;
  /** How a chat request's images are read and decoded (`ImageDeps`). */
  images?: Omit<ImageDeps, 'origin'>;
  /**
   * The servers the user added (`/v1/hearth/servers`). Their models' requests go to the backend
   * the model directory resolves them to.
   */
  servers?: { registry: Servers };
  /**
   * Where the Responses API keeps responses (`store: true`): the service worker's IndexedDB;
   * memory where none is given (tests).
   */
  responses?: ResponseStore;
  /**
   * Where files and vector stores are kept (docs/api.md, Files): the service worker's IndexedDB;
   * memory where none is given (tests).
   */
  documents?: DocumentStore;
  /** The storage's quota and usage, for files (`navigator.storage.estimate` by default). */
  estimate?: StorageEstimator;
}

/** What the caller of `Api.fetch` knows about the request beyond the request itself. */
export interface RequestContext {
  /** Whether the page that sent the request is still there (see `ChatOptions.alive`). */
  alive?: () => Promise<boolean>;
  /**
   * Extends the worker's life past the response while work it started goes on (the service
   * worker's `FetchEvent.waitUntil`): a vector store's indexing.
   */
  waitUntil?: (work: Promise<unknown>) => void;
}

/** The API: `fetch` answers any request under `{base}v1/`. */
export interface Api {
  /** Whether `url` belongs to the API (the service worker answers only these). */
  owns(url: URL): boolean;
  fetch(request: Request, context?: RequestContext): Promise<Response>;
}

interface Call {
  request: Request;
  requestId: string;
  /** The path after a route's `*`. */
  rest: string;
  context: RequestContext;
}

type Handler = (call: Call) => Promise<Response>;
/** Handlers by the name the route table gives them. */
type Handlers = Partial<Record<RouteName, Handler>>;
/** A route of the table (relay/protocol.js `API_ROUTES`) that createApi offers, with its handler. */
interface Route {
  method: RouteMethod;
  /** Path after `{base}v1/`; a trailing `*` takes the rest, which the handler receives. */
  path: string;
  handler: Handler;
}

const FIRST_TOKEN_TIMEOUT_MS = 4 * 60 * 1000;
const STALL_TIMEOUT_MS = 60 * 1000;

function bearerKey(request: Request): string | undefined {
  const match = /^Bearer[ \t]+(.*)$/i.exec(request.headers.get('authorization') ?? '');
  const key = match?.[1]?.trim();
  return key === '' ? undefined : key;
}

/** Builds the API. */
export function createApi(options: ApiOptions): Api {
  const base = `${(options.base ?? '/').replace(/\/?$/, '/')}v1/`;
  const { settings } = options;
  const authorize =
    options.authorize ?? (settings ? (key: string) => settings.authorize(key) : () => true);
  const chatDeps = {
    backend: options.backend,
    models: options.models,
    firstTokenTimeoutMs: options.firstTokenTimeoutMs ?? FIRST_TOKEN_TIMEOUT_MS,
    stallTimeoutMs: options.stallTimeoutMs ?? STALL_TIMEOUT_MS,
    bodyLimit: options.bodyLimit ?? BODY_LIMIT,
    imageBodyLimit: options.imageBodyLimit,
    images: options.images,
  };
  const chat: Handler = ({ request, requestId, context }) =>
    handleChatCompletions(request, chatDeps, { requestId, ...context }, (body, id) =>
      chatFileSearch(body, { deps: vectorDeps, indexer }, id),
    );
  const embeddings: Handler = ({ request, requestId, context }) =>
    handleEmbeddings(request, chatDeps, { requestId, ...context });
  const listModels: Handler = async ({ requestId }) => {
    const models = await options.models.list();
    return jsonResponse({ object: 'list', data: models.map(modelObject) }, requestId);
  };
  const getModel: Handler = async ({ requestId, rest }) => {
    // The openai SDK sends the id's slash encoded (`hearth%2Fecho`).
    let id: string;
    try {
      id = decodeURIComponent(rest);
    } catch {
      id = rest;
    }
    return jsonResponse(modelObject(await retrieveModel(options.models, id)), requestId);
  };
  const { status, catalog, adding, backend } = options;
  const loader = 'load' in backend ? backend : undefined;
  const answerModel =
    loader &&
    modelEndpoints({
      backend: loader,
      models: options.models,
      firstTokenTimeoutMs: chatDeps.firstTokenTimeoutMs,
    });
  const unload = loader?.unload;
  const registry = options.servers?.registry;
  const serverName = (rest: string) => {
    try {
      return decodeURIComponent(rest);
    } catch {
      return rest;
    }
  };
  // The handlers of the route table (relay/protocol.js `API_ROUTES`), by name, in the group of
  // the table's `when`: a group is undefined where createApi was not given what it needs, and a
  // route without its handler is not offered (404).
  const kept = options.responses ?? memoryResponseStore();
  const filesDeps = {
    store: options.documents ?? memoryDocumentStore(),
    estimate: options.estimate,
  };
  // Vector stores: one indexer for this API, which indexes their files in the background.
  const vectorDeps: DocumentDeps = {
    ...chatDeps,
    documents: filesDeps.store,
    embeddingModel: settings && (() => settings.embeddingModel()),
  };
  const indexer = new Indexer(vectorDeps);
  const responsesDeps = { ...chatDeps, store: kept, vectorStores: { deps: vectorDeps, indexer } };
  const vectorStores =
    (method: 'GET' | 'POST' | 'DELETE'): Handler =>
    ({ request, rest, requestId, context }) =>
      vectorStoreRoute(request, method, rest, {
        deps: vectorDeps,
        indexer,
        requestId,
        keepAlive: context.waitUntil,
      });
  const handlers: Record<RouteCondition | 'always', Handlers | undefined> = {
    always: {
      chat,
      embeddings,
      listModels,
      getModel,
      createResponse: ({ request, requestId, context }) =>
        createResponse(request, responsesDeps, { requestId, ...context }),
      readResponse: ({ request, rest, requestId }) => readResponse(request, rest, kept, requestId),
      deleteResponse: ({ rest, requestId }) => deleteResponse(rest, kept, requestId),
      listKeptResponses: ({ requestId }) => listKept(kept, requestId),
      clearKeptResponses: ({ requestId }) => clearKept(kept, requestId),
      createFile: ({ request, requestId }) => createFile(request, filesDeps, requestId),
      listFiles: ({ request, requestId }) => listFiles(request, filesDeps, requestId),
      readFile: ({ rest, requestId }) => readFile(rest, filesDeps, requestId),
      removeFile: ({ rest, requestId }) => removeFile(rest, filesDeps, requestId),
      getVectorStores: vectorStores('GET'),
      postVectorStores: vectorStores('POST'),
      deleteVectorStores: vectorStores('DELETE'),
    },
    status: status && {
      status: async ({ requestId }) => jsonResponse(await status(), requestId),
    },
    loading: answerModel && {
      manageModel: ({ request, rest, requestId }) => answerModel(request, rest, requestId),
    },
    unloading: unload && {
      unload: ({ requestId }) => unloadModel({ unload: () => unload.call(loader) }, requestId),
    },
    settings: settings && {
      getSettings: ({ requestId }) => settings.get(requestId),
      patchSettings: ({ request, requestId }) => settings.patch(request, requestId),
      listKeys: ({ requestId }) => settings.listKeys(requestId),
      issueKey: ({ request, requestId }) => settings.issueKey(request, requestId),
      revokeKey: ({ rest, requestId }) => settings.revokeKey(rest, requestId),
    },
    adding: adding && {
      addModel: ({ request, requestId }) => addModel(request, adding, requestId),
      storeFile: ({ request, rest, requestId }) => storeFile(request, rest, adding, requestId),
      deleteFile: ({ rest, requestId }) => deleteFile(rest, adding, requestId),
    },
    servers: registry && {
      listServers: ({ requestId }) => listServers(registry, requestId),
      addServer: ({ request, requestId }) => addServer(request, registry, requestId),
      patchServer: ({ request, rest, requestId }) =>
        patchServer(request, serverName(rest), registry, requestId),
      deleteServer: ({ rest, requestId }) => deleteServer(serverName(rest), registry, requestId),
    },
    catalog: catalog && {
      catalog: async ({ requestId }) =>
        jsonResponse({ object: 'list', data: await catalog() }, requestId),
    },
  };
  const routes: Route[] = API_ROUTES.flatMap(({ method, path, name, when }) => {
    const handler = handlers[when ?? 'always']?.[name];
    return handler ? [{ method, path, handler }] : [];
  });

  function match(path: string): { routes: Route[]; rest: string } {
    const found: Route[] = [];
    let rest = '';
    for (const route of routes) {
      if (route.path.endsWith('/*')) {
        const prefix = route.path.slice(0, -1);
        if (path.startsWith(prefix) && path.length > prefix.length) {
          found.push(route);
          rest = path.slice(prefix.length);
        }
      } else if (route.path === path) {
        found.push(route);
      }
    }
    return { routes: found, rest };
  }

  async function dispatch(
    request: Request,
    requestId: string,
    context: RequestContext,
  ): Promise<Response> {
    const path = new URL(request.url).pathname.slice(base.length).replace(/\/$/, '');
    const found = match(path);
    if (found.routes.length === 0) {
      throw new OpenAIError('unknown_url', `Unknown request URL: ${request.method} /v1/${path}.`);
    }
    // HEAD is GET without the body (RFC 9110 §9.3.2): the GET route answers; `fetch` drops the body.
    const head = request.method === 'HEAD';
    const route = found.routes.find((r) => r.method === (head ? 'GET' : request.method));
    if (!route) {
      const methods = found.routes.map((r) => r.method);
      // Where GET is allowed, so is HEAD (answered above by the GET route).
      const allow = (methods.includes('GET') ? [...methods, 'HEAD'] : methods).join(', ');
      throw new OpenAIError(
        'method_not_allowed',
        `Method ${request.method} is not allowed for /v1/${path}; use ${allow}.`,
        { headers: { allow } },
      );
    }
    const key = bearerKey(request);
    if (key === undefined || !(await authorize(key))) {
      throw new OpenAIError(
        'invalid_api_key',
        key === undefined
          ? 'You did not provide an API key: send it as `Authorization: Bearer <key>`.'
          : 'The API key you provided is not valid here.',
      );
    }
    const asked = head ? new Request(request, { method: 'GET' }) : request;
    return route.handler({ request: asked, requestId, rest: found.rest, context });
  }

  return {
    owns: (url) => url.pathname.startsWith(base),
    async fetch(request, context = {}) {
      const requestId = newRequestId();
      let response: Response;
      try {
        response = await dispatch(request, requestId, context);
      } catch (err) {
        response = errorResponse(err, requestId);
      }
      if (request.method !== 'HEAD' || response.body === null) return response;
      await response.body.cancel();
      return new Response(null, { status: response.status, headers: response.headers });
    },
  };
}
