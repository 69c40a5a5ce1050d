/** Shared wiring for unit tests: the real stack over a real Node MessageChannel. */
import type { GpuLimits } from '../../src/protocol/host/gpu-facts';
import type { ChatBackend, ChatEvent } from '../../src/protocol/host/backend';
import { PortBackend, type FlowOptions } from '../../src/bridge/client';
import { HostServer } from '../../src/bridge/server';
import { Channel } from '../../src/bridge/channel';
import { EchoEngine } from '../../src/engines/echo/echo-engine';
import { EngineQueue } from '../../src/engine-host/queue';
import { decodeSse } from '../../src/protocol/sse';
import { ECHO_MODEL, staticModelDirectory, type ModelInfo } from '../../src/models/models';
import { createApi, type ApiOptions } from '../../src/api/router';

/**
 * A host server for `backend` over a real MessageChannel, and the client end the service worker
 * holds (`client`), as the browser wires them; `counts` gives the status's queue.
 */
export function bridgeTo(
  backend: ChatBackend,
  {
    flow,
    models = () => [],
    loaded = () => null,
    counts = () => ({ running: 0, waiting: 0 }),
  }: {
    flow?: FlowOptions;
    models?: () => string[];
    loaded?: () => string | null;
    counts?: () => { running: number; waiting: number };
  } = {},
) {
  const server = new HostServer(backend, {
    status: () => ({
      host: { id: 'test-host', build: 'test' },
      models: models(),
      loaded_model: loaded(),
      loading: null,
      load_error: null,
      failing_models: {},
      downloads: [],
      evicted_models: {},
      last_speed: null,
      queue: counts(),
      device: null,
    }),
  });
  const { port1, port2 } = new MessageChannel();
  server.attach(port2);
  const client = new PortBackend(async () => port1, flow);
  return { client, server, port1, port2, close: () => (port1.close(), port2.close()) };
}

/**
 * The API over the port bridge, the queue and the echo engine, as the browser wires them;
 * `engine` replaces the echo engine (one that counts what it made, say), `flow` the bridge's
 * flow-control limits.
 */
export function echoStack<E extends EchoEngine = EchoEngine>({
  engine = new EchoEngine() as E,
  flow,
  maxWaiting = 32,
  ...options
}: Partial<ApiOptions> & { engine?: E; flow?: FlowOptions; maxWaiting?: number } = {}) {
  const queue = new EngineQueue([engine], { maxWaiting });
  const {
    client: backend,
    server,
    port1,
    port2,
  } = bridgeTo(queue, {
    flow,
    models: () => queue.models,
    loaded: () => queue.loadedModel,
    counts: () => queue.counts,
  });
  const api = createApi({
    backend,
    models: staticModelDirectory([ECHO_MODEL]),
    status: () => backend.status(),
    ...options,
  });
  return {
    api,
    engine,
    queue,
    server,
    backend,
    hostPorts: { port1, port2 },
    close() {
      port1.close();
      port2.close();
    },
  };
}

/** A backend that plays a script of events; `signal` records the abort. */
export function scriptedBackend(
  script: (signal: AbortSignal) => AsyncIterable<ChatEvent>,
): ChatBackend & { signals: AbortSignal[] } {
  const signals: AbortSignal[] = [];
  return {
    signals,
    chat(_request, { signal }) {
      signals.push(signal);
      const channel = new Channel<ChatEvent>();
      void (async () => {
        try {
          for await (const event of script(signal)) channel.push(event);
          channel.close();
        } catch (err) {
          channel.fail(err);
        }
      })();
      return channel;
    },
  };
}

export const URL_BASE = 'http://hearth.test';

/** A POST to the chat endpoint with a key and a JSON body. */
export function chatRequest(
  body: unknown,
  init: { headers?: Record<string, string>; path?: string } = {},
): Request {
  return new Request(`${URL_BASE}${init.path ?? '/v1/openai/chat/completions'}`, {
    method: 'POST',
    headers: { authorization: 'Bearer k', 'content-type': 'application/json', ...init.headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** A GET with a key. */
export function getRequest(path: string, headers: Record<string, string> = {}): Request {
  return new Request(`${URL_BASE}${path}`, { headers: { authorization: 'Bearer k', ...headers } });
}

/** A minimal valid echo request, with extra fields. */
export function echoBody(content: string, extra: Record<string, unknown> = {}) {
  return { model: 'hearth/echo', messages: [{ role: 'user', content }], ...extra };
}

/** Every `data:` payload of an SSE response, JSON-parsed except `[DONE]`. */
export async function sseData(response: Response): Promise<unknown[]> {
  const out: unknown[] = [];
  if (!response.body) return out;
  for await (const event of decodeSse(response.body)) {
    out.push(event.data === '[DONE]' ? '[DONE]' : JSON.parse(event.data));
  }
  return out;
}

/** Resolves after `ms`. */
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it holds (or fails after `ms`). */
export async function eventually(check: () => boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition never held');
    await sleep(5);
  }
}

/** A static directory's `backend` option: the server models (`remote`) go to `backend`. */
export const forwardTo = (backend: ChatBackend) => (model: ModelInfo) =>
  model.remote ? backend : undefined;

/** Adapter limits above all WebLLM asks for (a GPU of today's), for the tests' device facts. */
export const ROOMY_LIMITS = {
  maxBufferSize: 1 << 30,
  maxStorageBufferBindingSize: 1 << 30,
  maxComputeWorkgroupStorageSize: 32 << 10,
  maxStorageBuffersPerShaderStage: 10,
  maxComputeInvocationsPerWorkgroup: 256,
} as const satisfies GpuLimits;
