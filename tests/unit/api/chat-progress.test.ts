/**
 * The engine's signs of life (`generating`: it computes, though it releases nothing yet) keep a
 * request past the first-token and stall limits, streamed or not: a long prefill, a reply to
 * tools that goes out whole once its calls parse.
 */
import { describe, expect, it } from 'vitest';
import { Channel } from '../../../src/bridge/channel';
import type { ChatBackend, ChatEvent } from '../../../src/protocol/host/backend';
import { ECHO_MODEL, staticModelDirectory } from '../../../src/models/models';
import { createApi } from '../../../src/api/router';
import { chatRequest, echoBody, sleep, sseData } from '../helpers';

/** A backend that plays `events`, waiting `gapMs` before each. */
function backend(events: ChatEvent[], gapMs: number): ChatBackend {
  return {
    chat() {
      const channel = new Channel<ChatEvent>();
      void (async () => {
        for (const event of events) {
          await sleep(gapMs);
          channel.push(event);
        }
        channel.close();
      })();
      return channel;
    },
  };
}

const TOOLS_MODEL = { ...ECHO_MODEL, capabilities: { ...ECHO_MODEL.capabilities, tools: true } };
const LIMITS = { firstTokenTimeoutMs: 40, stallTimeoutMs: 40 };
const end = (finish_reason: 'stop' | 'tool_calls'): ChatEvent => ({
  type: 'end',
  finish_reason,
  usage: { prompt_tokens: 1, completion_tokens: 1 },
});
/** Six signs of life 15 ms apart: 90 ms with nothing released, past both 40 ms limits. */
const working: ChatEvent[] = Array.from({ length: 6 }, () => ({
  type: 'state',
  state: 'generating',
}));
const CALL = {
  id: 'call_1',
  type: 'function' as const,
  function: { name: 'get_weather', arguments: '{}' },
};
const WEATHER = { type: 'function', function: { name: 'get_weather', parameters: {} } };

describe('an engine that computes but releases nothing yet', () => {
  it('streams the reply of a long prefill, past the first-token and stall limits', async () => {
    const events = [...working, { type: 'tokens', tokens: ['hi'] } as ChatEvent, end('stop')];
    const api = createApi({
      backend: backend(events, 15),
      models: staticModelDirectory([ECHO_MODEL]),
      ...LIMITS,
    });
    const response = await api.fetch(chatRequest(echoBody('x', { stream: true })));
    expect(response.status).toBe(200);
    const data = await sseData(response);
    expect(JSON.stringify(data)).not.toContain('"error"');
    expect(data).toContainEqual(
      expect.objectContaining({
        choices: [expect.objectContaining({ delta: expect.objectContaining({ content: 'hi' }) })],
      }),
    );
    expect(data.at(-1)).toBe('[DONE]');
  });

  it('streams a tool call that went out whole, past the first-token and stall limits', async () => {
    const events = [
      ...working,
      { type: 'tool_calls', calls: [CALL] } as ChatEvent,
      end('tool_calls'),
    ];
    const api = createApi({
      backend: backend(events, 15),
      models: staticModelDirectory([TOOLS_MODEL]),
      ...LIMITS,
    });
    const response = await api.fetch(
      chatRequest(echoBody('x', { stream: true, tools: [WEATHER] })),
    );
    const data = await sseData(response);
    expect(JSON.stringify(data)).not.toContain('"error"');
    expect(JSON.stringify(data)).toContain('get_weather');
  });

  it('answers a non-streamed tool call the same way', async () => {
    const events = [
      ...working,
      { type: 'tool_calls', calls: [CALL] } as ChatEvent,
      end('tool_calls'),
    ];
    const api = createApi({
      backend: backend(events, 15),
      models: staticModelDirectory([TOOLS_MODEL]),
      ...LIMITS,
    });
    const response = await api.fetch(chatRequest(echoBody('x', { tools: [WEATHER] })));
    expect(response.status).toBe(200);
    const body = (await response.json()) as { choices: { finish_reason: string }[] };
    expect(body.choices[0]?.finish_reason).toBe('tool_calls');
  });
});
