import { describe, expect, it } from 'vitest';
import { Channel } from '../../../src/bridge/channel';
import {
  HostLostError,
  type ChatBackend,
  type ChatEvent,
} from '../../../src/protocol/host/backend';
import { ECHO_MODEL, staticModelDirectory } from '../../../src/models/models';
import { createApi } from '../../../src/api/router';
import { chatRequest, echoBody, sleep, sseData } from '../helpers';

type Attempt = (signal: AbortSignal) => AsyncIterable<ChatEvent>;

/** A backend whose n-th call plays the n-th script: a host that dies, then the next host. */
function hosts(...attempts: Attempt[]): ChatBackend & { calls: number; signals: AbortSignal[] } {
  const backend = {
    calls: 0,
    signals: [] as AbortSignal[],
    chat(_request: unknown, { signal }: { signal: AbortSignal }) {
      const attempt = attempts[backend.calls] ?? attempts.at(-1)!;
      backend.calls += 1;
      backend.signals.push(signal);
      const channel = new Channel<ChatEvent>();
      void (async () => {
        try {
          for await (const event of attempt(signal)) channel.push(event);
          channel.close();
        } catch (err) {
          channel.fail(err);
        }
      })();
      return channel;
    },
  };
  return backend;
}

const end: ChatEvent = {
  type: 'end',
  finish_reason: 'stop',
  usage: { prompt_tokens: 1, completion_tokens: 2 },
};

async function* dies(...tokens: string[]): AsyncGenerator<ChatEvent> {
  yield { type: 'state', state: 'running' };
  if (tokens.length > 0) yield { type: 'tokens', tokens };
  await sleep(5);
  throw new HostLostError();
}

async function* serves(...tokens: string[]): AsyncGenerator<ChatEvent> {
  yield { type: 'state', state: 'queued' };
  yield { type: 'tokens', tokens };
  yield end;
}

function api(backend: ChatBackend, extra: Record<string, unknown> = {}) {
  return createApi({ backend, models: staticModelDirectory([ECHO_MODEL]), ...extra });
}

const content = async (response: Response) =>
  ((await response.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message
    .content;

describe('a request whose host tab dies', () => {
  it('runs again on the next host when the host dies before the first token', async () => {
    const backend = hosts(
      () => dies(),
      () => serves('fine'),
    );
    const response = await api(backend).fetch(chatRequest(echoBody('x', { stream: true })));
    expect(response.status).toBe(200);
    const events = await sseData(response);
    expect(events.at(-1)).toBe('[DONE]');
    expect(backend.calls).toBe(2);
  });

  it('runs a non-streamed reply again from the start when the host dies after the status line', async () => {
    const backend = hosts(
      () => dies('partial '),
      () => serves('whole ', 'reply'),
    );
    const response = await api(backend).fetch(chatRequest(echoBody('x')));
    expect(response.status).toBe(200);
    expect(await content(response)).toBe('whole reply');
    expect(backend.calls).toBe(2);
  });

  it('runs it again only once: a second death cuts the body off', async () => {
    const backend = hosts(
      () => dies('a '),
      () => dies('b '),
    );
    const response = await api(backend).fetch(chatRequest(echoBody('x')));
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow();
    expect(backend.calls).toBe(2);
  });

  it('ends a stream that had started with one error event', async () => {
    const backend = hosts(
      () => dies('a '),
      () => serves('never'),
    );
    const response = await api(backend).fetch(chatRequest(echoBody('x', { stream: true })));
    const events = await sseData(response);
    expect(events.at(-1)).toMatchObject({ error: { code: 'engine_unavailable' } });
    expect(events).not.toContain('[DONE]');
    expect(backend.calls).toBe(1);
  });

  it('does not run it again for a page that is gone', async () => {
    const backend = hosts(
      () => dies(),
      () => serves('x'),
    );
    const response = await api(backend).fetch(chatRequest(echoBody('x')), {
      alive: async () => false,
    });
    expect(response.status).toBe(503);
    expect(backend.calls).toBe(1);
  });
});

describe('a reply that goes out whole (several choices)', () => {
  it('starts the response once its generation runs, whatever the first-token limit', async () => {
    async function* choices(): AsyncGenerator<ChatEvent> {
      yield { type: 'state', state: 'running' };
      for (let i = 0; i < 4; i += 1) {
        await sleep(15);
        yield { type: 'state', state: 'generating' };
      }
      yield { type: 'choices', choices: [{ content: 'a', finish_reason: 'stop' }] };
      yield end;
    }
    const backend = hosts(choices);
    const response = await api(backend, { firstTokenTimeoutMs: 30, stallTimeoutMs: 40 }).fetch(
      chatRequest(echoBody('x')),
    );
    expect(response.status).toBe(200);
    expect(await content(response)).toBe('a');
  });
});

describe('an engine that falls silent', () => {
  async function* silent(signal: AbortSignal): AsyncGenerator<ChatEvent> {
    yield { type: 'tokens', tokens: ['a '] };
    await new Promise((resolve) => signal.addEventListener('abort', resolve));
  }

  it('ends a stream with engine_stalled and stops the request', async () => {
    const backend = hosts(silent);
    const response = await api(backend, { stallTimeoutMs: 30 }).fetch(
      chatRequest(echoBody('x', { stream: true })),
    );
    const events = await sseData(response);
    expect(events.at(-1)).toMatchObject({
      error: { code: 'engine_stalled', type: 'server_error' },
    });
    expect(backend.signals[0]?.aborted).toBe(true);
  });

  it('cuts off a non-streamed body and stops the request', async () => {
    const backend = hosts(silent);
    const response = await api(backend, { stallTimeoutMs: 30 }).fetch(chatRequest(echoBody('x')));
    await expect(response.text()).rejects.toThrow();
    expect(backend.signals[0]?.aborted).toBe(true);
  });

  it('does not count the time a slow reader takes', async () => {
    const backend = hosts(() => serves('a ', 'b'));
    const response = await api(backend, { stallTimeoutMs: 20 }).fetch(
      chatRequest(echoBody('x', { stream: true })),
    );
    await sleep(60); // read nothing for three stall limits
    expect((await sseData(response)).at(-1)).toBe('[DONE]');
  });
});
