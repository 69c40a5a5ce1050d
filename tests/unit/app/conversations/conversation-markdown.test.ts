import { describe, expect, it } from 'vitest';
import { newConversation, replyAgain } from '../../../../src/app/conversations/conversation';
import {
  conversationMarkdown,
  markdownFileName,
} from '../../../../src/app/conversations/conversation-markdown';

describe('Markdown export', () => {
  it('writes the title as a heading and each message under who said it, the versions on show only', () => {
    const c = newConversation('acme/model');
    c.title = 'Soup';
    c.settings.system = 'Be brief.';
    c.messages = [
      { role: 'user', content: 'How do I make *soup*?\n\n- fast' },
      { role: 'assistant', content: 'old answer', model: 'acme/model' },
    ];
    const again = replyAgain(c, 1);
    again.content = 'Boil **water**.';
    again.model = 'acme/other';
    again.stopped = true;
    c.messages.push({ role: 'user', content: 'and?' });
    c.messages.push({
      role: 'assistant',
      content: '',
      error: { message: 'The engine failed.', code: null },
    });
    expect(conversationMarkdown(c)).toBe(
      [
        '# Soup',
        '**System:**\n\nBe brief.',
        '**You:**\n\nHow do I make *soup*?\n\n- fast',
        '**Assistant (acme/other):**\n\nBoil **water**.\n\n*(stopped)*',
        '**You:**\n\nand?',
        '**Assistant (acme/model):**\n\n*(error: The engine failed.)*',
      ].join('\n\n') + '\n',
    );
  });

  it.each([
    ['Soup', 'Soup.md'],
    ['a/b: c?', 'a b c.md'],
    ['..hidden', 'hidden.md'],
    ['///', 'conversation.md'],
  ])('names the file after the title: %j', (title, name) => {
    expect(markdownFileName(title)).toBe(name);
  });
});
