import { describe, expect, it } from 'vitest';
import {
  editMessage,
  newConversation,
  replyAgain,
  showVersion,
  type Conversation,
} from '../../../../src/app/conversations/conversation';
import {
  exportConversations,
  importConversations,
  mergeImported,
  mergeSummary,
} from '../../../../src/app/conversations/conversation-export';

/** A conversation whose first message was edited, and whose later reply was written again. */
function edited(): Conversation {
  const c = newConversation('acme/model');
  c.title = 'first';
  c.messages = [
    { role: 'user', content: 'first' },
    { role: 'assistant', content: 'answer to first', model: 'acme/model' },
  ];
  editMessage(c, 0, 'first, edited');
  c.messages.push({ role: 'assistant', content: 'answer to edit', model: 'acme/model' });
  c.messages.push({ role: 'user', content: 'more' });
  c.messages.push({ role: 'assistant', content: 'reply one', model: 'acme/model' });
  const again = replyAgain(c, 3);
  again.content = 'reply two';
  again.model = 'acme/other';
  return c;
}

describe('export with versions', () => {
  it('keeps the earlier versions of edited and regenerated messages through export and import', () => {
    const original = edited();
    const [back] = importConversations(JSON.stringify(exportConversations([original])));
    expect(back!.messages).toEqual(original.messages);
    // The earlier versions are there to show, with what followed them then.
    showVersion(back!, 0, 0);
    expect(back!.messages.map((m) => m.content)).toEqual(['first', 'answer to first']);
    showVersion(back!, 0, 1);
    showVersion(back!, 3, 0);
    expect(back!.messages.map((m) => m.content)).toEqual([
      'first, edited',
      'answer to edit',
      'more',
      'reply one',
    ]);
  });

  it('writes the versions in OpenAI-shaped messages, the one on show as null', () => {
    const file = exportConversations([edited()]);
    expect(file.conversations[0]!.messages[0]).toEqual({
      role: 'user',
      content: 'first, edited',
      versions: [
        [
          { role: 'user', content: 'first' },
          { role: 'assistant', content: 'answer to first', model: 'acme/model' },
        ],
        null,
      ],
    });
  });

  it('refuses versions none of which is on show', () => {
    const file = exportConversations([edited()]);
    const first = file.conversations[0]!.messages[0] as { versions: unknown[] };
    first.versions = [[{ role: 'user', content: 'a' }]];
    expect(() => importConversations(JSON.stringify(file))).toThrow(
      /damaged at conversations\.0\.messages\.0\.versions: one version must be on show/,
    );
  });
});

describe('merge by id', () => {
  const at = (id: string, updated: number, title = id): Conversation => ({
    ...newConversation('m'),
    id,
    title,
    updated,
    messages: [{ role: 'user', content: title }],
  });

  it('adds new ids, replaces older ones here and skips the rest', () => {
    const here = [{ ...at('a', 10), pinned: true, draft: 'typing' }, at('b', 10), at('c', 10)];
    const merge = mergeImported(here, [
      at('a', 20, 'a, newer'),
      at('b', 10),
      at('c', 5),
      at('d', 1),
    ]);
    expect(merge).toMatchObject({ added: 1, updated: 1, skipped: 2 });
    expect(merge.save.map((c) => c.id)).toEqual(['a', 'd']);
    // What belongs to this device stays.
    expect(merge.save[0]).toMatchObject({ title: 'a, newer', pinned: true, draft: 'typing' });
  });

  it('changes nothing when the same file is imported twice', () => {
    const file = JSON.stringify(exportConversations([at('a', 10), at('b', 10)]));
    const first = mergeImported([], importConversations(file));
    const second = mergeImported(first.save, importConversations(file));
    expect(second).toEqual({ save: [], added: 0, updated: 0, skipped: 2 });
  });

  it.each([
    [{ added: 1, updated: 0, skipped: 0 }, 'Imported 1 conversation.'],
    [
      { added: 3, updated: 0, skipped: 2 },
      'Imported 3 conversations. 2 already here were skipped (the same or older in the file).',
    ],
    [
      { added: 0, updated: 1, skipped: 1 },
      'Imported 0 conversations. 1 already here was updated (newer in the file). 1 already here was skipped (the same or older in the file).',
    ],
  ])('says what it did: %j', (counts, text) => {
    expect(mergeSummary({ save: [], ...counts })).toBe(text);
  });
});

describe('export with images', () => {
  const RED = 'data:image/png;base64,iVBORw0KGgoAAAA=';
  const BLUE = 'data:image/jpeg;base64,/9j/4AAQ';

  /** A conversation whose first message carried two images, and was then edited. */
  function withImages(): Conversation {
    const c = newConversation('hearth/echo');
    c.messages = [
      { role: 'user', content: 'What are these?', images: [RED, BLUE] },
      { role: 'assistant', content: 'Two pictures.' },
      { role: 'user', content: '', images: [BLUE] },
    ];
    return c;
  }

  it("writes a message's images as OpenAI's image_url parts after its text, and brings them back", () => {
    const original = withImages();
    const file = exportConversations([original]);
    expect(file.conversations[0]!.messages.slice(0, 1)).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What are these?' },
          { type: 'image_url', image_url: { url: RED } },
          { type: 'image_url', image_url: { url: BLUE } },
        ],
      },
    ]);
    // A message of images alone has no text part.
    expect(file.conversations[0]!.messages[2]).toEqual({
      role: 'user',
      content: [{ type: 'image_url', image_url: { url: BLUE } }],
    });
    const [back] = importConversations(JSON.stringify(file));
    expect(back!.messages).toEqual(original.messages);
  });

  it('keeps the images of an edited message, in its new version and its old one', () => {
    const c = withImages();
    editMessage(c, 0, 'What is this?');
    expect(c.messages[0]).toMatchObject({ content: 'What is this?', images: [RED, BLUE] });
    const [back] = importConversations(JSON.stringify(exportConversations([c])));
    showVersion(back!, 0, 0);
    expect(back!.messages[0]).toMatchObject({ content: 'What are these?', images: [RED, BLUE] });
  });

  it('imports a file of before images, and joins the text parts of a file made elsewhere', () => {
    const file = exportConversations([newConversation('hearth/echo')]);
    file.conversations[0]!.messages = [
      { role: 'user', content: 'plain text' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'one' },
          { type: 'image_url', image_url: { url: RED } },
          { type: 'text', text: 'two' },
        ],
      },
    ];
    const [back] = importConversations(JSON.stringify(file));
    expect(back!.messages).toEqual([
      { role: 'user', content: 'plain text' },
      { role: 'user', content: 'one\ntwo', images: [RED] },
    ]);
  });

  it('refuses an image that is not a data URL: an import fetches nothing', () => {
    const file = exportConversations([newConversation('hearth/echo')]);
    file.conversations[0]!.messages = [
      {
        role: 'user',
        content: [{ type: 'image_url', image_url: { url: 'https://tracker.example/pixel.png' } }],
      },
    ];
    expect(() => importConversations(JSON.stringify(file))).toThrow(/damaged at conversations/);
  });
});
