import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PortBackend } from '../../../src/bridge/client';
import { HostServer } from '../../../src/bridge/server';
import type { ChatBackend, ChatEvent } from '../../../src/openai/backend';
import { HostLostError } from '../../../src/openai/backend';
import { OpenAIError } from '../../../src/openai/errors';
import { parseChatRequest } from '../../../src/openai/validate';
import {
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

/** A bridge over a real MessageChannel to any backend. */
function bridgeTo(backend: ChatBackend) {
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
  return { client, server, close: () => (port1.close(), port2.close()) };
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
