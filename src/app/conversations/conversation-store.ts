/**
 * @module
 * The conversations in IndexedDB (`hearth-chat`), so that a reload finds every one intact.
 */
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';
import { installName } from '../../protocol/install';
import { withDefaults } from '../shared/chat-settings';
import { worthStoring, type Conversation } from './conversation';

interface Schema extends DBSchema {
  conversations: { key: string; value: Conversation; indexes: { updated: number } };
}

let db: Promise<IDBPDatabase<Schema>> | undefined;

function database(): Promise<IDBPDatabase<Schema>> {
  db ??= openDB<Schema>(installName('hearth-chat'), 1, {
    upgrade(database) {
      database
        .createObjectStore('conversations', { keyPath: 'id' })
        .createIndex('updated', 'updated');
    },
  });
  return db;
}

/**
 * Every conversation, the most recently changed first; settings stored before a field existed
 * (top P, seed, stop, the context limit) get its default.
 */
export async function listConversations(): Promise<Conversation[]> {
  const stored = await (await database()).getAllFromIndex('conversations', 'updated');
  return stored.reverse().map((c) => ({ ...c, settings: withDefaults(c.settings) }));
}

/** Stores a conversation; one with nothing in it is not kept (and goes, if it was). */
export async function saveConversation(conversation: Conversation): Promise<void> {
  if (worthStoring(conversation)) await (await database()).put('conversations', conversation);
  else await (await database()).delete('conversations', conversation.id);
}

export async function deleteConversation(id: string): Promise<void> {
  await (await database()).delete('conversations', id);
}

/** Where the app remembers which conversation was open. */
const OPEN_KEY = 'hearth:open-conversation';
export const openConversationId = () => localStorage.getItem(OPEN_KEY);
export const rememberOpenConversation = (id: string) => localStorage.setItem(OPEN_KEY, id);
