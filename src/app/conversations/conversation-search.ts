/**
 * @module
 * Word-by-word search of the conversations, with MiniSearch: titles and message contents, each
 * word of the query a prefix that must match (in any order), case, accents and punctuation
 * ignored. The index is built on the first search and then updated for the conversations that
 * changed. `snippet` cuts the part of a message where the words matched, for the list to show
 * with the words marked. Pure: no DOM.
 */
import MiniSearch from 'minisearch';
import type { Conversation } from './conversation';

/** A word: letters, their marks and digits; anything else separates words. */
const WORD = /[\p{L}\p{M}\p{N}]+/gu;

/** A word as the index keeps it: lower case, without accents. */
export function normalizeWord(word: string): string {
  return word.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
}

/** The words of a query, as the index compares them. */
export function queryWords(query: string): string[] {
  return [...new Set((query.match(WORD) ?? []).map(normalizeWord).filter(Boolean))];
}

interface Doc {
  id: string;
  title: string;
  text: string;
}

/** What tells a conversation's indexed text apart from its next version, cheaply. */
function signature(c: Conversation): string {
  const last = c.messages.at(-1);
  return `${c.updated}\u0000${c.title}\u0000${c.messages.length}\u0000${last?.content.length ?? 0}`;
}

/** A search index over conversations, kept up to date with `update`. */
export class ConversationSearch {
  readonly #index = new MiniSearch<Doc>({
    fields: ['title', 'text'],
    tokenize: (text) => text.match(WORD) ?? [],
    processTerm: (term) => normalizeWord(term) || null,
    searchOptions: { prefix: true, combineWith: 'AND', boost: { title: 2 } },
  });
  /** The signature of each conversation as indexed. */
  readonly #indexed = new Map<string, string>();

  /** Indexes the conversations that are new or changed, and forgets those that are gone. */
  update(conversations: readonly Conversation[]): void {
    const present = new Set<string>();
    for (const c of conversations) {
      present.add(c.id);
      const sig = signature(c);
      const was = this.#indexed.get(c.id);
      if (was === sig) continue;
      if (was !== undefined) this.#index.discard(c.id);
      this.#index.add({
        id: c.id,
        title: c.title,
        text: c.messages.map((m) => m.content).join('\n'),
      });
      this.#indexed.set(c.id, sig);
    }
    for (const id of this.#indexed.keys()) {
      if (present.has(id)) continue;
      this.#index.discard(id);
      this.#indexed.delete(id);
    }
  }

  /** The ids of the conversations in which every word of `query` matches, best first. */
  search(query: string): string[] {
    if (queryWords(query).length === 0) return [];
    return this.#index.search(query).map((r) => r.id as string);
  }
}

/** A piece of a snippet: text to show as it is, or marked as a match. */
export interface SnippetPart {
  text: string;
  mark: boolean;
}

interface Hit {
  start: number;
  end: number;
  /** Indices in the query's words of those this word matches. */
  words: number[];
}

/** The words of `text` that start with one of `words` (normalized), where they are. */
function hits(text: string, words: readonly string[], most = 500): Hit[] {
  const found: Hit[] = [];
  for (const m of text.matchAll(WORD)) {
    const word = normalizeWord(m[0]);
    const matched = words.flatMap((w, i) => (word.startsWith(w) ? [i] : []));
    if (matched.length === 0) continue;
    found.push({ start: m.index, end: m.index + m[0].length, words: matched });
    if (found.length >= most) break;
  }
  return found;
}

/**
 * The part of `text` around where `words` (normalized query words) match, at most about `width`
 * characters, cut at spaces, with "…" where it was cut and the matching words marked; the part
 * that holds the most of the words, the earliest of those. Null when no word matches.
 */
export function snippet(text: string, words: readonly string[], width = 90): SnippetPart[] | null {
  const found = hits(text, words);
  const first = found[0];
  if (!first) return null;
  // The window that holds the most different words.
  let best = { from: 0, to: 0, count: 0 };
  for (let i = 0; i < found.length; i++) {
    const seen = new Set<number>();
    let to = i;
    for (let j = i; j < found.length && found[j]!.end - found[i]!.start <= width; j++) {
      for (const w of found[j]!.words) seen.add(w);
      to = j;
    }
    if (seen.size > best.count) best = { from: i, to, count: seen.size };
  }
  const firstHit = found[best.from]!;
  const lastHit = found[best.to]!;
  // Context on both sides of the matches: half of what is left of the width before them.
  const lead = Math.max(0, Math.floor((width - (lastHit.end - firstHit.start)) / 2));
  let start = Math.max(0, firstHit.start - lead);
  if (start > 0) {
    const space = text.slice(start, firstHit.start).search(/\s/);
    start = space === -1 ? firstHit.start : start + space + 1;
  }
  let end = Math.min(text.length, Math.max(start + width, lastHit.end));
  if (end < text.length) {
    const tail = text.slice(lastHit.end, end);
    const space = tail.search(/\s\S*$/);
    if (space !== -1) end = lastHit.end + space;
  }

  const parts: SnippetPart[] = [];
  const push = (piece: string, mark: boolean) => {
    const flat = piece.replace(/\s+/g, ' ');
    if (flat) parts.push({ text: flat, mark });
  };
  let at = start;
  for (const hit of found) {
    if (hit.start < start || hit.end > end) continue;
    push(text.slice(at, hit.start), false);
    push(text.slice(hit.start, hit.end), true);
    at = hit.end;
  }
  push(text.slice(at, end), false);
  const head = parts[0];
  if (head && !head.mark) head.text = head.text.trimStart();
  const tail = parts.at(-1);
  if (tail && !tail.mark) tail.text = tail.text.trimEnd();
  if (start > 0) parts.unshift({ text: '…', mark: false });
  if (end < text.length) parts.push({ text: '…', mark: false });
  return parts.filter((p) => p.text !== '');
}

/**
 * The snippet to show under a conversation found by `words`: from the message that holds the most
 * of them (the earliest of those), or null when only the title matched.
 */
export function conversationSnippet(
  c: Conversation,
  words: readonly string[],
  width?: number,
): SnippetPart[] | null {
  let best: { content: string; count: number } | null = null;
  for (const m of c.messages) {
    const count = new Set(hits(m.content, words).flatMap((h) => h.words)).size;
    if (count > (best?.count ?? 0)) best = { content: m.content, count };
    if (count === words.length) break;
  }
  return best ? snippet(best.content, words, width) : null;
}
