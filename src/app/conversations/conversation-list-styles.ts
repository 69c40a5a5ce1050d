/**
 * @module
 * The look of `<conversation-list>`: rows whose "⋯" shows only where it is wanted, search
 * snippets, the archive toggle, the row menu (a popover in the top layer) and the file buttons.
 */
import { css } from 'lit';

/** The styles `<conversation-list>` adds to the shared ones. */
export const conversationListStyles = css`
  :host {
    display: flex;
    flex-direction: column;
    gap: 0.6em;
    min-height: 0;
  }
  .top {
    display: flex;
    flex-direction: column;
    gap: 0.5em;
  }
  .scroll {
    overflow-y: auto;
    flex: 1;
    min-height: 0;
    /* Room for the focus rings. */
    padding: 2px;
    margin: -2px;
  }
  ul {
    list-style: none;
    margin: 0;
    padding: 0;
  }
  h2 {
    font-size: 0.75em;
    font-weight: 600;
    color: var(--fg-soft);
    margin: 0.9em 0.6em 0.25em;
  }
  .group:first-child h2 {
    margin-top: 0.2em;
  }
  .row {
    position: relative;
    border-radius: 8px;
  }
  .row:hover,
  .row[data-menu] {
    background: var(--bg-raised);
  }
  .row[data-active] {
    background: var(--bg-raised);
    outline: 1px solid var(--border);
  }
  .open {
    display: block;
    width: 100%;
    text-align: left;
    border: none;
    background: none;
    padding: 0.4em 0.6em;
    overflow: hidden;
    text-overflow: ellipsis;
    white-space: nowrap;
  }
  .open:focus-visible {
    outline-offset: -2px;
  }
  /* The whole row opens the conversation, its snippet too. */
  .open::after {
    content: '';
    position: absolute;
    inset: 0;
  }
  .more {
    position: absolute;
    z-index: 1;
    top: 0.15em;
    right: 0.2em;
    border: none;
    background: var(--bg-raised);
    color: var(--fg-soft);
    padding: 0.2em 0.5em;
    line-height: 1.2;
    opacity: 0;
  }
  .more:hover:not(:disabled) {
    color: var(--fg);
  }
  /* The "⋯" shows where it is wanted (the open conversation, under the pointer, wherever the
     keyboard is), and always on a touch screen; the title gives way to it only then. */
  .row:is(:hover, :focus-within, [data-active], [data-menu]) .more {
    opacity: 1;
  }
  .row:is(:hover, :focus-within, [data-active], [data-menu]) .open {
    padding-right: 2.4em;
  }
  @media (hover: none) {
    .more {
      opacity: 1;
    }
    .open {
      padding-right: 2.4em;
    }
  }
  .snippet {
    margin: -0.2em 0.6em 0.4em;
    font-size: 0.85em;
    color: var(--fg-soft);
    overflow-wrap: anywhere;
    display: -webkit-box;
    -webkit-line-clamp: 2;
    line-clamp: 2;
    -webkit-box-orient: vertical;
    overflow: hidden;
  }
  mark {
    background: light-dark(#fde68a, #713f12);
    color: var(--fg);
    border-radius: 2px;
  }
  .row input {
    width: 100%;
  }
  .confirm {
    display: flex;
    flex-wrap: wrap;
    align-items: center;
    gap: 0.3em;
    padding: 0.3em;
    font-size: 0.9em;
  }
  .confirm span {
    overflow-wrap: anywhere;
    min-width: 0;
  }
  .none {
    padding: 0.4em 0.6em;
  }
  .archive-toggle {
    margin-top: 0.6em;
    font-size: 0.85em;
  }
  .archive-toggle::before {
    content: '▸ ';
  }
  .archive-toggle[aria-expanded='true']::before {
    content: '▾ ';
  }
  /* A popover, in the top layer: nothing clips it, and it is placed in the viewport. */
  [role='menu'] {
    position: fixed;
    inset: auto;
    margin: 0;
    color: var(--fg);
    display: flex;
    flex-direction: column;
    min-width: 10em;
    padding: 0.25em;
    background: var(--bg-raised);
    border: 1px solid var(--border);
    border-radius: var(--radius);
    box-shadow: 0 4px 16px light-dark(rgb(0 0 0 / 0.15), rgb(0 0 0 / 0.5));
  }
  [role='menuitem'] {
    border: none;
    background: none;
    text-align: left;
    padding: 0.45em 0.8em;
  }
  [role='menuitem']:hover,
  [role='menuitem']:focus {
    background: var(--bg-soft);
  }
  .files {
    display: flex;
    gap: 0.2em;
    font-size: 0.85em;
  }
  .files label {
    border-radius: 8px;
    padding: 0.2em 0.4em;
    cursor: pointer;
    color: var(--fg-soft);
  }
  .files label:hover {
    color: var(--fg);
  }
  .files label:focus-within {
    outline: 2px solid var(--focus);
  }
`;
