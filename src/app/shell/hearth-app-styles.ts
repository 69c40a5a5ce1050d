/**
 * @module
 * The shell's look: the header, the sidebar (a drawer on a phone), the banners and toasts, the
 * shortcuts dialog. Kept apart from `<hearth-app>` so that the element reads as its behaviour.
 */
import { css } from 'lit';

/** `<hearth-app>`'s own styles, after the shared ones. */
export const hearthAppStyles = css`
  :host {
    display: grid;
    grid-template-columns: 17em 1fr;
    grid-template-rows: auto 1fr;
    height: 100vh;
    height: 100dvh;
  }
  header {
    grid-column: 1 / -1;
    display: flex;
    align-items: center;
    gap: 1em;
    padding: 0.4em 1em;
    border-bottom: 1px solid var(--border);
  }
  h1 {
    font-size: 1.2em;
    margin: 0;
  }
  nav ul {
    display: flex;
    gap: 0.2em;
    list-style: none;
    margin: 0;
    padding: 0;
  }
  nav a {
    color: inherit;
    text-decoration: none;
    padding: 0.3em 0.7em;
    border-radius: 8px;
    display: inline-block;
  }
  nav a[aria-current='page'] {
    background: var(--bg-soft);
    font-weight: 600;
  }
  .end {
    margin-left: auto;
  }
  .menu,
  .drawer-top {
    display: none;
  }
  /* The first Tab stop, shown once focused: past the header and the conversations. A button,
     not a link to "#main": the address's hash holds the view, and the view is in this shadow
     root, where a link's target is not looked up. */
  .skip {
    position: absolute;
    z-index: 30;
    left: 0.5em;
    top: 0.5em;
    padding: 0.4em 0.8em;
    background: var(--bg);
    border: 1px solid var(--border);
    border-radius: 8px;
    white-space: nowrap;
    transform: translateY(calc(-100% - 1em));
  }
  .skip:focus {
    transform: none;
  }
  /* Focused by the skip link only, as where reading starts: no ring around the whole view. */
  main:focus {
    outline: none;
  }
  aside {
    grid-row: 2;
    border-right: 1px solid var(--border);
    padding: 0.8em;
    display: flex;
    flex-direction: column;
    gap: 0.8em;
    min-height: 0;
    overflow: hidden;
    background: var(--bg-soft);
  }
  aside conversation-list {
    flex: 1;
    min-height: 0;
  }
  /* The banners take what they need and the view the rest: a banner never pushes the
     composer off the screen, the conversation's log shrinks instead. */
  main {
    grid-row: 2;
    min-height: 0;
    min-width: 0;
    display: flex;
    flex-direction: column;
  }
  .view {
    flex: 1;
    min-height: 0;
    overflow: auto;
  }
  main.chat .view {
    overflow: hidden;
  }
  .banner {
    margin: 0.4em 1em 0;
    display: flex;
    flex-wrap: wrap;
    align-items: center;
    gap: 0.3em 0.8em;
    padding: 0.35em 0.8em;
  }
  .banner button {
    margin-left: auto;
  }
  /* Notices of something done float and close by themselves: at the foot of the sidebar,
     where the import and export buttons are, covering none of the chat's controls. */
  .toast {
    position: fixed;
    left: 0.8em;
    bottom: 0.8em;
    z-index: 10;
    max-width: calc(17em - 1.6em);
    box-shadow: 0 4px 18px rgb(0 0 0 / 25%);
    display: flex;
    gap: 0.8em;
    align-items: center;
  }
  dialog {
    max-width: min(34em, 92vw);
    border: 1px solid var(--border);
    border-radius: var(--radius);
    background: var(--bg);
    color: var(--fg);
  }
  dialog::backdrop {
    background: rgb(0 0 0 / 40%);
  }
  dialog h2 {
    margin-top: 0;
    font-size: 1.15em;
  }
  dl.keys {
    display: grid;
    grid-template-columns: auto 1fr;
    gap: 0.4em 1em;
    margin: 0 0 1em;
  }
  dl.keys dt {
    white-space: nowrap;
  }
  dl.keys dd {
    margin: 0;
  }
  kbd {
    font: var(--mono);
    border: 1px solid var(--border);
    border-bottom-width: 2px;
    border-radius: 4px;
    padding: 0 0.3em;
    background: var(--bg-soft);
  }
  @media (max-width: 720px) {
    :host {
      grid-template-columns: 1fr;
    }
    /* No sidebar beside the chat: under the chat's bar (56px at most), above its log. */
    .toast {
      bottom: auto;
      top: calc(56px + 0.5em);
      left: 0.5em;
      max-width: calc(100vw - 1em);
    }
    /* One bar on a phone: the conversation's own (chat-view), which opens this drawer. The
       header stays for screen readers, as the page's heading, and for the skip link, which
       shows when focused (the header is not clipped, its heading is). */
    :host([view='chat']) header {
      position: absolute;
      width: 1px;
      height: 1px;
      padding: 0;
      border: 0;
    }
    :host([view='chat']) header h1 {
      position: absolute;
      width: 1px;
      height: 1px;
      overflow: hidden;
      clip-path: inset(50%);
      white-space: nowrap;
    }
    :host([view='chat']) header .menu {
      display: none;
    }
    :host([view='chat']) {
      grid-template-rows: 0 1fr;
    }
    .menu {
      display: inline-block;
    }
    header nav,
    header .end {
      display: none;
    }
    .drawer-top {
      display: flex;
      align-items: center;
      justify-content: space-between;
      gap: 0.5em;
    }
    aside {
      display: none;
      border-right: none;
    }
    :host([drawer-open]) aside {
      display: flex;
    }
    /* The view gives way to the drawer; its landmark stays, empty, as a page has a main part. */
    :host([drawer-open]) main {
      position: absolute;
      width: 1px;
      height: 1px;
      overflow: hidden;
      clip-path: inset(50%);
    }
    :host([drawer-open]) main > * {
      display: none;
    }
    header {
      gap: 0.5em;
      padding: 0.3em 0.6em;
    }
    .banner {
      margin: 0.3em 0.5em 0;
      font-size: 0.92em;
    }
  }
`;
