/**
 * @module
 * Cross-origin isolation on any static host: the service worker adds
 * `Cross-Origin-Opener-Policy` and `Cross-Origin-Embedder-Policy` to the documents and worker
 * scripts it serves, so that the app is `crossOriginIsolated` (and llama.cpp gets threads, which
 * need `SharedArrayBuffer`) even where the host cannot set headers, as on GitHub Pages.
 *
 * A dedicated worker's policy comes from its own script's response, not from its page: a page
 * with COEP may only start a worker whose script answers with a compatible COEP, so the engine
 * worker's script gets the headers too. (`blob:` workers, such as wllama's and Emscripten's thread
 * workers, inherit their creator's.)
 */
import type { WorkboxPlugin } from 'workbox-core/types.js';

/**
 * `require-corp` rather than `credentialless`: everything the app fetches from another origin is
 * a CORS request (model files, libraries) or not subject to COEP at all (the relay's WebSocket),
 * so both keep it working in Chromium (measured: tests/e2e/isolation.spec.ts), and only
 * `require-corp` also isolates Safari, which does not know `credentialless`.
 */
export const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
} as const;

/** The request destinations whose response sets a context's policies: documents and workers. */
const POLICY_DESTINATIONS: ReadonlySet<RequestDestination> = new Set<RequestDestination>([
  'document',
  'iframe',
  'frame',
  'worker',
  'sharedworker',
]);

/** Whether the response to `request` decides the isolation of a document or a worker. */
export function setsPolicies(request: Request): boolean {
  return POLICY_DESTINATIONS.has(request.destination);
}

/**
 * `response` with the isolation headers. An opaque response (a redirect a navigation follows
 * itself, or another origin's) cannot be rewritten and is passed on as it is.
 */
export function withIsolation(response: Response): Response {
  if (response.type === 'opaque' || response.type === 'opaqueredirect') return response;
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(ISOLATION_HEADERS)) headers.set(name, value);
  // A 101, 204, 205 or 304 takes no body; the others keep their stream.
  const body = [101, 204, 205, 304].includes(response.status) ? null : response.body;
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers,
  });
}

/** A Workbox plugin that adds the headers to documents and worker scripts (the precache's too). */
export const isolationPlugin: WorkboxPlugin = {
  handlerWillRespond: ({ request, response }) =>
    Promise.resolve(setsPolicies(request) ? withIsolation(response) : response),
};

/**
 * A document or worker script in scope that the precache does not hold (a pairing link's
 * address with its query, the dev server's pages): fetched from the network, with the headers.
 */
export async function isolatedFromNetwork(request: Request): Promise<Response> {
  return withIsolation(await fetch(request));
}
