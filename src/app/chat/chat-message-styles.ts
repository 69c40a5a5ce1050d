/**
 * @module
 * `<chat-message>`'s styles: the bubbles, the rendered Markdown (headings, lists, code blocks with
 * their Copy, tables that scroll), highlight.js's token colours in light and dark, the actions
 * row and the streaming cursor. Apart from the element so that it reads as behaviour.
 */
import { css } from 'lit';

export const chatMessageStyles = css`
  :host {
    display: block;
  }
  article {
    padding: 0.6em 0.9em;
    border-radius: var(--radius);
    max-width: 100%;
    overflow-wrap: anywhere;
  }
  article.user {
    background: var(--user-bubble);
    margin-left: auto;
    width: fit-content;
    max-width: min(100%, 42em);
  }
  article.user.editing {
    width: 100%;
    max-width: 100%;
  }
  .text {
    white-space: pre-wrap;
  }
  article.user .images {
    display: flex;
    flex-wrap: wrap;
    gap: 0.4em;
    margin-bottom: 0.4em;
  }
  article.user .images img {
    display: block;
    max-width: min(12em, 100%);
    max-height: 12em;
    border-radius: 6px;
  }
  .edit textarea {
    display: block;
    width: 100%;
    min-height: 3em;
    max-height: 60vh;
    resize: vertical;
  }
  .edit .actions {
    justify-content: flex-end;
    margin-top: 0.5em;
  }
  .md :first-child {
    margin-top: 0;
  }
  .md :last-child {
    margin-bottom: 0;
  }
  .md h1,
  .md h2,
  .md h3,
  .md h4,
  .md h5,
  .md h6 {
    font-size: 1em;
    line-height: 1.3;
    margin: 1.1em 0 0.4em;
  }
  .md h1 {
    font-size: 1.3em;
  }
  .md h2 {
    font-size: 1.15em;
  }
  .md p,
  .md ul,
  .md ol {
    margin: 0.6em 0;
  }
  .md ul,
  .md ol {
    padding-left: 1.6em;
  }
  .md li + li,
  .md li > ul,
  .md li > ol {
    margin-top: 0.2em;
  }
  .md blockquote {
    margin: 0.8em 0;
    padding: 0.1em 0 0.1em 0.9em;
    border-left: 3px solid var(--border);
    color: var(--fg-soft);
  }
  .md hr {
    border: none;
    border-top: 1px solid var(--border);
    margin: 1.2em 0;
  }
  .md .code {
    margin: 0.8em 0;
    border: 1px solid var(--border);
    border-radius: 8px;
    overflow: hidden;
  }
  .md .code-head {
    display: flex;
    align-items: center;
    justify-content: space-between;
    gap: 0.5em;
    padding: 0.15em 0.3em 0.15em 0.8em;
    background: var(--bg-soft);
    border-bottom: 1px solid var(--border);
    font-size: 0.8em;
    color: var(--fg-soft);
  }
  .md .copy-code {
    font-size: 1em;
    padding: 0.1em 0.6em;
  }
  .md pre {
    background: var(--code-bg);
    padding: 0.7em 0.9em;
    overflow-x: auto;
    margin: 0;
    overflow-wrap: normal;
  }
  .md pre code {
    background: none;
    padding: 0;
    border-radius: 0;
  }
  .md .table {
    overflow-x: auto;
    max-width: 100%;
    margin: 0.8em 0;
  }
  .md table {
    border-collapse: collapse;
  }
  .md td,
  .md th {
    border: 1px solid var(--border);
    padding: 0.3em 0.6em;
    min-width: 3em;
    overflow-wrap: normal;
    word-break: normal;
    vertical-align: top;
  }
  .md .short {
    white-space: nowrap;
  }
  .md th {
    background: var(--bg-soft);
    font-weight: 600;
    text-align: start;
  }
  .md img {
    max-width: 100%;
  }
  .md a[data-href] {
    color: var(--accent);
    text-decoration: underline;
    cursor: pointer;
  }
  /* A citation: its number, small, raised, as a reference mark (../markdown/citations.ts). */
  .md button.cite {
    min-width: 24px;
    min-height: 24px;
    margin: 0 0.1em;
    padding: 0 0.35em;
    border-radius: 0.8em;
    font-size: 0.75em;
    line-height: 1.4;
    vertical-align: super;
  }
  .md .destination {
    color: var(--fg-soft);
    font-size: 0.9em;
  }
  /* highlight.js's tokens, light and dark, each at least 4.5:1 on --code-bg. */
  .hljs-keyword,
  .hljs-selector-tag,
  .hljs-meta .hljs-keyword,
  .hljs-doctag,
  .hljs-template-tag,
  .hljs-type {
    color: light-dark(#cf222e, #ff7b72);
  }
  .hljs-string,
  .hljs-regexp,
  .hljs-meta .hljs-string {
    color: light-dark(#0a3069, #a5d6ff);
  }
  .hljs-number,
  .hljs-literal,
  .hljs-attr,
  .hljs-attribute,
  .hljs-variable,
  .hljs-template-variable,
  .hljs-selector-attr,
  .hljs-selector-class,
  .hljs-selector-id,
  .hljs-operator {
    color: light-dark(#0550ae, #79c0ff);
  }
  .hljs-comment,
  .hljs-quote,
  .hljs-meta {
    color: light-dark(#57606a, #8b949e);
  }
  .hljs-title,
  .hljs-title.class_,
  .hljs-title.function_,
  .hljs-section {
    color: light-dark(#6639ba, #d2a8ff);
  }
  .hljs-built_in,
  .hljs-symbol,
  .hljs-params,
  .hljs-property {
    color: light-dark(#953800, #ffa657);
  }
  .hljs-name,
  .hljs-tag,
  .hljs-selector-pseudo,
  .hljs-addition,
  .hljs-bullet {
    color: light-dark(#116329, #7ee787);
  }
  .hljs-deletion {
    color: light-dark(#82071e, #ffa198);
  }
  .hljs-emphasis {
    font-style: italic;
  }
  .hljs-strong {
    font-weight: 600;
  }
  details {
    color: var(--fg-soft);
    margin-bottom: 0.5em;
    border-left: 3px solid var(--border);
    padding-left: 0.7em;
  }
  .actions {
    display: flex;
    gap: 0.2em;
    flex-wrap: wrap;
    align-items: center;
    font-size: 0.85em;
  }
  .user + .actions {
    justify-content: flex-end;
  }
  .versions {
    display: inline-flex;
    align-items: center;
    color: var(--fg-soft);
    margin-right: 0.3em;
  }
  .versions button {
    font-size: 1.15em;
    line-height: 1;
    padding: 0.15em 0.45em;
  }
  .stats {
    color: var(--fg-soft);
    margin-right: 0.5em;
  }
  .cursor::after {
    content: '▍';
    animation: blink 1s steps(1) infinite;
  }
  @keyframes blink {
    50% {
      opacity: 0;
    }
  }
  @media (prefers-reduced-motion: reduce) {
    .cursor::after {
      animation: none;
    }
  }
`;
