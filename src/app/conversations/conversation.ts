/**
 * @module
 * src/app/conversations/ is the conversations as the app keeps them: this model, their titles,
 * storage, search, date groups, export and import, Markdown, and the list that shows them. It
 * imports shared/ only.
 *
 * Conversations as the chat keeps them: messages, their versions, settings. How they travel
 * (export, import) is in `conversation-export.ts`. Pure: no DOM, no storage.
 */
import type { Usage } from '../../protocol/types';
import type { OutgoingMessage, OutgoingPart } from '../shared/api-client';
import { DEFAULT_SAMPLING, type ConversationSettings } from '../shared/chat-settings';

// Kept in chat-settings.ts, which reads and checks them, so that it need not import this file.
export type { ConversationSettings } from '../shared/chat-settings';
import { UNTITLED, titleFrom } from './conversation-title';

/** What a reply cost and how fast it came, shown under it. */
export interface ReplyStats {
  usage: Usage;
  /** Completion tokens per second, from the first token to the last. */
  tokens_per_s: number | null;
  /**
   * Some completion tokens were counted as they streamed in, not reported by the model: a reply
   * stopped before its end gets no usage (its `prompt_tokens` is 0 then, not known).
   */
  counted?: true;
  /**
   * The time from each part's first token to its last, summed, and the tokens after each part's
   * first: the speed of a reply written in parts (stopped or cut off, then continued).
   */
  timing?: { tokens: number; ms: number };
}

/** One message of a conversation. */
export interface Message {
  role: 'user' | 'assistant';
  content: string;
  /** What a reasoning model thought before answering. */
  reasoning?: string;
  /** The model that wrote an assistant message. */
  model?: string;
  stats?: ReplyStats;
  /** The images the user sent with the message, as `data:` URLs of their files. */
  images?: string[];
  /** The passages the reply's document search found: its `[n]` cites `sources[n-1]`. */
  sources?: Source[];
  /** The API's error, where this reply failed (what came before it is kept). */
  error?: { message: string; code: string | null };
  /** The reply was stopped before its end. */
  stopped?: boolean;
  /** Why it ended (`stop`, `length`). */
  finish_reason?: string;
  /**
   * The other versions of this message and of everything after it, kept when the user edits it
   * (a user message) or asks for it again (a reply). Absent while there is only one.
   */
  versions?: Versions;
}

/**
 * Versions of a message, each with what followed it. `tails[i]` holds version i's messages from
 * this one on; the version on show is `null` there, because it lives in `Conversation.messages`.
 */
export interface Versions {
  tails: (Message[] | null)[];
}

/** A passage a reply cites, as its document search found it. */
export interface Source {
  file_id: string;
  filename: string;
  text: string;
  page?: number;
  heading?: string;
}

/** A document attached to a conversation: a file of the API's Files, in its vector store. */
export interface DocumentRef {
  file_id: string;
  filename: string;
  bytes: number;
}

export interface Conversation {
  id: string;
  title: string;
  /** Unix milliseconds. */
  created: number;
  updated: number;
  model: string;
  settings: ConversationSettings;
  messages: Message[];
  /** What the user was typing and has not sent: never lost to a reload. */
  draft: string;
  /** The images attached to the draft (`data:` URLs), kept with it. */
  draftImages?: string[];
  /** Kept at the top of the list. */
  pinned?: boolean;
  /** Out of the list (and out of search), until the user shows the archive. */
  archived?: boolean;
  /**
   * Its vector store (`vs_…`), made for its first document. Records of before documents have
   * none of these three fields, and read as a conversation without documents.
   */
  vectorStoreId?: string;
  /** The documents attached to it, in its vector store. */
  documents?: DocumentRef[];
  /** The names of documents an import left out (an export carries names, not files). */
  documentsLeftOut?: string[];
}

export const DEFAULT_SETTINGS: Readonly<ConversationSettings> = { system: '', ...DEFAULT_SAMPLING };

/** A new, empty conversation. */
export function newConversation(model: string, settings = DEFAULT_SETTINGS): Conversation {
  const now = Date.now();
  return {
    id: crypto.randomUUID(),
    title: UNTITLED,
    created: now,
    updated: now,
    model,
    settings: { ...settings, stop: [...settings.stop] },
    messages: [],
    draft: '',
  };
}

export { titleFrom } from './conversation-title';

/**
 * What the model is sent: the system prompt, then the conversation up to `upTo` (exclusive),
 * leaving out replies that failed with nothing in them.
 */
export function outgoingMessages(
  conversation: Conversation,
  upTo = conversation.messages.length,
): OutgoingMessage[] {
  const out: OutgoingMessage[] = [];
  if (conversation.settings.system.trim()) {
    out.push({ role: 'system', content: conversation.settings.system });
  }
  for (const m of conversation.messages.slice(0, upTo)) {
    if (m.role === 'assistant' && m.content === '') continue;
    out.push({ role: m.role, content: contentOf(m) });
  }
  return out;
}

/** What a message says to the model: its text, or its text and then its images, as parts. */
export function contentOf(m: Pick<Message, 'content' | 'images'>): string | OutgoingPart[] {
  if (!m.images?.length) return m.content;
  const images = m.images.map((url): OutgoingPart => ({ type: 'image_url', image_url: { url } }));
  return m.content === '' ? images : [{ type: 'text', text: m.content }, ...images];
}

/** The `file_search` of the conversation's requests: its store, while it has documents. */
export function fileSearchOf(c: Conversation): { vector_store_ids: string[] } | undefined {
  return c.vectorStoreId && c.documents?.length
    ? { vector_store_ids: [c.vectorStoreId] }
    : undefined;
}

/** A rough token count (four characters a token), for the context meter before the API says. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * What an image is guessed to take before the model says: models differ tenfold (SmolVLM 64
 * tokens, Phi-3.5-vision about 2,500), so the meter counts a middling share of a context.
 */
export const IMAGE_TOKENS_ESTIMATE = 1000;

/** A rough token count of a message's content, its images included. */
export function estimateContentTokens(content: string | readonly OutgoingPart[]): number {
  if (typeof content === 'string') return estimateTokens(content);
  return content.reduce(
    (n, part) => n + (part.type === 'text' ? estimateTokens(part.text) : IMAGE_TOKENS_ESTIMATE),
    0,
  );
}

/**
 * The tokens the next request will take: the last reply's exact count where there is one, plus an
 * estimate of what came after it and of the draft.
 */
export function contextTokens(conversation: Conversation, draft = ''): number {
  let lastExact = -1;
  for (let i = conversation.messages.length - 1; i >= 0; i -= 1) {
    // Tokens counted as a stopped reply streamed are not the model's count of the context.
    const stats = conversation.messages[i]?.stats;
    if (stats && !stats.counted) {
      lastExact = i;
      break;
    }
  }
  const exact = conversation.messages[lastExact]?.stats;
  let tokens = exact
    ? exact.usage.prompt_tokens + exact.usage.completion_tokens
    : estimateTokens(conversation.settings.system);
  const from = exact ? lastExact + 1 : 0;
  for (const m of conversation.messages.slice(from)) tokens += estimateContentTokens(contentOf(m));
  const images = conversation.draftImages?.length ?? 0;
  return tokens + estimateTokens(draft) + images * IMAGE_TOKENS_ESTIMATE;
}

/** Which version of `m` is on show (0-based) and how many it has; null while it has one. */
export function versionOf(m: Message): { current: number; count: number } | null {
  const tails = m.versions?.tails;
  if (!tails || tails.length < 2) return null;
  return { current: tails.indexOf(null), count: tails.length };
}

/**
 * Messages from `index` on, as a version keeps them: the first without its `versions` (they
 * belong to the place, not to one version); those after it keep theirs, so versions nested in a
 * kept version come back with it.
 */
function tailFrom(c: Conversation, index: number): Message[] {
  const [first, ...rest] = c.messages.slice(index);
  if (!first) throw new RangeError(`No message at ${index}.`);
  const kept = { ...first };
  delete kept.versions;
  return [kept, ...rest];
}

/**
 * The versions of the message at `index`, with the one on show stored: those it already had, or a
 * new list holding it alone.
 */
function keepShown(c: Conversation, index: number): (Message[] | null)[] {
  const tails = [...(c.messages[index]?.versions?.tails ?? [null])];
  tails[tails.indexOf(null)] = tailFrom(c, index);
  return tails;
}

/**
 * The user edited their message at `index`: what it said and everything after it stay as its
 * previous version, and the conversation goes on from the new text (a new version, on show).
 * The first message's new text names the conversation again.
 */
export function editMessage(c: Conversation, index: number, content: string): void {
  if (c.messages[index]?.role !== 'user') throw new RangeError(`No user message at ${index}.`);
  const tails = [...keepShown(c, index), null];
  const images = c.messages[index]?.images;
  c.messages = [
    ...c.messages.slice(0, index),
    { role: 'user', content, ...(images && { images }), versions: { tails } },
  ];
  if (index === 0) c.title = titleFrom(content);
}

/**
 * The reply at `index` is to be written again: it and everything after it stay as a version, and
 * a new empty reply takes its place (the last version, on show). Returns that reply, for the
 * caller to name its model and stream into.
 */
export function replyAgain(c: Conversation, index: number): Message {
  if (c.messages[index]?.role !== 'assistant') throw new RangeError(`No reply at ${index}.`);
  const reply: Message = {
    role: 'assistant',
    content: '',
    versions: { tails: [...keepShown(c, index), null] },
  };
  c.messages = [...c.messages.slice(0, index), reply];
  return reply;
}

/**
 * Shows version `version` (0-based) of the message at `index`, with what followed it then; the
 * version on show until now is kept, with what follows it now.
 */
export function showVersion(c: Conversation, index: number, version: number): void {
  const versions = c.messages[index]?.versions;
  const chosen = versions?.tails[version];
  if (!versions || chosen === undefined) {
    throw new RangeError(`Message ${index} has no version ${version}.`);
  }
  if (chosen === null) return;
  const tails = keepShown(c, index);
  tails[version] = null;
  const [first, ...rest] = chosen;
  c.messages = [...c.messages.slice(0, index), { ...first!, versions: { tails } }, ...rest];
}

/**
 * Whether a conversation is worth storing: one with a message, or with text the user has typed
 * or images or documents they attached (a reload must not lose them). New chats with neither are not kept, so the list does
 * not fill with empties.
 */
export function worthStoring(c: Conversation): boolean {
  return (
    c.messages.length > 0 ||
    c.draft.trim() !== '' ||
    (c.draftImages?.length ?? 0) > 0 ||
    (c.documents?.length ?? 0) > 0
  );
}
