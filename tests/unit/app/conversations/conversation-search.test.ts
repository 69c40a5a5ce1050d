import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SETTINGS,
  type Conversation,
  type Message,
} from '../../../../src/app/conversations/conversation';
import {
  ConversationSearch,
  conversationSnippet,
  queryWords,
  snippet,
  type SnippetPart,
} from '../../../../src/app/conversations/conversation-search';

const conv = (id: string, title: string, contents: string[], updated = 1): Conversation => ({
  id,
  title,
  created: 1,
  updated,
  model: 'hearth/echo',
  settings: { ...DEFAULT_SETTINGS },
  messages: contents.map((content, i): Message => ({
    role: i % 2 ? 'assistant' : 'user',
    content,
  })),
  draft: '',
});

/** A snippet as text, the marked words in [brackets]. */
const show = (parts: SnippetPart[] | null) =>
  parts?.map((p) => (p.mark ? `[${p.text}]` : p.text)).join('') ?? null;

describe('the words of a query', () => {
  it('ignore case, accents, punctuation and repeats', () => {
    expect(queryWords('  Llama-3.2, CAFÉ! llama ')).toEqual(['llama', '3', '2', 'cafe']);
    expect(queryWords('?!… ')).toEqual([]);
  });
});

describe('search', () => {
  const index = () => {
    const search = new ConversationSearch();
    search.update([
      conv('fruit', 'Shopping list', ['what should I buy?', 'Apples, pears and plums.']),
      conv('code', 'Llama 3.2 in the browser', ['how fast is it?', 'About 40 tokens/s.']),
      conv('cafe', 'Café notes', ['Where is the café?']),
    ]);
    return search;
  };

  it('finds words in any order, by their beginning, in titles and in messages', () => {
    const search = index();
    expect(search.search('pears apples')).toEqual(['fruit']);
    expect(search.search('PLU')).toEqual(['fruit']);
    expect(search.search('llama 3.2')).toEqual(['code']);
    expect(search.search('browser tokens')).toEqual(['code']);
  });

  it('needs every word to match', () => {
    expect(index().search('pears browser')).toEqual([]);
  });

  it('ignores accents and punctuation', () => {
    expect(index().search('cafe')).toEqual(['cafe']);
    expect(index().search('tokens/s,')).toEqual(['code']);
  });

  it('finds nothing for a query without words', () => {
    expect(index().search(' ,.; ')).toEqual([]);
  });

  it('follows the conversations that changed, and forgets those that are gone', () => {
    const search = index();
    search.update([
      conv('fruit', 'Shopping list', ['what should I buy?', 'Cherries.'], 2),
      conv('cafe', 'Café notes', ['Where is the café?']),
    ]);
    expect(search.search('pears')).toEqual([]);
    expect(search.search('cherries')).toEqual(['fruit']);
    expect(search.search('llama')).toEqual([]);
  });
});

describe('a snippet', () => {
  it('marks every matching word, whole, and keeps the text between as it is', () => {
    expect(show(snippet('Apples, pears and plums.', ['pe', 'plum']))).toBe(
      'Apples, [pears] and [plums].',
    );
  });

  it('matches without case or accents, and shows the text as written', () => {
    expect(show(snippet('Le Café de Flore', ['cafe']))).toBe('Le [Café] de Flore');
  });

  it('cuts a long text at spaces around the match, with an ellipsis where it cut', () => {
    const text = `${'lorem ipsum '.repeat(20)}the needle is here ${'dolor sit '.repeat(20)}`;
    const shown = show(snippet(text, ['needle'], 40))!;
    expect(shown).toMatch(/^…\S.*\[needle\].*\S…$/);
    expect(shown.length).toBeLessThanOrEqual(40 + 4);
    // Whole words only.
    expect(
      shown
        .slice(1, -1)
        .split(' ')
        .every((w) => /^(lorem|ipsum|the|\[needle]|is|here|dolor|sit)$/.test(w)),
    ).toBe(true);
  });

  it('shows the part that holds the most of the words', () => {
    const text = `apples first. ${'filler words here '.repeat(10)}then apples and pears together. ${'more filler '.repeat(10)}`;
    expect(show(snippet(text, ['apples', 'pears'], 40))).toContain('[apples] and [pears]');
  });

  it('puts lines on one line', () => {
    expect(show(snippet('one\n\ntwo  three', ['two']))).toBe('one [two] three');
  });

  it('is null where no word matches, and never parses the text as markup', () => {
    expect(snippet('nothing here', ['absent'])).toBeNull();
    expect(snippet('<img src=x onerror=alert(1)> pears', ['pears'])).toEqual([
      { text: '<img src=x onerror=alert(1)> ', mark: false },
      { text: 'pears', mark: true },
    ]);
  });
});

describe('the snippet of a conversation', () => {
  it('comes from the message that holds the most of the words', () => {
    const c = conv('c', 't', ['apples', 'some pears', 'apples and pears']);
    expect(show(conversationSnippet(c, ['apples', 'pears']))).toBe('[apples] and [pears]');
  });

  it('is null when only the title matched', () => {
    expect(conversationSnippet(conv('c', 'pears', ['nothing']), ['pears'])).toBeNull();
  });
});
