/**
 * @module
 * `<chat-view>`'s styles: the bar, the notices, the log and its "Latest" button, the composer and
 * the context meter, and the phone's layout (the bar's room goes to the model picker).
 */
import { css } from 'lit';

export const chatViewStyles = css`
  :host {
    display: flex;
    flex-direction: column;
    height: 100%;
    min-height: 0;
    position: relative;
  }
  .bar {
    display: flex;
    gap: 0.5em;
    align-items: center;
    padding: 0.45em 1em;
    border-bottom: 1px solid var(--border);
    min-width: 0;
  }
  .bar h2 {
    font-size: 1em;
    margin: 0 0.5em 0 0;
    white-space: nowrap;
    overflow: hidden;
    text-overflow: ellipsis;
    flex: 0 1 auto;
    min-width: 3em;
  }
  .bar select {
    flex: 0 1 24em;
    min-width: 0;
    max-width: 28em;
  }
  .bar .options {
    margin-left: auto;
    white-space: nowrap;
  }
  /* On a phone only: elsewhere the sidebar has them. */
  .menu,
  .new,
  .options .short {
    display: none;
  }
  .notice {
    margin: 0.5em 1em 0;
    padding: 0.4em 0.8em;
    border-radius: 8px;
    background: var(--bg-soft);
    font-size: 0.92em;
  }
  .notice.warn {
    border: 1px solid var(--danger);
  }
  .hint {
    display: flex;
    align-items: center;
    gap: 0.6em;
    white-space: nowrap;
    overflow: hidden;
  }
  .hint span {
    overflow: hidden;
    text-overflow: ellipsis;
    flex: 1;
  }
  .stage {
    flex: 1;
    min-height: 0;
    position: relative;
    display: flex;
  }
  .log {
    flex: 1;
    overflow-y: auto;
    padding: 1em;
    display: flex;
    flex-direction: column;
    gap: 0.9em;
  }
  .log > * {
    max-width: 48em;
    width: 100%;
    margin: 0 auto;
  }
  .empty {
    margin: auto;
    text-align: center;
    color: var(--fg-soft);
  }
  .latest {
    position: absolute;
    bottom: 0.7em;
    left: 50%;
    transform: translateX(-50%);
    border-radius: 999px;
    box-shadow: 0 2px 10px rgb(0 0 0 / 20%);
  }
  .composer {
    border-top: 1px solid var(--border);
    padding: 0.5em 1em 0.7em;
  }
  .composer form {
    display: flex;
    gap: 0.5em;
    align-items: flex-end;
    max-width: 48em;
    margin: 0 auto;
  }
  .composer textarea {
    flex: 1;
    resize: none;
    min-height: 2.6em;
    overflow-y: auto;
  }
  .attachments {
    list-style: none;
    display: flex;
    flex-wrap: wrap;
    gap: 0.5em;
    max-width: 48em;
    margin: 0 auto 0.5em;
    padding: 0;
  }
  .attachments li {
    position: relative;
  }
  .attachments img {
    display: block;
    width: 4em;
    height: 4em;
    object-fit: cover;
    border-radius: 6px;
    border: 1px solid var(--border);
  }
  .attachments button {
    position: absolute;
    top: -0.5em;
    right: -0.5em;
    min-width: 1.8em;
    min-height: 1.8em;
    padding: 0;
    border-radius: 999px;
    line-height: 1;
  }
  .attach-error,
  .attach-note {
    max-width: 48em;
    margin: 0 auto 0.4em;
    font-size: 0.85em;
  }
  .attach-error {
    color: var(--danger);
  }
  .attach-note {
    color: var(--fg-soft);
  }
  .composer .attach {
    display: inline-flex;
    align-items: center;
    justify-content: center;
    min-width: 2.6em;
    min-height: 2.6em;
    font-size: 1.1em;
    cursor: pointer;
    border: 1px solid var(--border);
    border-radius: var(--radius);
  }
  .composer .attach:focus-within {
    outline: 2px solid var(--accent);
    outline-offset: 2px;
  }
  /* Files dragged over the chat: where they go. */
  .composer.dropping {
    outline: 2px dashed var(--accent);
    outline-offset: -4px;
  }
  .meter {
    max-width: 48em;
    margin: 0.35em auto 0;
    display: flex;
    align-items: center;
    gap: 0.5em;
    font-size: 0.8em;
    color: var(--fg-soft);
  }
  meter {
    flex: 0 1 10em;
  }
  @media (max-width: 720px) {
    .bar {
      padding: 0.35em 0.5em;
      gap: 0.35em;
    }
    .menu,
    .new {
      display: inline-block;
    }
    /* The bar's room is the model's: "Options" (named "Chat options" all the same). */
    .options .long {
      display: none;
    }
    .options .short {
      display: inline;
    }
    /* The title is in the tab and the conversation list; the bar's room is the model's. */
    .bar h2,
    .bar label {
      position: absolute;
      width: 1px;
      height: 1px;
      overflow: hidden;
      clip-path: inset(50%);
      white-space: nowrap;
    }
    .bar select {
      flex: 1 1 auto;
      max-width: none;
    }
    .notice {
      margin: 0.35em 0.5em 0;
    }
    .log {
      padding: 0.6em 0.5em;
    }
    .composer {
      padding: 0.4em 0.5em 0.5em;
    }
  }
`;
