/**
 * @module
 * The conversations the shell holds for its views: the list beside the chat and the one open in
 * it. Opening, starting, renaming, pinning, archiving, deleting, exporting and importing them,
 * with the store (conversations/) kept in step; which one was open survives a reload. What the
 * shell does around that — the view to show, the composer's focus, a notice — it is asked for.
 */
import type { ReactiveControllerHost } from 'lit';
import { defaultModel } from '../chat/chat-models';
import {
  newConversation,
  worthStoring,
  type Conversation,
  type ConversationSettings,
} from '../conversations/conversation';
import {
  exportConversations,
  importConversations,
  mergeImported,
  mergeSummary,
} from '../conversations/conversation-export';
import { conversationMarkdown, markdownFileName } from '../conversations/conversation-markdown';
import {
  deleteConversation,
  listConversations,
  openConversationId,
  rememberOpenConversation,
  saveConversation,
} from '../conversations/conversation-store';
import type { CatalogModel } from '../shared/api-client';
import { newSettings, preferences } from '../shared/preferences';
import { download } from './download';

/** A conversation to start from another's (the chat's "new conversation from here"). */
export type ConversationSeed = { model: string; settings: ConversationSettings; draft: string };

/** What the shell does for the conversations. */
export interface ConversationsShell {
  /** The models offered on this device: a new conversation gets the default among them. */
  offered(): CatalogModel[];
  /** The user picked a conversation: the chat shows it. */
  showChat(): void;
  /** A conversation the user started: focus in its composer. */
  focusComposer(): Promise<void>;
  /** Says something (an import's outcome); an error stays until dismissed. */
  say(text: string, error?: boolean): void;
}

/** Holds the conversations and the open one, and updates the element on each change. */
export class ConversationsController {
  /** Every stored conversation, most recently changed first, as the store lists them. */
  list: Conversation[] = [];
  /** The conversation the chat shows. */
  active: Conversation | null = null;
  /** Counts the changes of the list or the open conversation (the document's title follows them). */
  changes = 0;

  constructor(
    private readonly host: ReactiveControllerHost,
    private readonly shell: ConversationsShell,
  ) {}

  #setList(list: Conversation[]): void {
    this.list = list;
    this.changes++;
    this.host.requestUpdate();
  }

  #setActive(conversation: Conversation): void {
    if (conversation === this.active) return;
    this.active = conversation;
    this.changes++;
    this.host.requestUpdate();
  }

  /** Reads the stored conversations and opens the one open before, or the latest, or a new one. */
  async load(): Promise<void> {
    this.#setList(await listConversations());
    const visible = this.list.filter((c) => !c.archived);
    const remembered = this.list.find((c) => c.id === openConversationId());
    const first = remembered ?? visible[0];
    if (first) this.open(first, false);
    else await this.create(undefined, false);
  }

  /**
   * Opens a conversation: the user picked it (the chat shows it, the phone's drawer closes), or
   * the app did (at load, or after the open one was deleted or archived: the view and the drawer
   * stay as they are, so a reload keeps its view and focus stays in the list).
   */
  open(conversation: Conversation, picked = true): void {
    this.#setActive(conversation);
    rememberOpenConversation(conversation.id);
    if (picked) this.shell.showChat();
  }

  /**
   * A vector store deleted in Documents is no conversation's any more: their next messages
   * search nothing (rather than name a store the API no longer has), and their next document
   * makes a new one.
   */
  async forgetStore(storeId: string): Promise<void> {
    for (const c of this.list) {
      if (c.vectorStoreId !== storeId) continue;
      delete c.vectorStoreId;
      await saveConversation(c);
    }
    this.changes++;
    this.host.requestUpdate();
  }

  /** Opens the conversation `id` as the user picked it. */
  pick(id: string): void {
    const c = this.list.find((x) => x.id === id);
    if (c) this.open(c);
  }

  /** Starts a conversation; `picked`: the user asked for it (it opens, with focus in the composer). */
  async create(seed?: ConversationSeed, picked = true): Promise<void> {
    const prefs = preferences();
    const c = newConversation(
      seed?.model ?? defaultModel(this.shell.offered(), prefs.defaultModel),
      seed?.settings ?? newSettings(prefs),
    );
    if (seed) c.draft = seed.draft;
    // Opened before anything is written: what the user types from the click on goes to the new
    // conversation, however late a busy disk answers.
    this.open(c, picked);
    const focused = picked ? this.shell.focusComposer() : Promise.resolve();
    // Stored (and listed) once it has something in it: New chat twice leaves no empties.
    if (worthStoring(c)) {
      this.#setList([c, ...this.list]);
      await saveConversation(c);
    }
    await focused;
  }

  async change(id: string, patch: Partial<Pick<Conversation, 'title' | 'pinned' | 'archived'>>) {
    const c = this.list.find((x) => x.id === id);
    if (!c) return;
    Object.assign(c, patch);
    // Pinning or archiving is not a change of the conversation: it keeps its place in time.
    if (patch.title !== undefined) c.updated = Date.now();
    await saveConversation(c);
    this.#setList([...this.list]);
    if (patch.archived && this.active?.id === id) {
      const next = this.list.find((x) => !x.archived);
      if (next) this.open(next, false);
      else await this.create(undefined, false);
    }
  }

  async remove(id: string): Promise<void> {
    await deleteConversation(id);
    this.#setList(this.list.filter((c) => c.id !== id));
    if (this.active?.id === id) {
      const next = this.list.find((c) => !c.archived);
      // The list moves focus to its next row itself.
      if (next) this.open(next, false);
      else await this.create(undefined, false);
    }
  }

  export(): void {
    const file = JSON.stringify(exportConversations(this.list), null, 2);
    const date = new Date().toISOString().slice(0, 10);
    download(`hearth-conversations-${date}.json`, file, 'application/json');
  }

  exportMarkdown(id: string): void {
    const c = this.list.find((x) => x.id === id);
    if (c) download(markdownFileName(c.title), conversationMarkdown(c), 'text/markdown');
  }

  async import(file: File): Promise<void> {
    try {
      const merge = mergeImported(this.list, importConversations(await file.text()));
      for (const c of merge.save) await saveConversation(c);
      this.#setList(await listConversations());
      // The open conversation, if the file updated it, shows what the file holds.
      const open = this.list.find((c) => c.id === this.active?.id);
      if (open && merge.save.some((c) => c.id === open.id)) this.open(open, false);
      this.shell.say(mergeSummary(merge));
    } catch (err) {
      this.shell.say(
        `Nothing was imported: ${err instanceof Error ? err.message : String(err)}`,
        true,
      );
    }
  }

  /** The chat changed `c` (a message, its title, its settings). */
  changed(c: Conversation): void {
    // A conversation with nothing in it is not stored, nor listed.
    if (!worthStoring(c)) return;
    // Most recently changed first, as the store lists them.
    this.#setList([c, ...this.list.filter((x) => x.id !== c.id)]);
  }
}
