/**
 * @module
 * Markdown to HTML with marked, before any sanitizing (markdown.ts): raw HTML becomes the text it
 * is, and nesting is bounded so that marked cannot overflow its stack on what a model writes.
 */
import { Marked, Tokenizer } from 'marked';

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/**
 * How deep quotes and lists may nest, and emphasis, strikethrough and links. marked lexes each
 * level by calling itself, so a few thousand levels (`> > > …`, `1. 1. 1. …`, `> - > - …`,
 * items indented under one another, `*a *a … b* b*`) overflow its stack, and items indented under
 * one another take time as the square of their depth. Past this depth the tokenizers below decline
 * to open another level, so marked takes the markers for text: everything shows, nothing throws.
 */
export const MAX_NESTING = 32;

/**
 * Levels open now, as marked lexes. Blocks are lexed to the end before any inline content (it is
 * queued), so one count each; parsing is synchronous, so the counts are the parse's own.
 */
const open = { block: 0, inline: 0 };

/**
 * A tokenizer of `Tokenizer.prototype` that opens one level more, unless `kind` is already
 * MAX_NESTING deep: then `undefined` (not `false`, which would run the original after all), and
 * marked goes on to its other tokenizers, which take the markers as text.
 */
function bounded<T extends (this: Tokenizer, ...args: never[]) => unknown>(
  kind: keyof typeof open,
  original: T,
): (this: Tokenizer, ...args: Parameters<T>) => ReturnType<T> | undefined {
  return function (this: Tokenizer, ...args: Parameters<T>) {
    if (open[kind] >= MAX_NESTING) return undefined;
    open[kind]++;
    try {
      return original.apply(this, args) as ReturnType<T>;
    } finally {
      open[kind]--;
    }
  };
}

const { blockquote, list, emStrong, del, link, reflink } = Tokenizer.prototype;

const marked = new Marked({
  gfm: true,
  async: false,
  // Raw HTML, block or inline, is text: a model's `<img onerror>` is shown, never parsed.
  renderer: { html: ({ text }) => escapeHtml(text) },
  tokenizer: {
    blockquote: bounded('block', blockquote),
    list: bounded('block', list),
    emStrong: bounded('inline', emStrong),
    del: bounded('inline', del),
    link: bounded('inline', link),
    reflink: bounded('inline', reflink),
  },
});

/** `markdown` as HTML, unsanitized; never nested deeper than MAX_NESTING. */
export function parseMarkdown(markdown: string): string {
  open.block = 0;
  open.inline = 0;
  return marked.parse(markdown) as string;
}
