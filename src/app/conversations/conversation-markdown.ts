/**
 * @module
 * One conversation as Markdown, for pasting elsewhere: a heading with its title, then each
 * message under a bold label of its own — `**You:**`, `**Assistant (model):**` — and what the
 * message said below it, as written (it is Markdown already). Only the versions on show; no
 * reasoning. Pure: no DOM.
 */
import type { Conversation, Message } from './conversation';

function label(m: Message, model: string): string {
  return m.role === 'user' ? '**You:**' : `**Assistant (${m.model ?? model}):**`;
}

function body(m: Message): string {
  const notes: string[] = [];
  // The pictures stay in the JSON export: a data URL in Markdown would bury the text.
  const images = m.images?.length ?? 0;
  if (images > 0) notes.push(`*(${images} image${images === 1 ? '' : 's'} attached)*`);
  if (m.stopped) notes.push('*(stopped)*');
  if (m.error) notes.push(`*(error: ${m.error.message})*`);
  return [m.content.trim(), ...notes].filter((s) => s !== '').join('\n\n');
}

/** The conversation as a Markdown document. */
export function conversationMarkdown(c: Conversation): string {
  const blocks = [`# ${c.title}`];
  if (c.settings.system.trim()) blocks.push(`**System:**\n\n${c.settings.system.trim()}`);
  for (const m of c.messages) blocks.push(`${label(m, c.model)}\n\n${body(m)}`.trimEnd());
  return `${blocks.join('\n\n')}\n`;
}

/** The file's name: the title, less what file systems refuse, and `.md`. */
export function markdownFileName(title: string): string {
  const name = title
    // Control characters too: no file system takes them.
    // eslint-disable-next-line no-control-regex
    .replace(/[\\/:*?"<>|\u0000-\u001f]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return `${name.replace(/^\.+/, '') || 'conversation'}.md`;
}
