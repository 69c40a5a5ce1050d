/**
 * @module
 * The look of `<servers-view>`: the add form as a grid of labels and fields, the servers' cards
 * with their facts and the models each offers.
 */
import { css } from 'lit';

/** The styles `<servers-view>` adds to the shared ones and the cards'. */
export const serversStyles = css`
  :host {
    display: block;
  }
  h3 {
    font-size: 1.05em;
    margin: 0 0 0.4em;
  }
  h4 {
    font-size: 1em;
    margin: 0;
  }
  form {
    display: grid;
    grid-template-columns: max-content minmax(0, 1fr);
    gap: 0.4em 0.8em;
    align-items: center;
    max-width: 36em;
  }
  form .hint {
    grid-column: 2;
    margin: -0.2em 0 0;
    font-size: 0.88em;
  }
  form .actions,
  form .choice {
    grid-column: 2;
  }
  ul {
    list-style: none;
    padding: 0;
    margin: 1em 0 0;
    display: flex;
    flex-direction: column;
    gap: 0.6em;
  }
  dl {
    display: grid;
    grid-template-columns: max-content 1fr;
    gap: 0.2em 1em;
    margin: 0.4em 0;
  }
  dt {
    color: var(--fg-soft);
  }
  dd {
    margin: 0;
    overflow-wrap: anywhere;
  }
  fieldset {
    border: 1px solid var(--border);
    border-radius: var(--radius);
    padding: 0.4em 0.9em 0.6em;
    margin: 0.4em 0;
  }
  fieldset label {
    display: block;
    overflow-wrap: anywhere;
  }
  .row {
    display: flex;
    gap: 0.5em;
    flex-wrap: wrap;
    align-items: center;
    margin-top: 0.4em;
  }
`;
