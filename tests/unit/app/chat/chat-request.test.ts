/**
 * The body of the chat's request: each parameter sent only when it says something, a value
 * stored wrong never sent, and the messages cut to the conversation's context limit.
 */
import { describe, expect, it } from 'vitest';
import { chatRequest, fitContext, withoutImages } from '../../../../src/app/chat/chat-request';
import {
  DEFAULT_SETTINGS,
  IMAGE_TOKENS_ESTIMATE,
} from '../../../../src/app/conversations/conversation';
import type { OutgoingMessage } from '../../../../src/app/shared/api-client';

const hello: OutgoingMessage[] = [{ role: 'user', content: 'hello' }];
/** A message of `tokens` estimated tokens (four characters each). */
const sized = (role: OutgoingMessage['role'], tokens: number, tag = ''): OutgoingMessage => ({
  role,
  content: tag.padEnd(tokens * 4, '.'),
});

describe('the request body', () => {
  it('has the temperature and no other parameter when the rest are left empty', () => {
    expect(chatRequest('acme/model', DEFAULT_SETTINGS, hello)).toEqual({
      model: 'acme/model',
      messages: hello,
      temperature: 0.7,
    });
  });

  it('carries top_p, seed, stop and max_completion_tokens as the API names them', () => {
    const settings = {
      ...DEFAULT_SETTINGS,
      temperature: 0.3,
      top_p: 0.5,
      seed: 0,
      stop: ['END', '\n\n'],
      max_tokens: 50,
    };
    expect(chatRequest('acme/model', settings, hello)).toEqual({
      model: 'acme/model',
      messages: hello,
      temperature: 0.3,
      top_p: 0.5,
      seed: 0,
      stop: ['END', '\n\n'],
      max_completion_tokens: 50,
    });
  });

  it('never carries a value stored out of range: the default goes instead', () => {
    const stored = { ...DEFAULT_SETTINGS, temperature: 9, top_p: 2, seed: -5, stop: ['', 'x'] };
    expect(chatRequest('acme/model', stored, hello)).toEqual({
      model: 'acme/model',
      messages: hello,
      temperature: 0.7,
    });
  });

  it('reads the settings of a conversation stored before the new fields', () => {
    const old = { system: '', temperature: 1, max_tokens: null } as never;
    expect(chatRequest('acme/model', old, hello)).toEqual({
      model: 'acme/model',
      messages: hello,
      temperature: 1,
    });
  });

  it("carries the echo engine's delay only to the echo engine", () => {
    expect(chatRequest('hearth/echo', DEFAULT_SETTINGS, hello, 100)).toMatchObject({
      echo_delay_ms: 100,
    });
    expect(chatRequest('acme/model', DEFAULT_SETTINGS, hello, 100)).not.toHaveProperty(
      'echo_delay_ms',
    );
  });

  it('cuts the messages to the context limit', () => {
    const messages = [sized('user', 200, 'old'), sized('assistant', 200), sized('user', 10, 'new')];
    const settings = { ...DEFAULT_SETTINGS, context_tokens: 128 };
    expect(chatRequest('acme/model', settings, messages).messages).toEqual([messages[2]]);
  });
});

describe('the context limit', () => {
  const system = sized('system', 20, 'sys');
  const conversation = [
    system,
    sized('user', 30, 'u1'),
    sized('assistant', 30, 'a1'),
    sized('user', 30, 'u2'),
    sized('assistant', 30, 'a2'),
    sized('user', 30, 'u3'),
  ];

  it('sends everything when there is none', () => {
    expect(fitContext(conversation, null)).toBe(conversation);
  });

  it('keeps the system prompt and the latest messages that fit, starting with a user message', () => {
    // 20 for the system prompt leaves 100: u3, a2 and u2 fit (90); a1 would not.
    expect(fitContext(conversation, 120).map((m) => m.content.slice(0, 3))).toEqual([
      'sys',
      'u2.',
      'a2.',
      'u3.',
    ]);
    // 20 + 60 fits u3 and a2 alone; a reply cannot come first, so it goes too.
    expect(fitContext(conversation, 80).map((m) => m.content.slice(0, 3))).toEqual(['sys', 'u3.']);
  });

  it('sends the last message even when it alone is over the limit', () => {
    const long = [system, sized('user', 500, 'big')];
    expect(fitContext(long, 128)).toEqual(long);
  });

  it('sends all the messages that fit', () => {
    expect(fitContext(conversation, 10_000)).toEqual(conversation);
  });
});

describe('fitting images into the context limit', () => {
  const image = { type: 'image_url' as const, image_url: { url: 'data:image/png;base64,AAAA' } };

  it('counts an image as IMAGE_TOKENS_ESTIMATE tokens, and drops the oldest to fit', () => {
    const messages: OutgoingMessage[] = [
      { role: 'user', content: [{ type: 'text', text: 'old' }, image] },
      { role: 'assistant', content: 'seen' },
      { role: 'user', content: [image] },
    ];
    // Room for one image and a few words, not two images.
    expect(fitContext(messages, IMAGE_TOKENS_ESTIMATE + 10)).toEqual([messages[2]]);
    expect(fitContext(messages, 2 * IMAGE_TOKENS_ESTIMATE + 10)).toEqual(messages);
  });
});

describe('a model that does not see images', () => {
  const image = { type: 'image_url' as const, image_url: { url: 'data:image/png;base64,AAAA' } };

  it("is sent each message's text alone, and an image alone as empty text", () => {
    const messages: OutgoingMessage[] = [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: [{ type: 'text', text: 'what is it?' }, image, image] },
      { role: 'assistant', content: 'a red square' },
      { role: 'user', content: [image] },
    ];
    expect(withoutImages(messages)).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'what is it?' },
      { role: 'assistant', content: 'a red square' },
      { role: 'user', content: '' },
    ]);
    // Nothing to leave out: the same messages.
    expect(withoutImages([messages[0]!])[0]).toBe(messages[0]);
  });
});
