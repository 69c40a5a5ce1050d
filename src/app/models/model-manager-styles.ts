/**
 * @module
 * The Models view's look: the title, the device's note, the search and filters, the cards and
 * their variants. Kept apart from `<model-manager>` so that the element reads as its behaviour.
 */
import { css } from 'lit';

/** `<model-manager>`'s own styles, after the shared ones and the cards'. */
export const modelManagerStyles = css`
  :host {
    display: block;
    padding: 1em;
    max-width: 60em;
    margin: 0 auto;
  }
  .title {
    display: flex;
    flex-wrap: wrap;
    gap: 0.5em;
    align-items: center;
    justify-content: space-between;
    margin: 0 0 0.6em;
  }
  h2 {
    margin: 0;
    font-size: 1.3em;
  }
  .device {
    border: 1px solid var(--accent);
    border-radius: var(--radius);
    padding: 0.8em 1em;
    margin-bottom: 1em;
  }
  .device p {
    margin: 0 0 0.5em;
  }
  .filters {
    display: grid;
    grid-template-columns: repeat(auto-fill, minmax(10em, 1fr));
    gap: 0.5em 0.8em;
    margin-bottom: 0.6em;
  }
  .filter {
    display: flex;
    flex-direction: column;
    gap: 0.15em;
  }
  .filter label {
    font-size: 0.9em;
    color: var(--fg-soft);
  }
  .filters select {
    color: var(--fg);
  }
  .search {
    display: flex;
    margin-bottom: 0.6em;
  }
  .search input {
    flex: 1;
  }
  .count {
    margin: 0 0 0.6em;
  }
  ul {
    list-style: none;
    padding: 0;
    margin: 0;
    display: flex;
    flex-direction: column;
    gap: 0.6em;
  }
  .card h3 {
    margin: 0;
    font-size: 1.08em;
    overflow-wrap: anywhere;
  }
  .card > p {
    margin: 0.15em 0 0.3em;
    font-size: 0.9em;
  }
  ul.variants {
    gap: 0;
  }
  ul.variants > li {
    border: none;
    border-top: 1px solid var(--border);
    border-radius: 0;
    background: none;
    padding: 0.5em 0 0.4em;
    display: flex;
    flex-wrap: wrap;
    column-gap: 1em;
    align-items: flex-start;
  }
  ul.variants > li > * {
    flex: 1 1 100%;
  }
  ul.variants > li > .about {
    flex: 1 1 24em;
    min-width: 0;
  }
  ul.variants > li > .actions {
    flex: 0 1 auto;
  }
  .variant {
    font-weight: 600;
    font-family: var(--mono);
    font-size: 0.92em;
  }
  .facts {
    font-size: 0.88em;
    color: var(--fg-soft);
    margin: 0.2em 0;
    overflow-wrap: anywhere;
  }
  .facts.error {
    color: var(--danger);
  }
  .actions {
    display: flex;
    flex-wrap: wrap;
    gap: 0.4em;
    margin-top: 0.4em;
    align-items: center;
  }
  progress {
    width: 100%;
  }
  .empty {
    margin: 0.5em 0 1em;
  }
`;
