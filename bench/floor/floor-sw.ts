/**
 * @module
 * The floor of the benchmarks: a bare service worker with no engine. It answers a chat request at
 * once, as cheaply as a service worker can — JSON in, the same JSON shapes and SSE bytes out —
 * so that what Hearth adds on top of the platform can be measured.
 */
/// <reference lib="webworker" />
import { MAX_TOKEN_BATCH } from '../../src/bridge/messages';
import { newCompletionId } from '../../src/protocol/respond';

declare const self: ServiceWorkerGlobalScope;

self.addEventListener('install', () => void self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

const encoder = new TextEncoder();
// The API's id, not a shorter one: every event carries it, and 27 bytes fewer an event (14% of a
// token's event) made the floor's stream that much lighter than the API's.
const head = (id: string, created: number) =>
  `{"id":"${id}","object":"chat.completion.chunk","created":${created},"model":"hearth/echo","choices":`;

async function answer(request: Request): Promise<Response> {
  const body = (await request.json()) as { messages: { content: string }[]; stream?: boolean };
  const content = body.messages.at(-1)?.content ?? '';
  const id = newCompletionId();
  const created = Math.floor(Date.now() / 1000);
  const tokens = content.match(/\S+\s*/g) ?? [];
  if (!body.stream) {
    const completion = {
      id,
      object: 'chat.completion',
      created,
      model: 'hearth/echo',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content, refusal: null },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: {
        prompt_tokens: tokens.length,
        completion_tokens: tokens.length,
        total_tokens: 2 * tokens.length,
        estimated_cost: 0,
      },
    };
    return new Response(JSON.stringify(completion), {
      headers: { 'content-type': 'application/json' },
    });
  }
  // The same bytes the API sends, in the same chunks, as fast as the reader takes them: the first
  // token alone, then at most MAX_TOKEN_BATCH events a chunk (as the engine worker batches them,
  // and the API writes one batch a pull), then the end.
  const event = (i: number, token: string) => {
    const delta =
      i === 0
        ? `{"role":"assistant","content":${JSON.stringify(token)}}`
        : `{"content":${JSON.stringify(token)}}`;
    return `data: ${head(id, created)}[{"index":0,"delta":${delta},"logprobs":null,"finish_reason":null}]}\n\n`;
  };
  let i = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i < tokens.length) {
        const end = i === 0 ? 1 : Math.min(tokens.length, i + MAX_TOKEN_BATCH);
        let chunk = '';
        for (; i < end; i += 1) chunk += event(i, tokens[i] as string);
        controller.enqueue(encoder.encode(chunk));
        return;
      }
      controller.enqueue(
        encoder.encode(
          `data: ${head(id, created)}[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n`,
        ),
      );
      controller.close();
    },
  });
  return new Response(stream, { headers: { 'content-type': 'text/event-stream; charset=utf-8' } });
}

/**
 * The floor of forwarding to a server (bench/servers.mjs): the request goes to `?to=` as it came
 * and the server's answer comes back untouched, its body never read here — no validation, no
 * rewriting, not one byte handled in JavaScript. What this costs against the same server fetched
 * directly from the page is what any service worker in the way costs on this machine.
 */
async function forward(request: Request, to: string): Promise<Response> {
  const upstream = await fetch(to, {
    method: 'POST',
    headers: {
      authorization: request.headers.get('authorization') ?? '',
      'content-type': 'application/json',
    },
    body: await request.text(),
  });
  return new Response(upstream.body, { status: upstream.status, headers: upstream.headers });
}

self.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url);
  if (url.pathname.endsWith('/v1/openai/chat/completions')) {
    event.respondWith(answer(event.request));
  } else if (url.pathname.endsWith('/v1/forward') && url.searchParams.has('to')) {
    event.respondWith(forward(event.request, url.searchParams.get('to') ?? ''));
  }
});
