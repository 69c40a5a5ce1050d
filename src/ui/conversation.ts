/**
 * @module
 * Conversations as the chat keeps them, and as they travel: the export file is versioned JSON
 * whose messages are in the OpenAI chat format (the system prompt first, as a system message),
 * with each conversation's title, model and settings beside them. Pure: no DOM, no storage.
 */
import * as v from 'valibot';
import type { Usage } from '../openai/types';

/** What a reply cost and how fast it came, shown under it. */
export interface ReplyStats {
  usage: Usage;
  /** Completion tokens per second, from the first token to the last. */
  tokens_per_s: number | null;
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

/** The settings of one conversation. */
export interface ConversationSettings {
  system: string;
  temperature: number;
  /** `max_completion_tokens`; null for the model's own limit. */
  max_tokens: number | null;
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
  /** Kept at the top of the list. */
  pinned?: boolean;
  /** Out of the list (and out of search), until the user shows the archive. */
  archived?: boolean;
}

export const DEFAULT_SETTINGS: ConversationSettings = {
  system: '',
  temperature: 0.7,
  max_tokens: null,
};

/** A new, empty conversation. */
export function newConversation(model: string, settings = DEFAULT_SETTINGS): Conversation {
  const now = Date.now();
  return {
    id: crypto.randomUUID(),
    title: 'New conversation',
    created: now,
    updated: now,
    model,
    settings: { ...settings },
    messages: [],
    draft: '',
  };
}

/** A title from the first thing the user said. */
export function titleFrom(text: string): string {
  const line = text.trim().split('\n', 1)[0]?.trim() ?? '';
  if (line === '') return 'New conversation';
  return line.length > 48 ? `${line.slice(0, 47).trimEnd()}…` : line;
}

/** The export file's format name and version. */
export const EXPORT_FORMAT = 'hearth.conversations';
export const EXPORT_VERSION = 1;

const usageSchema = v.object({
  prompt_tokens: v.number(),
  completion_tokens: v.number(),
  total_tokens: v.number(),
  estimated_cost: v.number(),
});

/** A message of the export file: OpenAI's shape, with Hearth's extras under their own names. */
const exportedMessage = v.variant('role', [
  v.object({ role: v.literal('system'), content: v.string() }),
  v.object({ role: v.literal('user'), content: v.string() }),
  v.object({
    role: v.literal('assistant'),
    content: v.string(),
    reasoning_content: v.optional(v.string()),
    model: v.optional(v.string()),
    usage: v.optional(usageSchema),
    tokens_per_s: v.optional(v.nullable(v.number())),
    finish_reason: v.optional(v.string()),
    stopped: v.optional(v.boolean()),
    error: v.optional(v.object({ message: v.string(), code: v.nullable(v.string()) })),
  }),
]);

const exportedConversation = v.object({
  title: v.pipe(v.string(), v.maxLength(500)),
  created: v.number(),
  updated: v.number(),
  model: v.string(),
  settings: v.object({
    temperature: v.pipe(v.number(), v.minValue(0), v.maxValue(2)),
    max_tokens: v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1))),
  }),
  messages: v.array(exportedMessage),
});

const exportFile = v.object({
  format: v.literal(EXPORT_FORMAT),
  version: v.literal(EXPORT_VERSION),
  exported: v.string(),
  conversations: v.array(exportedConversation),
});

type ExportedMessage = v.InferOutput<typeof exportedMessage>;

/**
 * The conversations as an export file's object: each as it is shown, the versions of edited and
 * rewritten messages on show and no others (the OpenAI format has no place for them).
 */
export function exportConversations(conversations: readonly Conversation[]) {
  return {
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    exported: new Date().toISOString(),
    conversations: conversations.map((c) => {
      const messages: ExportedMessage[] = [];
      if (c.settings.system) messages.push({ role: 'system', content: c.settings.system });
      for (const m of c.messages) {
        if (m.role === 'user') {
          messages.push({ role: 'user', content: m.content });
          continue;
        }
        messages.push({
          role: 'assistant',
          content: m.content,
          ...(m.reasoning && { reasoning_content: m.reasoning }),
          ...(m.model && { model: m.model }),
          ...(m.stats && { usage: m.stats.usage, tokens_per_s: m.stats.tokens_per_s }),
          ...(m.finish_reason && { finish_reason: m.finish_reason }),
          ...(m.stopped && { stopped: true }),
          ...(m.error && { error: m.error }),
        });
      }
      return {
        title: c.title,
        created: c.created,
        updated: c.updated,
        model: c.model,
        settings: { temperature: c.settings.temperature, max_tokens: c.settings.max_tokens },
        messages,
      };
    }),
  };
}

/**
 * The conversations of an export file, with new ids (an import never overwrites), or an error
 * that says what is wrong with the file. They have one version of each message, as exported.
 */
export function importConversations(text: string): Conversation[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error('This file is not JSON.');
  }
  const parsed = v.safeParse(exportFile, json);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const where = issue.path?.map((p) => String(p.key)).join('.') ?? '';
    if (where === 'format' || where === 'version') {
      throw new Error(`This is not a Hearth export of version ${EXPORT_VERSION}.`);
    }
    throw new Error(`This export is damaged at ${where || 'its top'}: ${issue.message}`);
  }
  return parsed.output.conversations.map((c) => {
    const system = c.messages
      .filter((m) => m.role === 'system')
      .map((m) => m.content)
      .join('\n\n');
    const messages: Message[] = [];
    for (const m of c.messages) {
      if (m.role === 'system') continue;
      if (m.role === 'user') {
        messages.push({ role: 'user', content: m.content });
        continue;
      }
      messages.push({
        role: 'assistant',
        content: m.content,
        ...(m.reasoning_content && { reasoning: m.reasoning_content }),
        ...(m.model && { model: m.model }),
        ...(m.usage && { stats: { usage: m.usage, tokens_per_s: m.tokens_per_s ?? null } }),
        ...(m.finish_reason && { finish_reason: m.finish_reason }),
        ...(m.stopped && { stopped: true }),
        ...(m.error && { error: m.error }),
      });
    }
    return {
      id: crypto.randomUUID(),
      title: c.title,
      created: c.created,
      updated: c.updated,
      model: c.model,
      settings: { system, temperature: c.settings.temperature, max_tokens: c.settings.max_tokens },
      messages,
      draft: '',
    };
  });
}

/**
 * What the model is sent: the system prompt, then the conversation up to `upTo` (exclusive),
 * leaving out replies that failed with nothing in them.
 */
export function outgoingMessages(conversation: Conversation, upTo = conversation.messages.length) {
  const out: { role: 'system' | 'user' | 'assistant'; content: string }[] = [];
  if (conversation.settings.system.trim()) {
    out.push({ role: 'system', content: conversation.settings.system });
  }
  for (const m of conversation.messages.slice(0, upTo)) {
    if (m.role === 'assistant' && m.content === '') continue;
    out.push({ role: m.role, content: m.content });
  }
  return out;
}

/** A rough token count (four characters a token), for the context meter before the API says. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * The tokens the next request will take: the last reply's exact count where there is one, plus an
 * estimate of what came after it and of the draft.
 */
export function contextTokens(conversation: Conversation, draft = ''): number {
  let lastExact = -1;
  for (let i = conversation.messages.length - 1; i >= 0; i -= 1) {
    if (conversation.messages[i]?.stats) {
      lastExact = i;
      break;
    }
  }
  const exact = conversation.messages[lastExact]?.stats;
  let tokens = exact
    ? exact.usage.prompt_tokens + exact.usage.completion_tokens
    : estimateTokens(conversation.settings.system);
  const from = exact ? lastExact + 1 : 0;
  for (const m of conversation.messages.slice(from)) tokens += estimateTokens(m.content);
  return tokens + estimateTokens(draft);
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
  c.messages = [...c.messages.slice(0, index), { role: 'user', content, versions: { tails } }];
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
