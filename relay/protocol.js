/**
 * @module
 * What the relay and the paired tab say to each other over the WebSocket, and the rules both ends
 * apply: the API's route table (`API_ROUTES`, which the API's router reads too), which paths the
 * relay forwards, which relay addresses a pairing link may name. Plain JavaScript with JSDoc
 * types, so that Node runs the relay as it is and the app's TypeScript imports the same.
 *
 * Messages are JSON objects in text frames, and bodies binary messages: the request's id as 4
 * bytes (big-endian), then the bytes, as they are. A request announces its body's length (`body`),
 * and the body follows as one binary message; a response's body comes as binary messages in
 * order, between its `head` and its `end`. Base64 in JSON, as protocol 1 had it, made each body
 * held three times over (its bytes, its text and the frame) beside what the relay counted.
 * Flow control: the tab may have at most `WINDOW_BYTES` of a response's body sent and not yet
 * written by the relay to its client; the relay returns `credit` as its client takes the bytes,
 * so a client that does not read holds the tab's reading of the response, and through it the
 * service worker's stream.
 */

/** The protocol's version: the relay refuses a tab that speaks another one. */
export const PROTOCOL_VERSION = 2;

/** The WebSocket's path on the relay. */
export const RELAY_PATH = '/relay';

/** Bytes of one response the tab may send before the relay gives credit back. */
export const WINDOW_BYTES = 256 * 1024;

/**
 * The API's routes: the one list that the API's router (src/api/router.ts), the relay
 * (`isApiPath`, `takesBody`, `bodyLimitOf`), the forwarding to servers the user added
 * (`openaiPathOf`) and the fuzz suite (tests/fuzz/routes.ts) read, and that docs/api.md's API
 * table must match (tests/unit/api/routes.test.ts). It lives here, in the relay, because the relay
 * ships as these files alone and runs them unbuilt, and the app's TypeScript imports them as they
 * are.
 *
 * Adding an endpoint: one line here, and one handler in createApi (src/api/router.ts). The line
 * gives the route's `method`; its `path` after `{base}v1/` (OpenAI's routes are `openai/…`, with
 * `alias: true` where clients also call them at `/v1/…`, and the relay forwards both; Hearth's own
 * are `hearth/…`, which the relay never forwards); the `name` of its handler; the `body` it reads;
 * and `when`, if it needs one of createApi's options (a new kind of option is one more name in
 * `RouteCondition`, and its group in createApi). createApi gets a handler of that `name` in the
 * group of its `when`. The unit tests then ask for the route's row in docs/api.md's API table
 * ([The API](../docs/api.md#the-api)) and, for a GET, for what the fuzz suite expects of it
 * (`GET_EXPECTED` in tests/fuzz/routes.ts).
 *
 * @typedef {'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'} RouteMethod
 *
 * What a route reads of the request's body: `none`; `json`, a JSON body up to the API's body limit
 * (4 MiB); `chat`, a chat (or Responses) request's JSON, whose images may make it larger (64 MiB); `file`, a
 * file's bytes as they are, limited only by storage; `form`, a `multipart/form-data` upload of a
 * file (OpenAI's `POST /files`), which the API takes up to its largest file (512 MiB) and the
 * relay up to its own limit (`FILE_BODY_LIMIT`, 64 MiB: it holds a body whole before the tab gets
 * it). The relay reads and forwards the body of an OpenAI route that reads one, and no other.
 * @typedef {'none' | 'json' | 'chat' | 'file' | 'form'} RouteBody
 *
 * What createApi must be given to offer a route: the `ApiOptions` member of that name (`status`,
 * `settings`, `adding`, `servers`, `catalog`), or a backend that can load models (`loading`), or
 * one that can also unload them (`unloading`). A route without `when` is always offered.
 * @typedef {'status' | 'settings' | 'adding' | 'servers' | 'catalog' | 'loading' | 'unloading'} RouteCondition
 *
 * @typedef {object} RouteLine One line of the table.
 * @property {RouteMethod} method
 * @property {string} path After `{base}v1/`; a trailing `/*` takes the rest (one character or
 *   more), which the handler receives.
 * @property {string} name The handler's name in createApi; routes that share a handler share it.
 * @property {RouteBody} body
 * @property {RouteCondition} [when]
 * @property {boolean} [alias] An OpenAI route (`openai/…`) also served at its path without
 *   `openai/`, for gateways that take `{base_url}` itself as their target.
 */

const OPENAI = 'openai/';

// One line a route (prettier would break the longer ones into seven lines each).
// prettier-ignore
const LINES = /** @type {const} @satisfies {readonly RouteLine[]} */ ([
  // OpenAI's API, at `/v1/openai/…` and (`alias`) at `/v1/…`.
  { method: 'POST', path: 'openai/chat/completions', name: 'chat', body: 'chat', alias: true },
  { method: 'POST', path: 'openai/embeddings', name: 'embeddings', body: 'json', alias: true },
  { method: 'GET', path: 'openai/models', name: 'listModels', body: 'none', alias: true },
  { method: 'GET', path: 'openai/models/*', name: 'getModel', body: 'none', alias: true },
  { method: 'POST', path: 'openai/responses', name: 'createResponse', body: 'chat', alias: true },
  { method: 'GET', path: 'openai/responses/*', name: 'readResponse', body: 'none', alias: true },
  { method: 'DELETE', path: 'openai/responses/*', name: 'deleteResponse', body: 'none', alias: true },
  { method: 'POST', path: 'openai/files', name: 'createFile', body: 'form', alias: true },
  { method: 'GET', path: 'openai/files', name: 'listFiles', body: 'none', alias: true },
  { method: 'GET', path: 'openai/files/*', name: 'readFile', body: 'none', alias: true },
  { method: 'DELETE', path: 'openai/files/*', name: 'removeFile', body: 'none', alias: true },
  { method: 'POST', path: 'openai/vector_stores', name: 'postVectorStores', body: 'json', alias: true },
  { method: 'GET', path: 'openai/vector_stores', name: 'getVectorStores', body: 'none', alias: true },
  { method: 'GET', path: 'openai/vector_stores/*', name: 'getVectorStores', body: 'none', alias: true },
  { method: 'POST', path: 'openai/vector_stores/*', name: 'postVectorStores', body: 'json', alias: true },
  { method: 'DELETE', path: 'openai/vector_stores/*', name: 'deleteVectorStores', body: 'none', alias: true },
  // Hearth's own, each offered where createApi has what it needs.
  { method: 'GET', path: 'hearth/status', name: 'status', body: 'none', when: 'status' },
  { method: 'GET', path: 'hearth/models/*', name: 'manageModel', body: 'none', when: 'loading' },
  { method: 'POST', path: 'hearth/models/*', name: 'manageModel', body: 'json', when: 'loading' },
  { method: 'DELETE', path: 'hearth/models/*', name: 'manageModel', body: 'none', when: 'loading' },
  { method: 'POST', path: 'hearth/unload', name: 'unload', body: 'none', when: 'unloading' },
  { method: 'GET', path: 'hearth/settings', name: 'getSettings', body: 'none', when: 'settings' },
  { method: 'PATCH', path: 'hearth/settings', name: 'patchSettings', body: 'json', when: 'settings' },
  { method: 'GET', path: 'hearth/keys', name: 'listKeys', body: 'none', when: 'settings' },
  { method: 'POST', path: 'hearth/keys', name: 'issueKey', body: 'json', when: 'settings' },
  { method: 'DELETE', path: 'hearth/keys/*', name: 'revokeKey', body: 'none', when: 'settings' },
  { method: 'POST', path: 'hearth/models', name: 'addModel', body: 'json', when: 'adding' },
  { method: 'PUT', path: 'hearth/files/*', name: 'storeFile', body: 'file', when: 'adding' },
  { method: 'DELETE', path: 'hearth/files/*', name: 'deleteFile', body: 'none', when: 'adding' },
  { method: 'GET', path: 'hearth/servers', name: 'listServers', body: 'none', when: 'servers' },
  { method: 'POST', path: 'hearth/servers', name: 'addServer', body: 'json', when: 'servers' },
  { method: 'PATCH', path: 'hearth/servers/*', name: 'patchServer', body: 'json', when: 'servers' },
  { method: 'DELETE', path: 'hearth/servers/*', name: 'deleteServer', body: 'none', when: 'servers' },
  { method: 'GET', path: 'hearth/catalog', name: 'catalog', body: 'none', when: 'catalog' },
  { method: 'GET', path: 'hearth/responses', name: 'listKeptResponses', body: 'none' },
  { method: 'DELETE', path: 'hearth/responses', name: 'clearKeptResponses', body: 'none' },
]);

/** @typedef {(typeof LINES)[number]['name']} RouteName A handler's name in createApi. */

/**
 * @typedef {object} ApiRoute A route as the API serves it: a line of the table, or its alias.
 * @property {RouteMethod} method
 * @property {string} path After `{base}v1/`; a trailing `/*` takes the rest.
 * @property {RouteName} name
 * @property {RouteBody} body
 * @property {RouteCondition} [when]
 * @property {string} [aliasOf] On an alias: the OpenAI route's path it stands for.
 */

/**
 * Every route the API serves, in the order it matches them (an alias right after its line; a
 * path's methods in the order a 405's `allow` header lists them).
 * @type {readonly Readonly<ApiRoute>[]}
 */
export const API_ROUTES = Object.freeze(
  LINES.flatMap((/** @type {RouteLine & { name: RouteName }} */ line) => {
    const { alias, ...route } = line;
    const alike = alias
      ? [{ ...route, path: route.path.slice(OPENAI.length), aliasOf: route.path }]
      : [];
    return [route, ...alike].map((r) => Object.freeze(r));
  }),
);

/**
 * Whether `route` is OpenAI's API (`openai/…` or its alias), which the relay forwards.
 * @param {ApiRoute} route
 */
function isOpenAiRoute(route) {
  return route.path.startsWith(OPENAI) || route.aliasOf !== undefined;
}

/**
 * Where OpenAI's API has the route named `name`, after a server's base URL (`/chat/completions`):
 * where Hearth sends a request for a model of a server the user added (src/servers/upstream.ts).
 * @param {RouteName} name
 */
export function openaiPathOf(name) {
  const route = API_ROUTES.find((r) => r.name === name && r.path.startsWith(OPENAI));
  if (!route || route.path.endsWith('*')) throw new Error(`No OpenAI route is named ${name}.`);
  return `/${route.path.slice(OPENAI.length)}`;
}

/**
 * A regular expression's source for a route's path: as it is, a trailing `/*` taking one
 * character or more.
 * @param {string} path
 */
function pathSource(path) {
  const wild = path.endsWith('/*');
  const fixed = (wild ? path.slice(0, -2) : path).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return wild ? `${fixed}/.+` : fixed;
}

/**
 * The pathnames (no query) under `/v1/` that are one of `paths`, exactly as written (no trailing
 * slash: the relay forwards a path as the table has it).
 * @param {readonly string[]} paths
 */
function pathnamesOf(paths) {
  if (paths.length === 0) return /(?!)/;
  return new RegExp(`^/v1/(?:${[...new Set(paths)].map(pathSource).join('|')})$`);
}

/** The routes the relay forwards: OpenAI's API, never Hearth's own. */
const RELAYED = API_ROUTES.filter(isOpenAiRoute);

/** The aliases' paths, each once: `/v1/chat/completions`, `/v1/models/*`… */
const ALIASES = [...new Set(RELAYED.filter((r) => r.aliasOf).map((r) => r.path))];

/**
 * The paths the relay forwards, as its refusal of another names them: any under `/v1/openai/`
 * (the API answers its own 404 for one it lacks) and the aliases.
 */
export const RELAYED_PATHS = Object.freeze([`/v1/${OPENAI}*`, ...ALIASES.map((p) => `/v1/${p}`)]);

/** The API's paths: `/v1/openai/*` and the `/v1` aliases, nothing else (docs/relay.md). */
const API_PATH = pathnamesOf([`${OPENAI}*`, ...ALIASES]);

/**
 * Whether `pathname` (no query) is one of the API's paths, the only ones the relay forwards.
 * @param {string} pathname
 */
export function isApiPath(pathname) {
  return API_PATH.test(pathname);
}

/** The relayed routes that read a body, each with its pathnames. */
const BODY_ROUTES = RELAYED.filter((r) => r.body !== 'none').map((route) => ({
  method: route.method,
  pathnames: pathnamesOf([route.path]),
}));

/**
 * Whether the API reads the body of a request with `method` to `pathname`: only on a route of the
 * table that the relay forwards and whose `body` is not `none` (a POST to chat completions or
 * embeddings). The relay reads and forwards no other body; the API answers any other request (its
 * GETs, and the 404 or 405 of a path or method it does not have) without reading one.
 * @param {string} method
 * @param {string} pathname
 */
export function takesBody(method, pathname) {
  return BODY_ROUTES.some((r) => r.method === method && r.pathnames.test(pathname));
}

/** The relayed routes whose bodies may carry images (chat completions), or are forms (files). */
const CHAT_PATH = pathnamesOf(RELAYED.filter((r) => r.body === 'chat').map((r) => r.path));
const FORM_PATH = pathnamesOf(RELAYED.filter((r) => r.body === 'form').map((r) => r.path));

/**
 * The largest body the API takes at `pathname`: a chat completion's may carry images; a file.
 * @param {string} pathname
 * @param {{ plain: number, images: number, files: number }} limits
 */
export function bodyLimitOf(pathname, { plain, images, files }) {
  if (FORM_PATH.test(pathname)) return files;
  return CHAT_PATH.test(pathname) ? images : plain;
}

/**
 * The media type the API reads at `pathname`: a multipart form for a file's upload, else JSON.
 * @param {string} pathname
 */
export function mediaTypeOf(pathname) {
  return FORM_PATH.test(pathname) ? 'multipart/form-data' : 'application/json';
}

/**
 * The bearer key in an `Authorization` header, as the API reads it (src/api/router.ts), or
 * null when there is none (missing, not `Bearer`, or empty).
 * @param {string | undefined} header
 */
export function bearerKey(header) {
  const key = /^Bearer[ \t]+(.*)$/i.exec(header ?? '')?.[1]?.trim();
  return key ? key : null;
}

/**
 * Whether `url` is a relay address a pairing link may name: `ws:` or `wss:` on this machine, by
 * the names the app's Content Security Policy can allow (Chromium accepts no IPv6 literal there).
 * @param {string} url
 */
export function isLoopbackRelayUrl(url) {
  try {
    const parsed = new URL(url);
    return (
      (parsed.protocol === 'ws:' || parsed.protocol === 'wss:') &&
      (parsed.hostname === '127.0.0.1' || parsed.hostname === 'localhost')
    );
  } catch {
    return false;
  }
}

/**
 * @typedef {object} RelayHello The relay's first message once a tab is let in.
 * @property {'hello'} type
 * @property {number} version {@link PROTOCOL_VERSION}
 * @property {string} key The relay's API key: the tab registers it as an issued key.
 * @property {string} base_url Where callers reach the relay, e.g. `http://127.0.0.1:8788/v1`.
 * @property {string} session Lets this tab (and only it) connect again after a reload.
 */

/**
 * @typedef {object} RelayRequest A caller's request, for the tab to replay against its own API.
 * @property {'request'} type
 * @property {number} id
 * @property {string} method
 * @property {string} path The path and query, e.g. `/v1/openai/chat/completions`.
 * @property {Record<string, string>} headers
 * @property {number | null} body The body's length in bytes, or null when there is none; a body
 *   of a byte or more follows as one binary message (see {@link frameHeader}).
 */

/**
 * @typedef {object} RelayCredit The relay wrote `bytes` of request `id` to its client.
 * @property {'credit'} type
 * @property {number} id
 * @property {number} bytes
 */

/**
 * @typedef {object} RelayCancel The caller went away: stop request `id`.
 * @property {'cancel'} type
 * @property {number} id
 */

/** @typedef {RelayHello | RelayRequest | RelayCredit | RelayCancel} RelayToTab */

/**
 * @typedef {object} TabReady The tab registered the key and serves requests from now on.
 * @property {'ready'} type
 * @property {number} version
 */

/**
 * @typedef {object} TabBye The user ended the pairing in the app.
 * @property {'bye'} type
 */

/**
 * @typedef {object} TabHead The response's status line and headers.
 * @property {'head'} type
 * @property {number} id
 * @property {number} status
 * @property {Record<string, string>} headers
 */

/**
 * @typedef {object} TabEnd The response's body is complete.
 * @property {'end'} type
 * @property {number} id
 */

/**
 * @typedef {object} TabFailed The tab could not get (the rest of) the response.
 * @property {'failed'} type
 * @property {number} id
 * @property {string} message
 */

/**
 * The text messages of the tab; the bytes of a response's body come as binary messages (see
 * {@link frameHeader}), between its `head` and its `end`.
 * @typedef {TabReady | TabBye | TabHead | TabEnd | TabFailed} TabToRelay
 */

/** The bytes before a body's own in its binary message: the request's id. */
export const FRAME_HEADER_BYTES = 4;

/**
 * The start of a binary message that carries bytes of request `id`'s body: the id, big-endian.
 * @param {number} id
 */
export function frameHeader(id) {
  const header = new Uint8Array(FRAME_HEADER_BYTES);
  new DataView(header.buffer).setUint32(0, id);
  return header;
}

/**
 * The request id and the body bytes of a binary message, or null when it is too short to be one.
 * The bytes are a view of the message, not a copy.
 * @param {Uint8Array} message
 * @returns {{ id: number, bytes: Uint8Array } | null}
 */
export function readFrame(message) {
  if (message.byteLength < FRAME_HEADER_BYTES) return null;
  const id = new DataView(message.buffer, message.byteOffset, FRAME_HEADER_BYTES).getUint32(0);
  return { id, bytes: message.subarray(FRAME_HEADER_BYTES) };
}
