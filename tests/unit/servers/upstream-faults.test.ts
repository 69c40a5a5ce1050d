import { describe, expect, it } from 'vitest';
import type { ChatEvent } from '../../../src/protocol/host/backend';
import { ECHO_MODEL, remoteModelInfo, staticModelDirectory } from '../../../src/models/models';
import { createApi } from '../../../src/api/router';
import { memoryServerStore, Servers, type FetchLike } from '../../../src/servers/servers';
import { UpstreamBackend } from '../../../src/servers/upstream';
import { parseChatRequest } from '../../../src/protocol/validate';
import { chatRequest, forwardTo, scriptedBackend, sseData } from '../helpers';

const BOX = { name: 'box', base_url: 'http://box/v1', models: ['m', 'e'], hidden: [], added_at: 1 };
function up(
  answer: (url: string, init?: RequestInit) => Response | Promise<Response>,
  headersTimeoutMs?: number,
) {
  const fetch: FetchLike = async (url, init) => answer(url, init);
  const servers = new Servers(memoryServerStore([BOX]), {
    fetch,
    organisations: async () => new Set(),
  });
  return new UpstreamBackend({
    resolve: (id) => servers.resolve(id),
    fetch,
    ...(headersTimeoutMs && { headersTimeoutMs }),
  });
}
async function run(b: UpstreamBackend, body: Record<string, unknown>) {
  const out: ChatEvent[] = [];
  for await (const e of b.chat(parseChatRequest(body), {
    signal: new AbortController().signal,
    body,
  }))
    out.push(e);
  return out;
}
const enc = (s: string) => new TextEncoder().encode(s);
const body = (extra = {}) => ({
  model: 'box/m',
  messages: [{ role: 'user', content: 'hi' }],
  ...extra,
});
const text = (ev: ChatEvent[]) =>
  ev
    .flatMap((e) => (e.type === 'tokens' ? e.tokens : []))
    .map((t) => (typeof t === 'string' ? t : t.text))
    .join('');

/**
 * Faults found by reading the first version of upstream.ts; each of these failed on it (a
 * TimeoutError through the body, a raw TypeError or SyntaxError as a 500, a `\r\n` split
 * between reads, logprobs dropped).
 */
describe('a server that misbehaves, or a network that breaks', () => {
  it('keeps an event whole when a \\r\\n inside it is split between two reads', async () => {
    const t =
      'data: {"choices":[{"index":0,\r\ndata: "delta":{"content":"a"},"finish_reason":"stop"}]}\r\n\r\ndata: [DONE]\r\n\r\n';
    const bytes = enc(t);
    const cut = t.indexOf('\r\n') + 1; // between \r and \n
    const b = up(
      () =>
        new Response(
          new ReadableStream({
            start(c) {
              c.enqueue(bytes.slice(0, cut));
              c.enqueue(bytes.slice(cut));
              c.close();
            },
          }),
        ),
    );
    expect(text(await run(b, body({ stream: true })))).toBe('a');
  });

  it('does not cut a stream that lasts longer than the time allowed to its headers', async () => {
    const b = up((_u, init) => {
      const signal = init!.signal!;
      let i = 0;
      return new Response(
        new ReadableStream({
          start(c) {
            signal.addEventListener('abort', () => c.error(signal.reason));
          },
          async pull(c) {
            await new Promise((r) => setTimeout(r, 20));
            if (i < 5)
              c.enqueue(enc(`data: {"choices":[{"index":0,"delta":{"content":"${i++}"}}]}\n\n`));
            else {
              c.enqueue(
                enc(
                  'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n',
                ),
              );
              c.close();
            }
          },
        }),
      );
    }, 50);
    expect(text(await run(b, body({ stream: true })))).toBe('01234');
  });

  it('reports a connection lost mid-stream as upstream_error, not as a bug in Hearth', async () => {
    const b = up(
      () =>
        new Response(
          new ReadableStream({
            start(c) {
              c.enqueue(enc('data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n'));
            },
            pull(c) {
              c.error(new TypeError('terminated'));
            },
          }),
        ),
    );
    await expect(run(b, body({ stream: true }))).rejects.toMatchObject({ code: 'upstream_error' });
  });

  it('reports a 200 chat reply that is not JSON as upstream_error', async () => {
    const b = up(
      () => new Response('<html>proxy login</html>', { headers: { 'content-type': 'text/html' } }),
    );
    await expect(run(b, body())).rejects.toMatchObject({ code: 'upstream_error' });
  });

  it('reports a 200 embeddings reply that is not JSON as upstream_error', async () => {
    const b = up(() => new Response('<html>proxy login</html>'));
    const gen = b.embed(
      { model: 'box/e', input: ['a'] },
      { signal: new AbortController().signal, body: { model: 'box/e', input: 'a' } },
    );
    await expect(
      (async () => {
        for await (const _ of gen) void _;
      })(),
    ).rejects.toMatchObject({ code: 'upstream_error' });
  });

  it('passes on the logprobs a server sent (not streamed)', async () => {
    const fetch: FetchLike = async () =>
      Response.json({
        choices: [
          {
            message: { content: 'a' },
            finish_reason: 'stop',
            logprobs: { content: [{ token: 'a', logprob: -0.1, bytes: [97], top_logprobs: [] }] },
          },
        ],
      });
    const servers = new Servers(memoryServerStore([BOX]), {
      fetch,
      organisations: async () => new Set(),
    });
    const api = createApi({
      backend: scriptedBackend(async function* () {}),
      models: staticModelDirectory(
        [ECHO_MODEL, remoteModelInfo('box/m', { server: 'box', host: 'box' })],
        {
          backend: forwardTo(new UpstreamBackend({ resolve: (id) => servers.resolve(id), fetch })),
        },
      ),
      servers: { registry: servers },
    });
    const r = await api.fetch(chatRequest(body({ logprobs: true })));
    const j = (await r.json()) as { choices: { logprobs: { content: unknown[] } }[] };
    expect(j.choices[0]!.logprobs.content).toHaveLength(1);
  });

  it('ends a stream cut by the network with one in-band upstream_error event', async () => {
    const fetch: FetchLike = async () =>
      new Response(
        new ReadableStream({
          start(c) {
            c.enqueue(enc('data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n'));
          },
          pull(c) {
            c.error(new TypeError('terminated'));
          },
        }),
      );
    const servers = new Servers(memoryServerStore([BOX]), {
      fetch,
      organisations: async () => new Set(),
    });
    const api = createApi({
      backend: scriptedBackend(async function* () {}),
      models: staticModelDirectory(
        [ECHO_MODEL, remoteModelInfo('box/m', { server: 'box', host: 'box' })],
        {
          backend: forwardTo(new UpstreamBackend({ resolve: (id) => servers.resolve(id), fetch })),
        },
      ),
      servers: { registry: servers },
    });
    const events = await sseData(await api.fetch(chatRequest(body({ stream: true }))));
    expect(events.at(-1)).toMatchObject({ error: { code: 'upstream_error' } });
  });
});
