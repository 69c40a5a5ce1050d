/**
 * @module
 * A conversation's title from the first thing the user said: one line of plain text. People
 * often start with Markdown (`# Heading`, `**bold**`, a list item, a link); the list shows the
 * title as text, so the syntax would show as stray characters.
 */

/** The title of a conversation nothing has been said in yet. */
export const UNTITLED = 'New conversation';

const MAX_TITLE = 48;

/** `line` without Markdown's syntax: what a reader of the rendered line would see. */
export function plainText(line: string): string {
  return (
    line
      // Block markers at the start: headings, quotes, list items, task boxes.
      .replace(/^(?:\s*>)+\s*/, '')
      .replace(/^\s*#{1,6}(?:\s+|$)/, '')
      .replace(/^\s*(?:[-*+]|\d{1,9}[.)])\s+(?:\[[ xX]\]\s+)?/, '')
      // Images and links keep their text; autolinks their address.
      .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
      .replace(/<((?:https?|mailto):[^>\s]+)>/g, '$1')
      // Code spans keep their code; emphasis and strikethrough their words.
      .replace(/(`+)(.+?)\1/g, '$2')
      .replace(/(\*\*|__|~~)(?=\S)(.+?)(?<=\S)\1/g, '$2')
      .replace(/(^|[^\w*])([*_])(?=\S)(.+?)(?<=\S)\2(?![\w*])/g, '$1$3')
      // A closing run of #s of an ATX heading.
      .replace(/\s+#+\s*$/, '')
      .trim()
  );
}

/** A title from the first thing the user said: its first line with text, as plain text. */
export function titleFrom(text: string): string {
  const lines = text.split('\n').filter((l) => !/^\s*(?:```|~~~)/.test(l));
  const line = lines.map(plainText).find((l) => l !== '') ?? '';
  if (line === '') return UNTITLED;
  return line.length > MAX_TITLE ? `${line.slice(0, MAX_TITLE - 1).trimEnd()}…` : line;
}
