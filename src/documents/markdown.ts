/**
 * @module
 * Markdown's sections: one per heading, ATX (`# Title`, closing `#`s dropped) or setext (a
 * paragraph underlined with `===` or `---`), as CommonMark reads them; the text before the first
 * heading is a section without one. Nothing inside a code fence (```, ~~~) starts a heading, nor
 * does a line indented four spaces. A section's text begins with its heading's words, then its
 * body as written (the Markdown is kept: embeddings and the word index read it well).
 */
import type { Section } from '../protocol/host/documents';

const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const ATX = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$/;
const SETEXT = /^ {0,3}(=+|-+)[ \t]*$/;

/** An ATX heading's words, its closing `#`s dropped (`## Title ##` → `Title`). */
function atxText(rest: string | undefined): string {
  return (rest ?? '').replace(/(^|[ \t]+)#+$/, '').trim();
}

/** The sections of a Markdown text, in order; sections with no text are left out. */
export function markdownSections(text: string): Section[] {
  const sections: Section[] = [];
  let heading: string | undefined;
  let lines: string[] = [];
  /** Lines of the paragraph that ends at the current line (a setext heading's text). */
  let paragraph = 0;
  let fence: { char: string; length: number } | undefined;

  const flush = () => {
    const body = lines.join('\n').trim();
    if (body !== '') sections.push(heading ? { heading, text: body } : { text: body });
    lines = [];
  };
  const startSection = (title: string) => {
    flush();
    heading = title;
    lines = title === '' ? [] : [title, ''];
    paragraph = 0;
  };

  for (const line of text.split(/\r\n?|\n/)) {
    if (fence) {
      lines.push(line);
      const close = FENCE.exec(line);
      if (close?.[1]?.[0] === fence.char && close[1].length >= fence.length && !close[2]?.trim())
        fence = undefined;
      continue;
    }
    const open = FENCE.exec(line);
    // A backtick fence's info string may hold no backtick (CommonMark); otherwise it is code.
    if (open?.[1] && !(open[1][0] === '`' && open[2]?.includes('`'))) {
      fence = { char: open[1][0] ?? '`', length: open[1].length };
      lines.push(line);
      paragraph = 0;
      continue;
    }
    const atx = ATX.exec(line);
    if (atx) {
      startSection(atxText(atx[2]));
      continue;
    }
    const setext = SETEXT.exec(line);
    if (setext && paragraph > 0) {
      const title = lines
        .splice(lines.length - paragraph)
        .map((l) => l.trim())
        .join(' ');
      startSection(title);
      continue;
    }
    lines.push(line);
    // A blank line ends a paragraph; a line indented four spaces starts none (it is code).
    if (line.trim() === '') paragraph = 0;
    else if (paragraph > 0 || !/^( {4}|\t)/.test(line)) paragraph++;
  }
  flush();
  return sections;
}
