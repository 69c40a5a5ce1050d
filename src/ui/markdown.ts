/**
 * @module
 * A model's Markdown as inert HTML. Raw HTML in it shows as the text it is (as chat apps show
 * it); marked renders the rest; DOMPurify keeps only the elements and attributes marked makes;
 * then no link and no image may reach anything by itself (outbound.ts): a link has no `href`,
 * shows its full destination and opens only after the user confirms it (chat-message.ts), and
 * an image that is not one of the app's own files, named exactly, becomes the text of its
 * address — so nothing a model writes can run, or send a conversation anywhere. (The page's
 * Content Security Policy holds the line for other hosts a third time.) Code blocks get a copy
 * button.
 */
import DOMPurify from 'dompurify';
import { Marked } from 'marked';
import { describeSource, linkDestination, ownImage, textIsDestination } from './outbound';

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

const marked = new Marked({
  gfm: true,
  async: false,
  // Raw HTML, block or inline, is text: a model's `<img onerror>` is shown, never parsed.
  renderer: { html: ({ text }) => escapeHtml(text) },
});

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

/**
 * How deep quotes and lists may nest. marked recurses once per level, and ~2,000 nested `>` (or
 * 3,000 `> ` or `- `) overflow its stack: deeper markers are kept as text.
 */
const MAX_NESTING = 32;
const DEEP_QUOTE = new RegExp(`^((?:[ \\t]*>){${MAX_NESTING}})`, 'gm');
const DEEP_LIST = new RegExp(`^((?:[ \\t]*[-*+][ \\t]+){${MAX_NESTING}})`, 'gm');

/** Markers past MAX_NESTING, made text: a backslash before the first of them. */
function boundNesting(markdown: string): string {
  return markdown.replace(DEEP_QUOTE, '$1\\').replace(DEEP_LIST, '$1\\');
}

/** Text as it is, for when Markdown cannot be rendered: escaped, its lines kept. */
function plainText(text: string): string {
  return `<p class="unrendered">${escapeHtml(text).replace(/\n/g, '<br>')}</p>`;
}

/**
 * Renders `markdown` to sanitized HTML; never throws: what marked cannot render (whatever a model
 * or an imported file holds) shows as plain text, never as a blank reply.
 */
export function renderMarkdown(markdown: string): string {
  let html: string;
  try {
    html = marked.parse(boundNesting(markdown)) as string;
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
  for (const pre of fragment.querySelectorAll('pre')) {
    const wrapper = document.createElement('div');
    wrapper.className = 'code';
    const copy = document.createElement('button');
    copy.type = 'button';
    copy.className = 'copy-code';
    copy.textContent = 'Copy code';
    pre.replaceWith(wrapper);
    wrapper.append(copy, pre);
  }
  const container = document.createElement('div');
  container.append(fragment);
  return container.innerHTML;
}
