/**
 * @module
 * Styles every element of the app shares: controls, focus rings, visually hidden text.
 */
import { css } from 'lit';
import { readableAmount } from '../../models/readable-amount';

/** A list of cards (models, servers): each `li` a raised box, its `.head` a row of badges. */
export const cards = css`
  li {
    border: 1px solid var(--border);
    border-radius: var(--radius);
    padding: 0.7em 0.9em;
    background: var(--bg-raised);
  }
  .head {
    display: flex;
    flex-wrap: wrap;
    gap: 0.4em;
    align-items: baseline;
  }
`;

/** A view of the app's own (Settings, Documents): a column of reading width, and its title. */
export const view = css`
  :host {
    display: block;
    padding: 1em;
    max-width: 52em;
    margin: 0 auto;
  }
  h2 {
    font-size: 1.3em;
    margin: 0 0 0.5em;
  }
`;

export const shared = css`
  :host {
    font: var(--font);
    color: var(--fg);
  }
  * {
    box-sizing: border-box;
  }
  button,
  input,
  select,
  textarea {
    font: inherit;
    color: inherit;
  }
  button {
    border: 1px solid var(--border);
    background: var(--bg-raised);
    border-radius: 8px;
    padding: 0.35em 0.8em;
    cursor: pointer;
  }
  button:hover:not(:disabled) {
    border-color: var(--fg-soft);
  }
  button:disabled {
    opacity: 0.55;
    cursor: default;
  }
  button.primary {
    background: var(--accent);
    color: var(--accent-fg);
    border-color: var(--accent);
  }
  button.danger {
    color: var(--danger);
  }
  button.link {
    border: none;
    background: none;
    padding: 0.2em 0.4em;
    color: var(--fg-soft);
  }
  input,
  select,
  textarea {
    background: var(--bg);
    border: 1px solid var(--border);
    border-radius: 8px;
    padding: 0.4em 0.6em;
  }
  :focus-visible {
    outline: 2px solid var(--focus);
    outline-offset: 2px;
  }
  code {
    font: var(--mono);
    background: var(--code-bg);
    padding: 0 0.25em;
    border-radius: 4px;
  }
  .sr-only {
    position: absolute;
    width: 1px;
    height: 1px;
    padding: 0;
    margin: -1px;
    overflow: hidden;
    clip: rect(0, 0, 0, 0);
    white-space: nowrap;
    border: 0;
  }
  .badge {
    display: inline-block;
    font-size: 0.78em;
    line-height: 1.4;
    padding: 0 0.5em;
    border-radius: 999px;
    border: 1px solid var(--border);
    color: var(--fg-soft);
    white-space: nowrap;
  }
  .badge.ok {
    color: var(--ok);
    border-color: currentColor;
  }
  .badge.warn {
    color: var(--danger);
    border-color: currentColor;
  }
  .muted {
    color: var(--fg-soft);
  }
  .notice {
    padding: 0.5em 0.8em;
    border-radius: 8px;
    background: var(--bg-soft);
  }
  .error {
    color: var(--danger);
  }
`;

/** Bytes as people read them (`1.2 GB`, `338 MB`, `380 KB`). */
export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined) return '?';
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024).toLocaleString('en-US')} KB`;
  if (bytes < 1024 ** 3) return `${readableAmount(bytes / 1024 ** 2)} MB`;
  return `${readableAmount(bytes / 1024 ** 3)} GB`;
}

/** A duration in seconds as people read it. */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '…';
  if (seconds < 60) return `${Math.max(1, Math.round(seconds))} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}
