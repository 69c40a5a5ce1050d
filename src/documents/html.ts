/**
 * @module
 * HTML's sections, read with htmlparser2 (no DOM: a service worker has none): one per heading
 * (`h1`–`h6`), the text before the first heading a section without one. What is never shown is
 * skipped (`script`, `style`, `template`, `noscript`, and `head` but for its `title`); entities
 * are decoded; white space collapses as a browser collapses it (`pre` keeps its line breaks), and block
 * elements (`p`, `div`, `li`, `br`, …) give line breaks, table cells a tab.
 */
import { Parser } from 'htmlparser2';
import type { Section } from '../protocol/host/documents';

const SKIP = new Set(['script', 'style', 'template', 'noscript', 'svg', 'math']);
const HEADING = /^h[1-6]$/;
const BLOCK = new Set(
  (
    'address article aside blockquote br caption dd details dialog div dl dt fieldset figcaption ' +
    'figure footer form h1 h2 h3 h4 h5 h6 header hr legend li main nav ol p pre section summary ' +
    'table tbody thead tfoot title tr ul'
  ).split(' '),
);
const CELL = new Set(['td', 'th']);

/** Collapses a text's runs of spaces and breaks into single line breaks and spaces. */
function tidy(text: string): string {
  return text
    .split('\n')
    .map((line) => line.replace(/[ \t\f\r\v]*\t[ \t\f\r\v]*/g, '\t').replace(/ {2,}/g, ' '))
    .map((line) => line.trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** The sections of an HTML document, in order; sections with no text are left out. */
export function htmlSections(html: string): Section[] {
  const sections: Section[] = [];
  let heading: string | undefined;
  let text = '';
  /** The heading being read, while inside `h1`–`h6`. */
  let headingText: string | undefined;
  let skipDepth = 0;
  let preDepth = 0;
  let inHead = false;
  let inTitle = false;

  const flush = () => {
    const body = tidy(text);
    if (body !== '') sections.push(heading ? { heading, text: body } : { text: body });
    text = '';
  };
  const append = (piece: string) => {
    if (headingText !== undefined) headingText += piece;
    text += piece;
  };

  const parser = new Parser(
    {
      onopentag(name) {
        if (SKIP.has(name)) skipDepth++;
        if (name === 'head') inHead = true;
        if (name === 'title') inTitle = true;
        if (name === 'pre') preDepth++;
        if (skipDepth > 0) return;
        if (HEADING.test(name)) {
          flush();
          headingText = '';
        }
        if (BLOCK.has(name)) append('\n');
        else if (CELL.has(name)) append('\t');
      },
      ontext(data) {
        if (skipDepth > 0 || (inHead && !inTitle)) return;
        // Outside `pre`, white space is one space; a break comes only from a block element.
        append(preDepth > 0 ? data : data.replace(/[ \t\n\f\r]+/g, ' '));
      },
      onclosetag(name) {
        if (SKIP.has(name)) skipDepth = Math.max(0, skipDepth - 1);
        if (name === 'head') inHead = false;
        if (name === 'title') inTitle = false;
        if (name === 'pre') preDepth = Math.max(0, preDepth - 1);
        if (skipDepth > 0) return;
        if (BLOCK.has(name)) append('\n');
        if (HEADING.test(name) && headingText !== undefined) {
          heading = headingText.replace(/\s+/g, ' ').trim();
          headingText = undefined;
        }
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.write(html);
  parser.end();
  flush();
  return sections;
}
