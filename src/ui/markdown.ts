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

/** Renders `markdown` to sanitized HTML. */
export function renderMarkdown(markdown: string): string {
  const html = marked.parse(markdown) as string;
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
