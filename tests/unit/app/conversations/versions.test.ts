import { describe, expect, it } from 'vitest';
import {
  contextTokens,
  editMessage,
  newConversation,
  outgoingMessages,
  replyAgain,
  showVersion,
  versionOf,
  type Conversation,
  type Message,
} from '../../../../src/app/conversations/conversation';
import {
  exportConversations,
  importConversations,
} from '../../../../src/app/conversations/conversation-export';

/** A conversation of two questions and their replies, the first reply with its stats. */
function chat(): Conversation {
  const c = newConversation('acme/model');
  c.title = 'first question';
  c.messages = [
    { role: 'user', content: 'first question' },
    {
      role: 'assistant',
      content: 'first answer',
      model: 'acme/model',
      finish_reason: 'stop',
      stats: {
        usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5, estimated_cost: 0 },
        tokens_per_s: 10,
      },
    },
    { role: 'user', content: 'second question' },
    { role: 'assistant', content: 'second answer', model: 'acme/model' },
  ];
  return c;
}

/** What the conversation shows, without the versions. */
const shown = (c: Conversation) => c.messages.map((m) => m.content);

/** A reply written into the message `replyAgain` returned, as the chat streams one in. */
function write(reply: Message, content: string): void {
  reply.content = content;
  reply.model = 'acme/model';
}

describe('versions', () => {
  it('an edit keeps the old message and what followed it; switching back restores them exactly', () => {
    const c = chat();
    const before = structuredClone(c.messages);
    editMessage(c, 2, 'a better question');
    expect(shown(c)).toEqual(['first question', 'first answer', 'a better question']);
    expect(versionOf(c.messages[2]!)).toEqual({ current: 1, count: 2 });
    c.messages.push({ role: 'assistant', content: 'a better answer' });

    showVersion(c, 2, 0);
    expect(versionOf(c.messages[2]!)).toEqual({ current: 0, count: 2 });
    const { versions: _, ...restored } = c.messages[2]!;
    expect([...c.messages.slice(0, 2), restored, ...c.messages.slice(3)]).toEqual(before);

    showVersion(c, 2, 1);
    expect(shown(c)).toEqual([
      'first question',
      'first answer',
      'a better question',
      'a better answer',
    ]);
    expect(versionOf(c.messages[2]!)).toEqual({ current: 1, count: 2 });
  });

  it('an edit of the first message renames the conversation after the new text', () => {
    const c = chat();
    editMessage(c, 0, 'another start');
    expect(c.title).toBe('another start');
    expect(shown(c)).toEqual(['another start']);
  });

  it('a reply written again twice has three versions, the newest on show', () => {
    const c = chat();
    write(replyAgain(c, 3), 'second answer, again');
    const third = replyAgain(c, 3);
    expect(third).toBe(c.messages[3]);
    expect(third).toMatchObject({ role: 'assistant', content: '' });
    write(third, 'second answer, a third time');
    expect(versionOf(c.messages[3]!)).toEqual({ current: 2, count: 3 });
    expect(c.messages).toHaveLength(4);

    showVersion(c, 3, 0);
    expect(c.messages[3]).toMatchObject({ content: 'second answer', model: 'acme/model' });
    showVersion(c, 3, 1);
    expect(c.messages[3]!.content).toBe('second answer, again');
    expect(versionOf(c.messages[3]!)).toEqual({ current: 1, count: 3 });
  });

  it('a reply written again keeps what followed it in its version', () => {
    const c = chat();
    write(replyAgain(c, 1), 'first answer, again');
    expect(shown(c)).toEqual(['first question', 'first answer, again']);
    showVersion(c, 1, 0);
    expect(shown(c)).toEqual([
      'first question',
      'first answer',
      'second question',
      'second answer',
    ]);
  });

  it('versions inside a kept version survive switching back and forth', () => {
    const c = chat();
    // The second reply written again (two versions at 3), then the first question edited.
    write(replyAgain(c, 3), 'second answer, again');
    editMessage(c, 0, 'other question');
    c.messages.push({ role: 'assistant', content: 'other answer' });
    write(replyAgain(c, 1), 'other answer, again');
    expect(shown(c)).toEqual(['other question', 'other answer, again']);

    for (let round = 0; round < 2; round += 1) {
      showVersion(c, 0, 0);
      expect(shown(c)).toEqual([
        'first question',
        'first answer',
        'second question',
        'second answer, again',
      ]);
      expect(versionOf(c.messages[3]!)).toEqual({ current: 1, count: 2 });
      showVersion(c, 3, 0);
      expect(c.messages[3]!.content).toBe('second answer');
      showVersion(c, 3, 1);

      showVersion(c, 0, 1);
      expect(shown(c)).toEqual(['other question', 'other answer, again']);
      expect(versionOf(c.messages[1]!)).toEqual({ current: 1, count: 2 });
      showVersion(c, 1, 0);
      expect(shown(c)).toEqual(['other question', 'other answer']);
      showVersion(c, 1, 1);
    }
  });

  it('showing the version on show changes nothing', () => {
    const c = chat();
    editMessage(c, 2, 'again');
    const messages = c.messages;
    showVersion(c, 2, 1);
    expect(c.messages).toBe(messages);
  });

  it('a message with one version has none to switch between', () => {
    expect(versionOf(chat().messages[0]!)).toBeNull();
  });

  it('refuse an index that is not of the right message', () => {
    expect(() => editMessage(chat(), 1, 'x')).toThrow(RangeError);
    expect(() => replyAgain(chat(), 0)).toThrow(RangeError);
    expect(() => showVersion(chat(), 0, 1)).toThrow(RangeError);
  });

  it('the model, the context meter and the messages of an export are the versions on show', () => {
    const c = chat();
    editMessage(c, 2, 'short');
    c.messages.push({ role: 'assistant', content: 'reply' });
    expect(outgoingMessages(c).map((m) => m.content)).toEqual([
      'first question',
      'first answer',
      'short',
      'reply',
    ]);
    // 5 exact tokens, then "short" (2) and "reply" (2).
    expect(contextTokens(c)).toBe(5 + 2 + 2);
    const file = exportConversations([c]);
    expect(file.conversations[0]!.messages.map((m) => m.content)).toEqual([
      'first question',
      'first answer',
      'short',
      'reply',
    ]);
    // The others travel beside them (see conversation-export.test.ts), and come back.
    const [back] = importConversations(JSON.stringify(file));
    expect(back!.messages).toEqual(c.messages);
  });
});
