import { describe, expect, it } from 'vitest';
import type { ChatEvent } from '../../../src/protocol/host/backend';
import { ECHO_MODEL, remoteModelInfo, staticModelDirectory } from '../../../src/models/models';
import { createApi } from '../../../src/api/router';
import { memoryServerStore, Servers, type FetchLike } from '../../../src/servers/servers';
import { UpstreamBackend } from '../../../src/servers/upstream';
import {
  UPSTREAM_EVENT_LIMIT,
  UPSTREAM_MODELS_LIMIT,
  UPSTREAM_REPLY_LIMIT,
} from '../../../src/servers/upstream-read';
import { parseChatRequest } from '../../../src/protocol/validate';
import { chatRequest, forwardTo, scriptedBackend, sseData } from '../helpers';

const BOX = { name: 'box', base_url: 'http://box/v1', models: ['m', 'e'], hidden: [], added_at: 1 };
const enc = (s: string) => new TextEncoder().encode(s);
const MiB = 1024 * 1024;

/**
 * A body that sends `head`, then `filler` for ever (until `limit` bytes, then `tail`), and counts
 * what was pulled: a reader that stops at its cap pulls little more than the cap, and cancels.
 */
function endless(head: string, filler: string, { limit = Infinity, tail = '' } = {}) {
  const chunk = enc(filler.repeat(Math.ceil((64 * 1024) / filler.length)));
  const state = { pulled: 0, cancelled: false };
  let started = false;
  const stream = new ReadableStream<Uint8Array>({
    pull(c) {
      if (!started) {
        started = true;
        c.enqueue(enc(head));
        state.pulled += head.length;
        return;
      }
      if (state.pulled >= limit) {
        c.enqueue(enc(tail));
        c.close();
        return;
      }
      c.enqueue(chunk);
      state.pulled += chunk.byteLength;
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { stream, state };
}

/** The API with the server `box`, whose every answer is `answer()`. */
function stack(answer: () => Response) {
  const fetch: FetchLike = async () => answer();
  const servers = new Servers(memoryServerStore([BOX]), {
    fetch,
    organisations: async () => new Set(),
  });
  const backend = new UpstreamBackend({ resolve: (id) => servers.resolve(id), fetch });
  const api = createApi({
    backend: scriptedBackend(async function* () {}),
    models: staticModelDirectory(
      [
        ECHO_MODEL,
        remoteModelInfo('box/m', { server: 'box', host: 'box' }),
        remoteModelInfo('box/e', { server: 'box', host: 'box' }),
      ],
      { backend: forwardTo(backend) },
    ),
    servers: { registry: servers },
  });
  return { api, backend, servers };
}

const body = (extra = {}) => ({
  model: 'box/m',
  messages: [{ role: 'user', content: 'hi' }],
  ...extra,
});

async function run(b: UpstreamBackend, request: Record<string, unknown>) {
  const out: ChatEvent[] = [];
  for await (const e of b.chat(parseChatRequest(request), {
    signal: new AbortController().signal,
    body: request,
  })) {
    out.push(e);
  }
  return out;
}

const REPLY = (content: string) =>
  JSON.stringify({
    choices: [{ message: { content }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 1, completion_tokens: 1 },
  });

describe("a server's reply larger than Hearth reads", () => {
  it('answers a whole reply over the cap with 502 upstream_error saying it was too large, having stopped reading', async () => {
    const endlessReply = endless('{"choices":[{"message":{"content":"', 'x');
    const t = stack(() => new Response(endlessReply.stream));
    const response = await t.api.fetch(chatRequest(body()));
    expect(response.status).toBe(502);
    expect((await response.json()).error).toMatchObject({
      code: 'upstream_error',
      type: 'server_error',
      message: expect.stringMatching(/box.*larger than 16 MiB/),
    });
    expect(endlessReply.state.pulled).toBeLessThan(UPSTREAM_REPLY_LIMIT + 256 * 1024);
    expect(endlessReply.state.cancelled).toBe(true);
  });

  it('refuses a whole reply that declares a length over the cap before reading it', async () => {
    let read = false;
    const t = stack(
      () =>
        new Response(
          // No chunk is asked for before a read (highWaterMark 0).
          new ReadableStream({ pull: () => void (read = true) }, { highWaterMark: 0 }),
          { headers: { 'content-length': String(UPSTREAM_REPLY_LIMIT + 1) } },
        ),
    );
    await expect(run(t.backend, body())).rejects.toMatchObject({
      code: 'upstream_error',
      message: expect.stringMatching(/larger than 16 MiB/),
    });
    expect(read).toBe(false);
  });

  it('reads a whole reply just under the cap', async () => {
    const content = 'y'.repeat(UPSTREAM_REPLY_LIMIT - REPLY('').length);
    const t = stack(() => new Response(REPLY(content)));
    const events = await run(t.backend, body());
    expect(events.find((e) => e.type === 'tokens')).toMatchObject({ tokens: [content] });
  });

  it('answers an embeddings reply over the cap with 502 upstream_error', async () => {
    const t = stack(() => new Response(endless('{"data":[{"embedding":[', '0.125,').stream));
    const response = await t.api.fetch(
      new Request('http://app.example/v1/openai/embeddings', {
        method: 'POST',
        headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'box/e', input: 'a' }),
      }),
    );
    expect(response.status).toBe(502);
    expect((await response.json()).error.message).toMatch(/larger than 16 MiB/);
  });

  it('ends a stream whose line never ends with an in-band upstream_error, having stopped reading', async () => {
    const endlessLine = endless(
      'data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\ndata: {"choices":[{"index":0,"delta":{"content":"',
      'z',
    );
    const t = stack(() => new Response(endlessLine.stream));
    const events = await sseData(await t.api.fetch(chatRequest(body({ stream: true }))));
    expect(events.at(-1)).toMatchObject({
      error: {
        code: 'upstream_error',
        message: expect.stringMatching(/box.*event larger than 4 MiB/),
      },
    });
    expect(endlessLine.state.pulled).toBeLessThan(UPSTREAM_EVENT_LIMIT + 256 * 1024);
    expect(endlessLine.state.cancelled).toBe(true);
  });

  it('ends a stream whose event of many data lines never ends with upstream_error', async () => {
    const t = stack(() => new Response(endless('data: {"a":\n', 'data: 1\n').stream));
    await expect(run(t.backend, body({ stream: true }))).rejects.toMatchObject({
      code: 'upstream_error',
      message: expect.stringMatching(/event larger than 4 MiB/),
    });
  });

  it('streams a long reply made of many events under the cap, whatever its whole length', async () => {
    const event = `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'w'.repeat(1000) } }] })}\n\n`;
    const last =
      'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n';
    const long = endless('', event, { limit: UPSTREAM_EVENT_LIMIT * 2, tail: last });
    const t = stack(() => new Response(long.stream));
    const events = await run(t.backend, body({ stream: true }));
    expect(events.at(-1)).toMatchObject({ type: 'end', finish_reason: 'stop' });
  });

  it('answers the next request after a reply that was too large', async () => {
    let first = true;
    const t = stack(() => {
      if (!first) return new Response(REPLY('fine'));
      first = false;
      return new Response(endless('{"choices":"', 'x').stream);
    });
    expect((await t.api.fetch(chatRequest(body()))).status).toBe(502);
    const next = await t.api.fetch(chatRequest(body()));
    expect(next.status).toBe(200);
    expect((await next.json()).choices[0].message.content).toBe('fine');
  });

  it('refuses a /models list over its cap when a server is added, with 502', async () => {
    const list = endless('{"data":[', '{"id":"m"},');
    const servers = new Servers(memoryServerStore(), {
      fetch: async () => new Response(list.stream),
      organisations: async () => new Set(),
    });
    await expect(servers.add({ name: 'box', base_url: 'http://box/v1' })).rejects.toMatchObject({
      status: 502,
      code: 'upstream_error',
      message: expect.stringMatching(/larger than 4 MiB/),
    });
    expect(list.state.pulled).toBeLessThan(UPSTREAM_MODELS_LIMIT + 256 * 1024);
    expect(await servers.list()).toEqual([]);
  });

  it('keeps the message of an error reply of any length, reading only the first part', async () => {
    const error = endless('{"error":{"message":"overloaded', ' and more');
    const t = stack(() => new Response(error.stream, { status: 503 }));
    const response = await t.api.fetch(chatRequest(body()));
    expect(response.status).toBe(503);
    expect((await response.json()).error.message).toMatch(
      /HTTP 503: \{"error":\{"message":"overloaded and more/,
    );
    expect(error.state.pulled).toBeLessThan(1 * MiB);
  });
});
