/**
 * @module
 * A reply's Markdown on screen, for `<chat-message>`: rendering it costs a parse and a sanitise, so
 * the last few renders are kept (a streaming reply re-renders many times a second), and a render
 * is redone once the highlighter's grammar has loaded. The rendered HTML is inert: its links and
 * its code blocks' Copy buttons are answered here, a link only once the user confirms its
 * address in `<link-confirm>`.
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import './link-confirm';
import { renderMarkdown } from './markdown';

/** How long "Copied" shows after a copy. */
export const COPIED_MS = 1500;

/** The element that shows the Markdown: its root holds the `<link-confirm>` links ask through. */
export type MarkdownHost = ReactiveControllerHost & { readonly renderRoot: ParentNode };

/** Renders Markdown for its host, keeping the last renders, and answers clicks in it. */
export class RenderedMarkdown implements ReactiveController {
  /** The last Markdown rendered, and its HTML: a re-render of the same text costs nothing. */
  #rendered = new Map<string, string>();

  constructor(private readonly host: MarkdownHost) {
    host.addController(this);
  }

  /** A message taken off the page lets go of its renders (they are made again if it returns). */
  hostDisconnected(): void {
    this.#rendered.clear();
  }

  /**
   * The HTML of `text`; `where` names it for the links and buttons in it ("reply 3");
   * `citations` name the passages its `[n]` markers cite.
   */
  html(text: string, where: string, citations: readonly string[] = []): string {
    const key = `${where}\n${citations.join('\n')}\n${text}`;
    let html = this.#rendered.get(key);
    if (html === undefined) {
      html = renderMarkdown(text, {
        where,
        citations,
        // The grammar of its code has loaded: render again, highlighted.
        onHighlighterLoaded: () => {
          this.#rendered.clear();
          this.host.requestUpdate();
        },
      });
      if (this.#rendered.size > 4) this.#rendered.clear();
      this.#rendered.set(key, html);
    }
    return html;
  }

  /**
   * Copies a code block, or asks before a link opens (the buttons and links are part of the
   * rendered Markdown).
   */
  click(event: Event): void {
    const target = event.target as HTMLElement;
    const link = target.closest<HTMLElement>('a[data-href]');
    if (link) {
      event.preventDefault();
      void this.host.renderRoot.querySelector('link-confirm')?.ask(link.dataset.href!, link);
      return;
    }
    const button = target.closest('button.copy-code');
    const code = button?.closest('.code')?.querySelector('pre')?.textContent;
    if (button && code !== undefined && code !== null) {
      const name = button.getAttribute('aria-label') ?? 'Copy code';
      void navigator.clipboard.writeText(code).then(() => {
        button.textContent = 'Copied';
        button.setAttribute('aria-label', name.replace(/^Copy/, 'Copied'));
        setTimeout(() => {
          button.textContent = 'Copy';
          button.setAttribute('aria-label', name);
        }, COPIED_MS);
      });
    }
  }

  /** Enter on a link asks, as a click does (links without `href` get no Enter of their own). */
  key(event: KeyboardEvent): void {
    const link = (event.target as HTMLElement).closest<HTMLElement>('a[data-href]');
    if (link && event.key === 'Enter') this.click(event);
  }
}
