/**
 * @module
 * src/app/chat/markdown/ is a reply's Markdown as inert HTML: parsing, highlighting, what links
 * and images may reach, and the confirmation before a link opens. It imports nothing else of the
 * app.
 *
 * A model's Markdown as inert HTML. Raw HTML in it shows as the text it is (as chat apps show
 * it); marked renders the rest; DOMPurify keeps only the elements and attributes marked makes;
 * then no link and no image may reach anything by itself (outbound.ts): a link has no `href`,
 * shows its full destination and opens only after the user confirms it (chat-message.ts), and
 * an image that is not one of the app's own files, named exactly, becomes the text of its
 * address — so nothing a model writes can run, or send a conversation anywhere. (The page's
 * Content Security Policy holds the line for other hosts a third time.)
 *
 * What scrolls sideways can be reached from the keyboard: a table sits in a named, focusable
 * region, and a code block is one, under a row with its language and a Copy button (never over
 * its first line). Code in a language highlight.js knows is highlighted once its grammar has
 * loaded (highlight.ts): from the code's text, after sanitizing, into spans that only have
 * classes.
 */
import DOMPurify from 'dompurify';
import { linkCitations } from './citations';
import { grammarOf, highlight } from './highlight';
import { escapeHtml, parseMarkdown } from './markdown-parse';
import { describeSource, linkDestination, ownImage, textIsDestination } from './outbound';

/**
 * What marked makes, and all a reply keeps: no forms, frames, media, styles or task-list
 * checkboxes; on links and images only their address, text and title.
 */
const ALLOWED_TAGS = [
  'a',
  'blockquote',
  'br',
  'code',
  'del',
  'em',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'hr',
  'img',
  'li',
  'ol',
  'p',
  'pre',
  'strong',
  'table',
  'tbody',
  'td',
  'th',
  'thead',
  'tr',
  'ul',
];
const ALLOWED_ATTR = ['href', 'src', 'alt', 'title', 'align', 'start', 'class'];

/** The app's own image files (vite.config.ts), the only images a reply may show. */
const APP_IMAGES: readonly string[] = JSON.parse(
  import.meta.env.VITE_HEARTH_APP_IMAGES || '[]',
) as string[];

/** An image that is not one of the app's files: the text of its address, fetched never. */
function inertImage(img: HTMLImageElement): void {
  const alt = img.getAttribute('alt') || 'image';
  img.replaceWith(`[${alt}: ${describeSource(img.getAttribute('src') ?? '')}]`);
}

/**
 * A link that cannot navigate by itself: no `href` (so neither a click, a middle click nor "open
 * in new tab" goes anywhere), its destination in `data-href` for the confirmation, and shown
 * after its text unless the text is exactly that. Other schemes become their text.
 */
function guardLink(link: HTMLAnchorElement): void {
  const url = linkDestination(link.getAttribute('href'), location.href);
  if (url === null) {
    const text = document.createElement('span');
    text.className = 'inert-link';
    text.append(...link.childNodes);
    link.replaceWith(text);
    return;
  }
  link.removeAttribute('href');
  link.dataset.href = url.href;
  link.title = url.href;
  link.setAttribute('role', 'link');
  link.tabIndex = 0;
  if (!textIsDestination(link.textContent ?? '', url)) {
    const shown = document.createElement('span');
    shown.className = 'destination';
    shown.textContent = ` (${url.href})`;
    link.after(shown);
  }
}

/** Text as it is, for when Markdown cannot be rendered: escaped, its lines kept. */
function plainText(text: string): string {
  return `<p class="unrendered">${escapeHtml(text).replace(/\n/g, '<br>')}</p>`;
}

/** The most characters of a table cell kept on one line. */
const SHORT_CELL = 32;

/** How a rendering names its regions, and hears of highlighting it could not do yet. */
export interface RenderOptions {
  /** Where the Markdown is, for the names of its tables and code ("reply 3"). */
  where?: string;
  /** Called once the grammars its code needed have loaded: render again to highlight it. */
  onHighlighterLoaded?: () => void;
  /** What its `[n]` markers cite, `citations[n-1]` naming passage n (./citations.ts). */
  citations?: readonly string[];
}

/** A fence's language as its label shows it: a short word, or none. */
function fenceLanguage(code: Element | null): string {
  const language = /(?:^|\s)language-(\S+)/.exec(code?.className ?? '')?.[1] ?? '';
  return /^[\w+#.-]{1,24}$/.test(language) ? language : '';
}

/**
 * A code block as a reply shows it: a head row with its language and a Copy button, then the
 * code, focusable (it may scroll sideways), highlighted where its grammar is loaded. Returns
 * the loading of a grammar it still needs.
 */
function dressCode(pre: HTMLPreElement, name: string): Promise<void> | null {
  const code = pre.querySelector('code');
  const language = fenceLanguage(code);
  const head = document.createElement('div');
  head.className = 'code-head';
  const label = document.createElement('span');
  label.className = 'language';
  label.textContent = language;
  const copy = document.createElement('button');
  copy.type = 'button';
  copy.className = 'copy-code';
  copy.textContent = 'Copy';
  copy.setAttribute('aria-label', language ? `Copy ${language} code` : 'Copy code');
  head.append(label, copy);
  const wrapper = document.createElement('div');
  wrapper.className = 'code';
  pre.replaceWith(wrapper);
  wrapper.append(head, pre);
  pre.tabIndex = 0;
  pre.setAttribute('role', 'region');
  pre.setAttribute('aria-label', name);

  const grammar = language ? grammarOf(language) : null;
  if (!code || !grammar) return null;
  const highlighted = highlight(code.textContent ?? '', grammar);
  if (highlighted.html === null) return highlighted.load;
  // highlight.js escapes the code itself; its spans pass DOMPurify too, keeping only classes.
  code.replaceChildren(
    DOMPurify.sanitize(highlighted.html, {
      ALLOWED_TAGS: ['span'],
      ALLOWED_ATTR: ['class'],
      RETURN_DOM_FRAGMENT: true,
    }),
  );
  code.classList.add('hljs');
  return null;
}

/**
 * Renders `markdown` to sanitized HTML; never throws: nesting is bounded (markdown-parse.ts), and
 * whatever marked still cannot render shows as plain text, never as a blank reply.
 */
export function renderMarkdown(markdown: string, options: RenderOptions = {}): string {
  let html: string;
  try {
    html = parseMarkdown(markdown);
  } catch {
    return plainText(markdown);
  }
  const fragment = DOMPurify.sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR,
    ALLOW_DATA_ATTR: false,
    RETURN_DOM_FRAGMENT: true,
  });
  const base = new URL(import.meta.env.BASE_URL, location.href).href;
  for (const img of fragment.querySelectorAll('img')) {
    const own = ownImage(img.getAttribute('src'), location.href, base, APP_IMAGES);
    if (own === null) inertImage(img);
    else img.src = own.href;
  }
  for (const link of fragment.querySelectorAll('a')) guardLink(link);
  linkCitations(fragment, options.citations ?? []);
  const where = options.where ? ` in ${options.where}` : '';
  for (const [i, table] of [...fragment.querySelectorAll('table')].entries()) {
    const region = document.createElement('div');
    region.className = 'table';
    region.tabIndex = 0;
    region.setAttribute('role', 'region');
    region.setAttribute('aria-label', `Table ${i + 1}${where}`);
    table.replaceWith(region);
    region.append(table);
    // A short cell (a size, a version, a name such as Llama-3.2-1B) stays on one line: the
    // table scrolls instead. A longer one wraps, between words only (chat-message.ts).
    for (const cell of table.querySelectorAll('td, th')) {
      if ((cell.textContent ?? '').trim().length <= SHORT_CELL) cell.classList.add('short');
    }
  }
  const loads: Promise<void>[] = [];
  for (const [i, pre] of [...fragment.querySelectorAll('pre')].entries()) {
    const load = dressCode(pre, `Code ${i + 1}${where}`);
    if (load) loads.push(load);
  }
  const { onHighlighterLoaded } = options;
  if (loads.length > 0 && onHighlighterLoaded) {
    Promise.all(loads).then(onHighlighterLoaded, () => {
      // Not loaded (offline before the grammar was cached): the code stays plain.
    });
  }
  const container = document.createElement('div');
  container.append(fragment);
  return container.innerHTML;
}
