import { describe, expect, it } from 'vitest';
import { EchoEngine, echoReply, echoTokens } from '../../../../src/engines/echo/echo-engine';
import type { EngineOutput } from '../../../../src/engines/engine';
import { OpenAIError } from '../../../../src/protocol/errors';
import { ECHO_MODEL } from '../../../../src/models/models';
import { parseChatRequest } from '../../../../src/protocol/validate';

async function run(body: Record<string, unknown>, signal = new AbortController().signal) {
  const engine = new EchoEngine();
  const request = parseChatRequest({ model: 'hearth/echo', ...body });
  const out: EngineOutput[] = [];
  for await (const output of engine.generate(request, signal)) out.push(output);
  const tokens = out.flatMap((o) => (o.type === 'token' ? [o.text] : []));
  const end = out.at(-1);
  return { tokens, end: end?.type === 'end' ? end : undefined };
}

const user = (content: string) => ({ role: 'user', content });

describe('echoTokens', () => {
  it.each([
    ['hello world', ['hello ', 'world']],
    ['  lead and trail  ', ['  lead ', 'and ', 'trail  ']],
    ['a\n\tb', ['a\n\t', 'b']],
    ['   ', ['   ']],
    ['', []],
  ])('splits %j into %j', (text, tokens) => {
    expect(echoTokens(text)).toEqual(tokens);
    expect(echoTokens(text).join('')).toBe(text);
  });
});

describe('echoReply', () => {
  it('is the last user message', () => {
    const { messages } = parseChatRequest({
      model: 'hearth/echo',
      messages: [user('first'), { role: 'assistant', content: 'x' }, user('last')],
    });
    expect(echoReply(messages)).toBe('last');
  });

  it('puts the system and developer messages, joined by one space, in brackets before it', () => {
    const { messages } = parseChatRequest({
      model: 'hearth/echo',
      messages: [
        { role: 'system', content: 'Be brief.' },
        user('q'),
        { role: 'assistant', content: 'a' },
        { role: 'developer', content: 'Be kind.' },
        user('hi'),
      ],
    });
    expect(echoReply(messages)).toBe('[Be brief. Be kind.] hi');
  });

  it('refuses a conversation whose last message is not the user’s', () => {
    expect(() => echoReply([{ role: 'assistant', content: 'x' }])).toThrow(OpenAIError);
  });
});

describe('EchoEngine', () => {
  it('emits one token per word and counts prompt tokens over every message', async () => {
    const { tokens, end } = await run({
      messages: [
        { role: 'system', content: 'S s' },
        user('one'),
        { role: 'assistant', content: 'two three' },
        user('four five'),
      ],
    });
    expect(tokens).toEqual(['[S ', 's] ', 'four ', 'five']);
    expect(end).toEqual({
      type: 'end',
      finish_reason: 'stop',
      usage: { prompt_tokens: 2 + 1 + 2 + 2, completion_tokens: 4 },
    });
  });

  it('cuts the reply before the earliest stop string', async () => {
    const { tokens, end } = await run({
      messages: [user('alpha beta gamma delta')],
      stop: ['delta', 'beta'],
    });
    expect(tokens.join('')).toBe('alpha ');
    expect(end?.finish_reason).toBe('stop');
  });

  it('applies max_tokens after stop and says length only when it cut', async () => {
    const cut = await run({ messages: [user('a b c d e')], stop: 'e', max_tokens: 2 });
    expect(cut.tokens).toEqual(['a ', 'b ']);
    expect(cut.end?.finish_reason).toBe('length');
    const exact = await run({ messages: [user('a b c d e')], stop: 'd', max_completion_tokens: 3 });
    expect(exact.tokens).toEqual(['a ', 'b ', 'c ']);
    expect(exact.end?.finish_reason).toBe('stop');
  });

  it('emits no token for an empty reply', async () => {
    const { tokens, end } = await run({ messages: [user('')] });
    expect(tokens).toEqual([]);
    expect(end?.usage.completion_tokens).toBe(0);
  });

  it('pauses echo_delay_ms before each token and stops before the next one when aborted', async () => {
    const abort = new AbortController();
    const engine = new EchoEngine();
    const request = parseChatRequest({
      model: 'hearth/echo',
      messages: [user('a b c d')],
      echo_delay_ms: 20,
    });
    const started = Date.now();
    const seen: EngineOutput[] = [];
    for await (const output of engine.generate(request, abort.signal)) {
      seen.push(output);
      if (seen.length === 2) abort.abort();
    }
    expect(seen.map((o) => o.type)).toEqual(['token', 'token']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(35);
  });

  it('refuses a prompt larger than its context window with context_length_exceeded', async () => {
    const words = 'a '.repeat(ECHO_MODEL.context_window + 1);
    await expect(run({ messages: [user(words)] })).rejects.toMatchObject({
      code: 'context_length_exceeded',
      status: 400,
      param: 'messages',
    });
  });
});
