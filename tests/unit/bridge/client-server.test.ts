import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Channel } from '../../../src/bridge/channel';
import { PortBackend } from '../../../src/bridge/client';
import { HostServer } from '../../../src/bridge/server';
import type { ChatBackend, ChatEvent } from '../../../src/protocol/host/backend';
import { HostLostError } from '../../../src/protocol/host/backend';
import { OpenAIError } from '../../../src/protocol/errors';
import type { EmbeddingRequest } from '../../../src/protocol/types';
import { parseChatRequest } from '../../../src/protocol/validate';
import {
  bridgeTo,
  chatRequest,
  echoBody,
  echoStack,
  eventually,
  scriptedBackend,
  sleep,
  sseData,
} from '../helpers';

let stack: ReturnType<typeof echoStack>;
beforeEach(() => {
  stack = echoStack();
});
afterEach(() => stack.close());

const request = (content: string, extra: Record<string, unknown> = {}) =>
  parseChatRequest(echoBody(content, extra));

async function collect(events: AsyncIterable<ChatEvent>): Promise<ChatEvent[]> {
  const out: ChatEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

describe('the bridge with the echo engine', () => {
  it('streams an echo reply through the ports: tokens, then the end', async () => {
    const events = await collect(
      stack.backend.chat(request('one two three'), { signal: new AbortController().signal }),
    );
    // Queued and running are what the service worker assumes: they cost no message.
    expect(events.some((e) => e.type === 'state')).toBe(false);
    const tokens = events.flatMap((e) => (e.type === 'tokens' ? e.tokens : []));
    expect(tokens).toEqual(['one ', 'two ', 'three']);
    expect(events.at(-1)).toEqual({
      type: 'end',
      finish_reason: 'stop',
      usage: { prompt_tokens: 3, completion_tokens: 3 },
    });
  });

  it('sends the first token alone and batches the rest of a fast reply', async () => {
    const words = Array.from({ length: 20_000 }, (_, i) => `w${i}`).join(' ');
    const events = await collect(
      stack.backend.chat(request(words), { signal: new AbortController().signal }),
    );
    const batches = events.filter((e) => e.type === 'tokens');
    expect(batches[0]?.tokens).toHaveLength(1);
    expect(batches.reduce((n, b) => n + b.tokens.length, 0)).toBe(20_000);
    expect(batches.length).toBeLessThan(200);
  });

  it('answers through the whole API, JSON and SSE alike', async () => {
    const json = await stack.api.fetch(chatRequest(echoBody('a b')));
    expect(
      ((await json.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message
        .content,
    ).toBe('a b');
    const sse = await sseData(
      await stack.api.fetch(chatRequest(echoBody('a b', { stream: true }))),
    );
    expect(sse.at(-1)).toBe('[DONE]');
  });

  it('cancels a running request when the client cancels its stream, and frees its port', async () => {
    const response = await stack.api.fetch(
      chatRequest(echoBody('a b c d e f g h i j', { stream: true, echo_delay_ms: 20 })),
    );
    const reader = response.body!.getReader();
    await reader.read();
    expect(stack.queue.counts.running).toBe(1);
    await reader.cancel();
    await eventually(() => stack.queue.counts.running === 0 && stack.server.openPorts === 0);
  });

  it('drops a queued request the moment it is cancelled', async () => {
    const first = new AbortController();
    const second = new AbortController();
    const running = collect(stack.backend.chat(request('a b c', { echo_delay_ms: 30 }), first));
    const queued = collect(stack.backend.chat(request('x'), second));
    await eventually(() => stack.queue.counts.waiting === 1);
    second.abort();
    await expect(queued).rejects.toBeInstanceOf(OpenAIError);
    await eventually(() => stack.queue.counts.waiting === 0);
    expect((await running).at(-1)?.type).toBe('end');
  });

  it('serves the next request while a reader that stopped reading holds a long reply', async () => {
    const stalled = await stack.api.fetch(
      chatRequest(echoBody(Array.from({ length: 5000 }, () => 'x').join(' '), { stream: true })),
    );
    const reader = stalled.body!.getReader();
    await reader.read(); // one read, then nothing
    const next = await stack.api.fetch(chatRequest(echoBody('next')));
    expect(next.status).toBe(200);
    expect(
      ((await next.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message
        .content,
    ).toBe('next');
    // The stalled reply fits its window (5,000 short tokens), so it was buffered whole; reading
    // it now gets every token. (A longer one pauses the engine: flow.test.ts.)
    let text = '';
    const decoder = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value);
    }
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
  });

  it('reports queue and port counts over a request port', async () => {
    const slow = collect(
      stack.backend.chat(request('a b c', { echo_delay_ms: 30 }), new AbortController()),
    );
    await eventually(() => stack.queue.counts.running === 1);
    const status = await stack.backend.status();
    expect(status.queue).toEqual({ running: 1, waiting: 0 });
    expect(status.open_ports).toBe(1);
    await slow;
    expect((await stack.backend.status()).open_ports).toBe(0);
  });
});

describe('states across the bridge', () => {
  it('sends a model load and what follows it, and nothing before', async () => {
    const bridge = bridgeTo(
      scriptedBackend(async function* () {
        yield { type: 'state', state: 'queued' };
        yield { type: 'state', state: 'loading' };
        yield { type: 'state', state: 'running' };
        yield { type: 'tokens', tokens: ['a'] };
        yield {
          type: 'end',
          finish_reason: 'stop',
          usage: { prompt_tokens: 1, completion_tokens: 1 },
        };
      }),
    );
    const events = await collect(
      bridge.client.chat(request('x'), { signal: new AbortController().signal }),
    );
    bridge.close();
    expect(events.filter((e) => e.type === 'state')).toEqual([
      { type: 'state', state: 'loading' },
      { type: 'state', state: 'running' },
    ]);
  });
});

describe('errors across the bridge', () => {
  it('carries an OpenAIError as data: code, param and retry-after intact', async () => {
    const bridge = bridgeTo(
      scriptedBackend(async function* () {
        yield { type: 'state', state: 'running' };
        throw new OpenAIError('context_length_exceeded', 'too long', { param: 'messages' });
      }),
    );
    const error = await collect(
      bridge.client.chat(request('x'), { signal: new AbortController().signal }),
    ).catch((e: unknown) => e);
    bridge.close();
    expect(error).toBeInstanceOf(OpenAIError);
    expect((error as OpenAIError).toBody().error).toMatchObject({
      code: 'context_length_exceeded',
      param: 'messages',
    });
  });

  it('turns an engine crash into engine_error with its message', async () => {
    const bridge = bridgeTo(
      scriptedBackend(async function* () {
        yield { type: 'state', state: 'running' };
        throw new RangeError('out of memory');
      }),
    );
    const error = (await collect(
      bridge.client.chat(request('x'), { signal: new AbortController().signal }),
    ).catch((e: unknown) => e)) as OpenAIError;
    bridge.close();
    expect(error.code).toBe('engine_error');
    expect(error.message).toContain('RangeError: out of memory');
  });

  it('fails with the host error when there is no host port', async () => {
    const client = new PortBackend(async () => {
      throw new OpenAIError('engine_unavailable', 'no tab');
    });
    const error = (await collect(
      client.chat(request('x'), { signal: new AbortController().signal }),
    ).catch((e: unknown) => e)) as OpenAIError;
    expect(error.code).toBe('engine_unavailable');
  });

  it('does not hang status when the host never answers', async () => {
    const { port1, port2 } = new MessageChannel();
    const client = new PortBackend(async () => port1);
    await expect(client.status(30)).rejects.toMatchObject({ code: 'engine_unavailable' });
    port1.close();
    port2.close();
  });

  it('sends chat/cancel when aborted after the request started', async () => {
    let seen: AbortSignal | undefined;
    const bridge = bridgeTo(
      scriptedBackend(async function* (signal) {
        seen = signal;
        yield { type: 'tokens', tokens: ['a'] };
        await new Promise((resolve) => signal.addEventListener('abort', resolve));
      }),
    );
    const abort = new AbortController();
    const events = bridge.client.chat(request('x'), { signal: abort.signal });
    await events.next();
    abort.abort();
    await eventually(() => seen?.aborted === true);
    await sleep(1);
    bridge.close();
  });
});

describe('the bridge and the life of pages and hosts', () => {
  it('asks the service worker side whether a waiting request’s page is still there', async () => {
    let asked = 0;
    const first = collect(
      stack.backend.chat(request('a b', { echo_delay_ms: 20 }), new AbortController()),
    );
    const dropped = collect(
      stack.backend.chat(request('x'), {
        signal: new AbortController().signal,
        alive: async () => {
          asked += 1;
          return false;
        },
      }),
    ).catch((e: unknown) => e);
    await first;
    expect(await dropped).toMatchObject({ code: 'engine_unavailable' });
    expect(asked).toBe(1);
    await eventually(() => stack.server.openPorts === 0);
  });

  it('fails every request on a lost host at once with HostLostError, and forgets them', async () => {
    const slow = stack.backend.chat(request('a b c d', { echo_delay_ms: 50 }), {
      signal: new AbortController().signal,
    });
    await slow.next();
    expect(stack.backend.openRequests).toBe(1);
    const { port1 } = stack.hostPorts;
    stack.backend.hostLost(port1);
    const error = await collect(slow).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HostLostError);
    expect(stack.backend.openRequests).toBe(0);
  });
});

describe('a host port handed out as its host dies', () => {
  it('fails the request at once instead of sending it into the void', async () => {
    const { port1, port2 } = new MessageChannel();
    const client = new PortBackend(async () => port1);
    client.hostLost(port1);
    const error = await collect(
      client.chat(request('x'), { signal: new AbortController().signal }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HostLostError);
    port1.close();
    port2.close();
  });
});

/** A backend whose embeddings requests play `script`; it records each request and its signal. */
function embedScripted(
  script: (request: EmbeddingRequest, signal: AbortSignal) => AsyncIterable<ChatEvent>,
) {
  const requests: EmbeddingRequest[] = [];
  const signals: AbortSignal[] = [];
  const backend: ChatBackend = {
    chat: () => {
      throw new Error('no chat in these tests');
    },
    embed(request, { signal }) {
      requests.push(request);
      signals.push(signal);
      const channel = new Channel<ChatEvent>();
      void (async () => {
        try {
          for await (const event of script(request, signal)) channel.push(event);
          channel.close();
        } catch (err) {
          channel.fail(err);
        }
      })();
      return channel;
    },
  };
  return { backend, requests, signals };
}

/** The bridge over a real MessageChannel, its ports at hand. */
function embedBridge(backend: ChatBackend) {
  const server = new HostServer(backend, {
    status: () => ({
      host: { id: 'h', build: 'b' },
      models: [],
      loaded_model: null,
      loading: null,
      load_error: null,
      failing_models: {},
      downloads: [],
      evicted_models: {},
      last_speed: null,
      queue: { running: 0, waiting: 0 },
      device: null,
    }),
  });
  const { port1, port2 } = new MessageChannel();
  server.attach(port2);
  const client = new PortBackend(async () => port1);
  return { client, server, port1, close: () => (port1.close(), port2.close()) };
}

describe('embeddings across the bridge', () => {
  const vectors = [
    new Float32Array([0.1, -0.2, 0.3, Math.fround(1 / 3)]),
    new Float32Array([1e-30, -0, 3.4e38, -1]),
    Float32Array.from({ length: 1024 }, (_, i) => Math.sin(i)),
  ];

  it('carries the request to the backend and its vectors back intact, as Float32Arrays, with loading and generating on the way', async () => {
    const { backend, requests } = embedScripted(async function* (request) {
      yield { type: 'state', state: 'queued' };
      yield { type: 'state', state: 'loading' };
      yield { type: 'state', state: 'running' };
      yield { type: 'state', state: 'generating' };
      yield { type: 'embeddings', vectors, prompt_tokens: 3 * request.input.length };
    });
    const bridge = embedBridge(backend);
    const request: EmbeddingRequest = { model: 'acme/e', input: [[1, 2], [3], [4, 5, 6]] };
    const events = await collect(
      bridge.client.embed(request, { signal: new AbortController().signal, requestId: 'req_1' }),
    );
    bridge.close();
    expect(requests).toEqual([request]);
    expect(events.slice(0, -1)).toEqual([
      { type: 'state', state: 'loading' },
      { type: 'state', state: 'generating' },
    ]);
    const last = events.at(-1);
    if (last?.type !== 'embeddings') throw new Error('expected vectors');
    expect(last.prompt_tokens).toBe(9);
    expect(last.vectors).toHaveLength(3);
    for (const [i, vector] of last.vectors.entries()) {
      expect(vector).toBeInstanceOf(Float32Array);
      expect(Array.from(vector)).toEqual(Array.from(vectors[i] ?? []));
      expect(Object.is(vector[1], vectors[i]?.[1])).toBe(true);
    }
  });

  it('frees the request port once the vectors are sent', async () => {
    const { backend } = embedScripted(async function* () {
      yield { type: 'embeddings', vectors: [new Float32Array([1])], prompt_tokens: 1 };
    });
    const bridge = embedBridge(backend);
    await collect(bridge.client.embed({ model: 'm', input: ['a'] }, new AbortController()));
    await eventually(() => bridge.server.openPorts === 0);
    expect(bridge.client.openRequests).toBe(0);
    bridge.close();
  });

  it('aborts the backend’s signal when the request is cancelled after it started', async () => {
    const { backend, signals } = embedScripted(async function* (_request, signal) {
      yield { type: 'state', state: 'generating' };
      await new Promise((resolve) => signal.addEventListener('abort', resolve));
    });
    const bridge = embedBridge(backend);
    const abort = new AbortController();
    const events = bridge.client.embed({ model: 'm', input: ['a'] }, { signal: abort.signal });
    expect(await events.next()).toMatchObject({
      value: { type: 'state', state: 'generating' },
    });
    expect(signals[0]?.aborted).toBe(false);
    abort.abort();
    await eventually(() => signals[0]?.aborted === true);
    await eventually(() => bridge.server.openPorts === 0);
    bridge.close();
  });

  it('fails a request whose host is lost midway with HostLostError, and forgets it', async () => {
    const { backend } = embedScripted(async function* (_request, signal) {
      yield { type: 'state', state: 'generating' };
      await new Promise((resolve) => signal.addEventListener('abort', resolve));
    });
    const bridge = embedBridge(backend);
    const events = bridge.client.embed({ model: 'm', input: ['a'] }, new AbortController());
    await events.next();
    expect(bridge.client.openRequests).toBe(1);
    bridge.client.hostLost(bridge.port1);
    const error = await collect(events).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HostLostError);
    expect(bridge.client.openRequests).toBe(0);
    bridge.close();
  });

  it('carries a refusal of the inputs back with its code and param', async () => {
    const { backend } = embedScripted(async function* () {
      yield { type: 'state', state: 'running' };
      throw new OpenAIError('context_length_exceeded', 'too long', { param: 'input[3]' });
    });
    const bridge = embedBridge(backend);
    const error = await collect(
      bridge.client.embed({ model: 'm', input: ['a'] }, new AbortController()),
    ).catch((e: unknown) => e);
    bridge.close();
    expect(error).toBeInstanceOf(OpenAIError);
    expect((error as OpenAIError).toBody().error).toMatchObject({
      code: 'context_length_exceeded',
      param: 'input[3]',
    });
  });

  it('fails with engine_error where the host’s backend makes no embeddings', async () => {
    const bridge = embedBridge({
      chat: () => {
        throw new Error('no chat');
      },
    });
    const error = await collect(
      bridge.client.embed({ model: 'm', input: ['a'] }, new AbortController()),
    ).catch((e: unknown) => e);
    bridge.close();
    expect(error).toMatchObject({ code: 'engine_error' });
  });

  it('refuses embeddings on the echo engine through the real queue with 400 invalid_value naming model', async () => {
    const error = await collect(
      stack.backend.embed({ model: 'hearth/echo', input: ['a'] }, new AbortController()),
    ).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, code: 'invalid_value', param: 'model' });
    await eventually(() => stack.queue.counts.running === 0);
  });
});
