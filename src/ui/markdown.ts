/**
 * @module
 * A model's Markdown as inert HTML. Raw HTML in it shows as the text it is (as chat apps show
 * it); marked renders the rest; DOMPurify removes what could still act (`javascript:` links,
 * styles, forms); images that would load from another host become plain text — so nothing a
 * model writes can run, or send a conversation anywhere. (The page's Content Security Policy
 * holds the same line a third time.) Code blocks get a copy button.
 */
import DOMPurify from 'dompurify';
import { Marked } from 'marked';

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

/** Tags a reply has no use for and that could act: forms, frames, embedded documents, styles. */
const FORBID_TAGS = [
  'style',
  'form',
  'input',
  'button',
  'textarea',
  'select',
  'iframe',
  'frame',
  'object',
  'embed',
  'svg',
  'math',
  'link',
  'meta',
  'base',
];

/** Whether an image source stays on this device: this origin, `data:` or `blob:`. */
function isLocalSource(src: string): boolean {
  try {
    const url = new URL(src, location.href);
    return url.protocol === 'data:' || url.protocol === 'blob:' || url.origin === location.origin;
  } catch {
    return false;
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
    FORBID_TAGS,
    FORBID_ATTR: ['style', 'srcset', 'formaction', 'ping'],
    RETURN_DOM_FRAGMENT: true,
  });
  for (const img of fragment.querySelectorAll('img')) {
    const src = img.getAttribute('src') ?? '';
    if (isLocalSource(src)) continue;
    // An image on another host would tell that host someone read this: show where it points.
    const alt = img.getAttribute('alt') || 'image';
    img.replaceWith(document.createTextNode(`[${alt}: ${src}]`));
  }
  for (const link of fragment.querySelectorAll('a')) {
    link.setAttribute('target', '_blank');
    link.setAttribute('rel', 'noopener noreferrer nofollow');
    link.setAttribute('referrerpolicy', 'no-referrer');
  }
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
