import { describe, expect, it } from 'vitest';
import {
  contextTokens,
  IMAGE_TOKENS_ESTIMATE,
  newConversation,
  outgoingMessages,
  titleFrom,
  worthStoring,
  type Conversation,
} from '../../../../src/app/conversations/conversation';
import {
  exportConversations,
  importConversations,
} from '../../../../src/app/conversations/conversation-export';

function sample(): Conversation {
  const c = newConversation('acme/model');
  c.title = 'A chat';
  c.settings = {
    system: 'Be kind.',
    temperature: 0.2,
    max_tokens: 100,
    top_p: 0.9,
    seed: 42,
    stop: ['END', '\n\n'],
    context_tokens: 2048,
  };
  c.messages = [
    { role: 'user', content: 'hello' },
    {
      role: 'assistant',
      content: 'hi there',
      reasoning: 'they greeted me',
      model: 'acme/model',
      finish_reason: 'stop',
      stats: {
        usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7, estimated_cost: 0 },
        tokens_per_s: 12.5,
      },
    },
    { role: 'user', content: 'and then?' },
    {
      role: 'assistant',
      content: '',
      error: { message: 'The engine failed.', code: 'engine_error' },
    },
  ];
  c.draft = 'not sent';
  return c;
}

describe('export and import', () => {
  it('write messages in the OpenAI format, the system prompt first', () => {
    const file = exportConversations([sample()]);
    expect(file).toMatchObject({ format: 'hearth.conversations', version: 1 });
    expect(file.conversations[0]).toMatchObject({
      title: 'A chat',
      model: 'acme/model',
      settings: {
        temperature: 0.2,
        max_tokens: 100,
        top_p: 0.9,
        seed: 42,
        stop: ['END', '\n\n'],
        context_tokens: 2048,
      },
      messages: [
        { role: 'system', content: 'Be kind.' },
        { role: 'user', content: 'hello' },
        {
          role: 'assistant',
          content: 'hi there',
          reasoning_content: 'they greeted me',
          usage: { prompt_tokens: 5, completion_tokens: 2 },
          tokens_per_s: 12.5,
        },
        { role: 'user', content: 'and then?' },
        { role: 'assistant', content: '', error: { message: 'The engine failed.' } },
      ],
    });
  });

  it('round-trip every field but the draft, the id included', () => {
    const original = sample();
    const [back] = importConversations(JSON.stringify(exportConversations([original])));
    expect(back).toEqual({ ...original, draft: '' });
  });

  it('give the parameters a file of before they travelled leaves out their defaults', () => {
    const file = exportConversations([sample()]);
    file.conversations[0]!.settings = { temperature: 0.2, max_tokens: 100 } as never;
    const [back] = importConversations(JSON.stringify(file));
    expect(back!.settings).toEqual({
      system: 'Be kind.',
      temperature: 0.2,
      max_tokens: 100,
      top_p: null,
      seed: null,
      stop: [],
      context_tokens: null,
    });
  });

  it('give a conversation of a file without ids a new id', () => {
    const file = exportConversations([sample()]);
    delete (file.conversations[0] as { id?: string }).id;
    const [back] = importConversations(JSON.stringify(file));
    expect(back!.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it.each([
    ['not JSON', '{', 'This file is not JSON.'],
    [
      'another format',
      JSON.stringify({ format: 'x', version: 1 }),
      'not a Hearth export of version 1',
    ],
    [
      'a later version',
      JSON.stringify({ format: 'hearth.conversations', version: 2 }),
      'version 1',
    ],
    [
      'a message with an unknown role',
      JSON.stringify({
        format: 'hearth.conversations',
        version: 1,
        exported: '',
        conversations: [
          {
            title: 't',
            created: 0,
            updated: 0,
            model: 'm',
            settings: { temperature: 1, max_tokens: null },
            messages: [{ role: 'wizard', content: 'x' }],
          },
        ],
      }),
      'damaged at conversations.0.messages.0.role',
    ],
  ])('refuse %s, saying what is wrong', (_what, text, message) => {
    expect(() => importConversations(text)).toThrow(message);
  });
});

describe('what the model is sent', () => {
  it('is the system prompt and the messages, without replies that failed empty', () => {
    expect(outgoingMessages(sample())).toEqual([
      { role: 'system', content: 'Be kind.' },
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'hi there' },
      { role: 'user', content: 'and then?' },
    ]);
  });
});

describe('images', () => {
  const IMAGE = 'data:image/png;base64,AAAA';

  it("are sent after their message's text as image_url parts, and alone when there is none", () => {
    const c = newConversation('acme/model');
    c.messages = [
      { role: 'user', content: 'look', images: [IMAGE] },
      { role: 'assistant', content: 'seen' },
      { role: 'user', content: '', images: [IMAGE, IMAGE] },
    ];
    const image = { type: 'image_url', image_url: { url: IMAGE } };
    expect(outgoingMessages(c)).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'look' }, image] },
      { role: 'assistant', content: 'seen' },
      { role: 'user', content: [image, image] },
    ]);
  });

  it('count in the context meter, sent or attached, and keep a draft of images alone', () => {
    const c = newConversation('acme/model');
    expect(worthStoring(c)).toBe(false);
    c.draftImages = [IMAGE];
    expect(worthStoring(c)).toBe(true);
    expect(contextTokens(c)).toBe(IMAGE_TOKENS_ESTIMATE);
    c.messages = [{ role: 'user', content: 'abcd', images: [IMAGE] }];
    expect(contextTokens(c)).toBe(1 + 2 * IMAGE_TOKENS_ESTIMATE);
  });
});

describe('the context meter', () => {
  it('counts from the last exact usage, and estimates what came after it and the draft', () => {
    const c = sample();
    // 7 exact tokens, then "and then?" (9 chars: 3 tokens), then the draft (8 chars: 2).
    expect(contextTokens(c, 'not sent')).toBe(7 + 3 + 0 + 2);
  });

  it('estimates everything when no reply has come yet', () => {
    const c = newConversation('m');
    c.settings.system = 'abcd';
    c.messages = [{ role: 'user', content: 'abcdefgh' }];
    expect(contextTokens(c)).toBe(1 + 2);
  });

  it('does not take a stopped reply’s counted tokens for the model’s count (its prompt is not known)', () => {
    const c = sample();
    c.messages.push({
      role: 'assistant',
      content: 'abcdefgh',
      stopped: true,
      stats: {
        usage: { prompt_tokens: 0, completion_tokens: 2, total_tokens: 2, estimated_cost: 0 },
        tokens_per_s: null,
        counted: true,
      },
    });
    // From the last exact usage (7), then "and then?" (3) and the stopped reply (2), estimated.
    expect(contextTokens(c)).toBe(7 + 3 + 2);
  });
});

describe('titles', () => {
  it.each([
    ['  hello there \nmore', 'hello there'],
    ['', 'New conversation'],
    ['x'.repeat(60), `${'x'.repeat(47)}…`],
    ['# Heading\nbody', 'Heading'],
    ['## Plan for **Monday** ##', 'Plan for Monday'],
    ['> quoted *text*', 'quoted text'],
    ['- [ ] a `task` item', 'a task item'],
    ['1. see [the docs](https://example.com/docs)', 'see the docs'],
    ['![logo](x.png) and __more__ ~~old~~', 'logo and more old'],
    ['```js\nconst a = 1;\n```', 'const a = 1;'],
    ['#hashtag and snake_case_name', '#hashtag and snake_case_name'],
    ['#', 'New conversation'],
  ])('are the first line with text, as plain text: %j', (text, title) => {
    expect(titleFrom(text)).toBe(title);
  });
});
