/**
 * @module
 * A reply's citations: the `[n]` markers a model writes for the passages its document search
 * found become numbered buttons, named for what they cite ("Source 1: guide.pdf, page 3"). They
 * are made after sanitising, from the DOM (text and attributes set, never HTML parsed), and only
 * in running text: a marker in code, or in a link's text, or one with no passage behind it, stays
 * as it was written. What a button opens is the message's (chat-message.ts).
 */

/** A marker: `[3]`, or one of a group `[1][2]` (each its own). */
const MARKER = /\[(\d{1,3})\]/g;

/** Whether `node` is inside code, a link, or something already made a citation. */
function excluded(node: Node): boolean {
  return node.parentElement?.closest('code, pre, a, button, .inert-link') != null;
}

/**
 * Replaces the `[n]` markers of `root`'s running text with citation buttons, `labels[n-1]`
 * naming passage n ("guide.pdf, page 3"); a marker past the labels stays text.
 */
export function linkCitations(root: DocumentFragment, labels: readonly string[]): void {
  if (labels.length === 0) return;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const texts: Text[] = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (MARKER.test(node.nodeValue ?? '') && !excluded(node)) texts.push(node as Text);
    MARKER.lastIndex = 0;
  }
  for (const text of texts) {
    const value = text.nodeValue ?? '';
    const parts: (string | HTMLElement)[] = [];
    let from = 0;
    for (const match of value.matchAll(MARKER)) {
      const n = Number(match[1]);
      const label = labels[n - 1];
      if (label === undefined || n < 1) continue;
      parts.push(value.slice(from, match.index));
      parts.push(citationButton(n, label));
      from = match.index + match[0].length;
    }
    if (parts.length === 0) continue;
    parts.push(value.slice(from));
    text.replaceWith(...parts.filter((p) => p !== ''));
  }
}

/** The button for citation `n`: its number shown, its source in its name. */
function citationButton(n: number, label: string): HTMLElement {
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'cite';
  button.dataset.cite = String(n);
  button.setAttribute('aria-haspopup', 'dialog');
  button.setAttribute('aria-label', `Source ${n}: ${label}`);
  button.title = label;
  button.textContent = String(n);
  return button;
}
