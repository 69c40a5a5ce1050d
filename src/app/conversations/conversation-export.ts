/**
 * @module
 * Conversations as they travel: the export file is versioned JSON whose messages are in the
 * OpenAI chat format (the system prompt first, as a system message), with each conversation's id,
 * title, model and settings beside them, and Hearth's extras under their own names — among them
 * the earlier versions of edited and regenerated messages, so that they come back on import,
 * and the passages replies cite. A conversation's documents travel by name only (`documents`,
 * with `documents_note` saying so): an import brings it back without them, and says so.
 * An import merges by id. Pure: no DOM, no storage.
 */
import * as v from 'valibot';
import { parseSampling } from '../shared/chat-settings';
import { contentOf, type Conversation, type Message, type Source } from './conversation';

/** The export file's format name and version. */
export const EXPORT_FORMAT = 'hearth.conversations';
export const EXPORT_VERSION = 1;

const usageSchema = v.object({
  prompt_tokens: v.number(),
  completion_tokens: v.number(),
  total_tokens: v.number(),
  estimated_cost: v.number(),
});

/** The versions of a message as the file holds them: as `Versions.tails`, in exported messages. */
type ExportedTails = (ExportedMessage[] | null)[];

type ExportedMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | ExportedPart[]; versions?: ExportedTails | undefined }
  | {
      role: 'assistant';
      content: string;
      reasoning_content?: string | undefined;
      model?: string | undefined;
      usage?: v.InferOutput<typeof usageSchema> | undefined;
      tokens_per_s?: number | null | undefined;
      finish_reason?: string | undefined;
      stopped?: boolean | undefined;
      error?: { message: string; code: string | null } | undefined;
      sources?: Source[] | undefined;
      versions?: ExportedTails | undefined;
    };

/** A part of a user message with images, as OpenAI's messages carry them. */
type ExportedPart =
  { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

/** A user message's content: its text, or its text and images as parts (an image a data URL). */
const userContent = v.union([
  v.string(),
  v.array(
    v.variant('type', [
      v.object({ type: v.literal('text'), text: v.string() }),
      v.object({
        type: v.literal('image_url'),
        image_url: v.object({ url: v.pipe(v.string(), v.startsWith('data:image/')) }),
      }),
    ]),
  ),
]);

/** A passage a reply cites: the text travels, so that its citations open after an import. */
const sourceSchema = v.object({
  file_id: v.string(),
  filename: v.string(),
  text: v.string(),
  page: v.optional(v.number()),
  heading: v.optional(v.string()),
});

/** What the file says of a conversation's documents: their names, not the files. */
export const DOCUMENTS_NOTE =
  'The documents are listed by name: the files and their index are not in this export. On import the conversation comes back without them; attach them again to ask about them.';

/** Versions hold messages that may have versions: the schema refers to itself. */
const tailsSchema = v.optional(
  v.pipe(
    v.array(v.nullable(v.array(v.lazy((): v.GenericSchema<ExportedMessage> => exportedMessage)))),
    v.check((tails) => tails.filter((t) => t === null).length === 1, 'one version must be on show'),
  ),
);

/** A message of the export file: OpenAI's shape, with Hearth's extras under their own names. */
const exportedMessage: v.GenericSchema<ExportedMessage> = v.variant('role', [
  v.object({ role: v.literal('system'), content: v.string() }),
  v.object({ role: v.literal('user'), content: userContent, versions: tailsSchema }),
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
    sources: v.optional(v.array(sourceSchema)),
    versions: tailsSchema,
  }),
]);

const exportedConversation = v.object({
  /** Absent from files of before ids travelled: such a conversation gets a new one. */
  id: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(200))),
  title: v.pipe(v.string(), v.maxLength(500)),
  created: v.number(),
  updated: v.number(),
  model: v.string(),
  // Checked field by field on import (`parseSampling`): files of before top_p, seed, stop and
  // the context limit travelled have none of them.
  settings: v.looseObject({
    temperature: v.pipe(v.number(), v.minValue(0), v.maxValue(2)),
    max_tokens: v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1))),
  }),
  messages: v.array(exportedMessage),
  documents: v.optional(
    v.array(v.looseObject({ filename: v.pipe(v.string(), v.maxLength(1000)) })),
  ),
});

const exportFile = v.object({
  format: v.literal(EXPORT_FORMAT),
  version: v.literal(EXPORT_VERSION),
  exported: v.string(),
  conversations: v.array(exportedConversation),
});

function exportMessage(m: Message): ExportedMessage {
  const versions = m.versions && {
    versions: m.versions.tails.map((tail) => tail && tail.map(exportMessage)),
  };
  if (m.role === 'user') return { role: 'user', content: contentOf(m), ...versions };
  return {
    role: 'assistant',
    content: m.content,
    ...(m.reasoning && { reasoning_content: m.reasoning }),
    ...(m.model && { model: m.model }),
    ...(m.stats && { usage: m.stats.usage, tokens_per_s: m.stats.tokens_per_s }),
    ...(m.finish_reason && { finish_reason: m.finish_reason }),
    ...(m.stopped && { stopped: true }),
    ...(m.error && { error: m.error }),
    ...(m.sources && { sources: m.sources }),
    ...versions,
  };
}

/** A user message's content as the chat keeps it: the text parts joined, the images apart. */
function userMessage(content: string | ExportedPart[]): Pick<Message, 'content' | 'images'> {
  if (typeof content === 'string') return { content };
  const text = content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');
  const images = content.flatMap((p) => (p.type === 'image_url' ? [p.image_url.url] : []));
  return { content: text, ...(images.length > 0 && { images }) };
}

/** A message of the file as the chat keeps it; system messages are the caller's. */
function importMessage(m: Exclude<ExportedMessage, { role: 'system' }>): Message {
  const versions = m.versions && {
    versions: {
      tails: m.versions.map(
        (tail) => tail && tail.flatMap((t) => (t.role === 'system' ? [] : [importMessage(t)])),
      ),
    },
  };
  if (m.role === 'user') return { role: 'user', ...userMessage(m.content), ...versions };
  return {
    role: 'assistant',
    content: m.content,
    ...(m.reasoning_content && { reasoning: m.reasoning_content }),
    ...(m.model && { model: m.model }),
    ...(m.usage && { stats: { usage: m.usage, tokens_per_s: m.tokens_per_s ?? null } }),
    ...(m.finish_reason && { finish_reason: m.finish_reason }),
    ...(m.stopped && { stopped: true }),
    ...(m.error && { error: m.error }),
    ...(m.sources && { sources: m.sources }),
    ...versions,
  };
}

/**
 * The conversations as an export file's object: each with its id, and its messages as shown,
 * the other versions of edited and regenerated messages under `versions` (the OpenAI format has
 * no place for them; a reader that knows nothing of them reads the conversation as it was shown).
 */
export function exportConversations(conversations: readonly Conversation[]) {
  return {
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    exported: new Date().toISOString(),
    conversations: conversations.map((c) => {
      const messages: ExportedMessage[] = [];
      if (c.settings.system) messages.push({ role: 'system', content: c.settings.system });
      messages.push(...c.messages.map(exportMessage));
      return {
        id: c.id,
        title: c.title,
        created: c.created,
        updated: c.updated,
        model: c.model,
        settings: parseSampling(c.settings),
        messages,
        ...(c.documents?.length && {
          documents: c.documents.map(({ filename, bytes }) => ({ filename, bytes })),
          documents_note: DOCUMENTS_NOTE,
        }),
      };
    }),
  };
}

/**
 * The conversations of an export file, with their ids (a new one where the file has none), or an
 * error that says what is wrong with the file. Their versions are as exported.
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
    return {
      id: c.id ?? crypto.randomUUID(),
      title: c.title,
      created: c.created,
      updated: c.updated,
      model: c.model,
      settings: { system, ...parseSampling(c.settings) },
      messages: c.messages.flatMap((m) => (m.role === 'system' ? [] : [importMessage(m)])),
      draft: '',
      ...(c.documents?.length && { documentsLeftOut: c.documents.map((d) => d.filename) }),
    };
  });
}

/** What an import does: the conversations to store, and how many of each kind. */
export interface Merge {
  save: Conversation[];
  /** New here. */
  added: number;
  /** Here already, and the file's was changed later: the file's replaces it. */
  updated: number;
  /** Here already, changed as late or later here: kept as it is. */
  skipped: number;
}

/**
 * Merges imported conversations into those here, by id: a new id is added; a known one replaces
 * the one here only where the file's was changed later (keeping what is this device's own: the
 * draft, pinned, archived, documents), so importing the same file twice changes nothing the second time.
 */
export function mergeImported(
  here: readonly Conversation[],
  imported: readonly Conversation[],
): Merge {
  const byId = new Map(here.map((c) => [c.id, c]));
  const merge: Merge = { save: [], added: 0, updated: 0, skipped: 0 };
  for (const c of imported) {
    const mine = byId.get(c.id);
    if (!mine) {
      merge.added += 1;
      merge.save.push(c);
    } else if (c.updated > mine.updated) {
      merge.updated += 1;
      merge.save.push({
        ...c,
        draft: mine.draft,
        ...(mine.pinned && { pinned: true }),
        ...(mine.archived && { archived: true }),
        // Its documents here stay with it: the file's names are the same documents.
        ...(mine.documents && {
          documents: mine.documents,
          vectorStoreId: mine.vectorStoreId,
          documentsLeftOut: undefined,
        }),
      });
    } else {
      merge.skipped += 1;
    }
    byId.set(c.id, c);
  }
  return merge;
}

const count = (n: number) => `${n} conversation${n === 1 ? '' : 's'}`;
const were = (n: number) => `${n} already here ${n === 1 ? 'was' : 'were'}`;

/** What an import did, in a sentence or three: "Imported 3 conversations. 2 already here were skipped (…)". */
export function mergeSummary({ added, updated, skipped }: Merge): string {
  const parts = [`Imported ${count(added)}.`];
  if (updated > 0) parts.push(`${were(updated)} updated (newer in the file).`);
  if (skipped > 0) parts.push(`${were(skipped)} skipped (the same or older in the file).`);
  return parts.join(' ');
}
